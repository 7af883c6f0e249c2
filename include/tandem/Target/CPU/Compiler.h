//===- Compiler.h - compiling emitted C++ into a shared library -*- C++ -*-===//
//
// Runs the system C++ compiler on emitted source and caches the result: the
// library is named by a hash of the source, the compiler and its flags, so
// compiling unchanged source again (a second identical rank, a rerun) costs
// a file lookup.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TARGET_CPU_COMPILER_H
#define TANDEM_TARGET_CPU_COMPILER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tandem::cpu {

struct CompileOptions {
  /// The compiler: a path or a name looked up in PATH. Empty: $TANDEM_CXX,
  /// or "c++".
  std::string compiler;
  /// The cache directory. Empty: $TANDEM_CPU_CACHE, or
  /// <system temp>/tandem-cpu-cache.
  std::string cacheDir;
  /// The CPU the library is for, as -march=<arch>. Empty: $TANDEM_CPU_ARCH,
  /// or "native" (the machine running the compiler; the library records
  /// the instruction-set extensions it uses in `tandem_cpu_features` and
  /// the runtime refuses a CPU lacking one).
  std::string arch;
  /// Flags added after the defaults.
  std::vector<std::string> extraFlags;
};

/// What a compilation produced.
struct CompiledLibrary {
  std::string path;
  /// True when the library came from the cache without running the compiler.
  bool cached = false;
};

/// The flags every emitted library is compiled with, before -march and
/// extraFlags.
std::vector<std::string> defaultCompileFlags();

/// `arch`, or when empty $TANDEM_CPU_ARCH, or "native".
std::string resolveArch(llvm::StringRef arch);

/// The instruction-set extensions a library compiled for `arch` (a -march
/// value; "native" is this machine's CPU) may use, among those the runtime
/// checks (tandem::runtime::knownCpuFeatures), by LLVM's table of x86 CPUs.
/// Empty for a CPU LLVM does not know: the library's own
/// tandem_cpu_features, which the runtime also checks, then stands alone.
std::vector<std::string> archFeatures(llvm::StringRef arch);

/// Compiles `source` into a shared library (or finds it in the cache) and
/// returns its path. Fails with the compiler's stderr when compilation
/// fails, or with a message naming the compiler when it cannot be found.
llvm::Expected<CompiledLibrary> compileSource(llvm::StringRef source,
                                              const CompileOptions &options);

} // namespace tandem::cpu

#endif // TANDEM_TARGET_CPU_COMPILER_H
