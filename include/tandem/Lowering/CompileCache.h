//===- CompileCache.h - libraries cached by what made them ------*- C++ -*-===//
//
// Compiling a rank's source is the slow part of lowering; a second
// identical rank or a rerun should cost a file lookup. A library is named
// by a hash of everything that made it (the source, the compiler, its
// flags, the machine where that matters), and written under a unique
// temporary name and renamed into place, so concurrent builds of the same
// source never see a partial file. Target-neutral: each target says what
// goes into the key and how to build.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LOWERING_COMPILECACHE_H
#define TANDEM_LOWERING_COMPILECACHE_H

#include "tandem/Lowering/TargetBackend.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tandem::lowering {

/// What a build gets: where to write the library, and temporary files in
/// the cache directory that are removed when the build ends.
class CacheBuild {
public:
  /// The path the build must write the library to.
  const std::string &output() const { return outputPath; }
  /// A new unique path ending in `suffix` for a temporary file.
  llvm::Expected<std::string> temporary(llvm::StringRef suffix);
  /// What the compiler said of the library (CompiledLibrary::report): kept
  /// in the cache beside it, in place before the library is, so that a hit
  /// always finds it.
  void setReport(std::string text) { reportText = std::move(text); }

private:
  friend llvm::Expected<CompiledLibrary>
      buildCached(llvm::StringRef, llvm::ArrayRef<std::string>, llvm::StringRef,
                  llvm::function_ref<llvm::Error(CacheBuild &)>);
  CacheBuild(std::string cacheDir, std::string key)
      : cacheDir(std::move(cacheDir)), key(std::move(key)) {}
  ~CacheBuild();

  std::string cacheDir, key, outputPath, reportText;
  std::vector<std::string> temporaries;
};

/// `$<variable>` when set, else <system temp>/<name>.
std::string defaultCacheDir(llvm::StringRef variable, llvm::StringRef name);

/// The library for `keyParts` (hashed with SHA-256, parts separated by a
/// zero byte) in `cacheDir`, named tandem-<hash><extension>: found, or made
/// by `build` and moved into place; its report (CacheBuild::setReport) is
/// tandem-<hash><extension>.report.
llvm::Expected<CompiledLibrary>
buildCached(llvm::StringRef cacheDir, llvm::ArrayRef<std::string> keyParts,
            llvm::StringRef extension,
            llvm::function_ref<llvm::Error(CacheBuild &)> build);

/// `program` as a path to run: looked up in PATH when it is a bare name.
/// Errors name it as `what` ("C++ compiler") and the variable that chooses
/// it: "C++ compiler 'c++' not found in PATH (set TANDEM_CXX)".
llvm::Expected<std::string> findTool(const std::string &program,
                                     llvm::StringRef what,
                                     llvm::StringRef variable);

/// Runs `args` (args[0] the program) for `build`, with its output in a
/// temporary file; a non-zero exit is an error with the status, the command
/// line and the output: "<language> compilation failed (exit status 1)".
/// On success the output goes to `output` when given.
llvm::Error runCompiler(llvm::ArrayRef<std::string> args,
                        llvm::StringRef language, CacheBuild &build,
                        std::string *output = nullptr);

/// Writes `text` to `path`.
llvm::Error writeTextFile(llvm::StringRef path, llvm::StringRef text);

} // namespace tandem::lowering

#endif // TANDEM_LOWERING_COMPILECACHE_H
