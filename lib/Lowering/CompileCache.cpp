//===- CompileCache.cpp - libraries cached by what made them --------------===//

#include "tandem/Lowering/CompileCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"

using namespace tandem::lowering;

CacheBuild::~CacheBuild() {
  for (const std::string &path : temporaries)
    llvm::sys::fs::remove(path);
}

llvm::Expected<std::string> CacheBuild::temporary(llvm::StringRef suffix) {
  llvm::SmallString<256> model(cacheDir);
  llvm::sys::path::append(model, "tandem-" + key + "-%%%%%%%%" + suffix);
  llvm::SmallString<256> path;
  llvm::sys::fs::createUniquePath(model, path, /*MakeAbsolute=*/false);
  temporaries.push_back(std::string(path));
  return std::string(path);
}

std::string tandem::lowering::defaultCacheDir(llvm::StringRef variable,
                                              llvm::StringRef name) {
  if (std::optional<std::string> value = llvm::sys::Process::GetEnv(variable))
    return *value;
  llvm::SmallString<128> dir;
  llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, dir);
  llvm::sys::path::append(dir, name);
  return std::string(dir);
}

llvm::Expected<CompiledLibrary> tandem::lowering::buildCached(
    llvm::StringRef cacheDir, llvm::ArrayRef<std::string> keyParts,
    llvm::StringRef extension,
    llvm::function_ref<llvm::Error(CacheBuild &)> build) {
  llvm::SHA256 hasher;
  for (size_t i = 0; i < keyParts.size(); ++i) {
    if (i)
      hasher.update(llvm::StringRef("\0", 1));
    hasher.update(keyParts[i]);
  }
  std::string key =
      llvm::toHex(hasher.final(), /*LowerCase=*/true).substr(0, 32);

  llvm::SmallString<256> library(cacheDir);
  llvm::sys::path::append(library, "tandem-" + key + extension);
  if (llvm::sys::fs::exists(library))
    return CompiledLibrary{std::string(library), /*cached=*/true};

  if (std::error_code ec = llvm::sys::fs::create_directories(cacheDir))
    return llvm::createStringError("cannot create the compile cache '" +
                                   cacheDir + "': " + ec.message());
  CacheBuild entry(cacheDir.str(), key);
  llvm::Expected<std::string> partial =
      entry.temporary(extension.str() + ".part");
  if (!partial)
    return partial.takeError();
  entry.outputPath = *partial;
  if (llvm::Error error = build(entry))
    return std::move(error);
  // Atomic on one filesystem: a concurrent build of the same key renames
  // an equal file over it.
  if (std::error_code ec = llvm::sys::fs::rename(entry.outputPath, library))
    return llvm::createStringError("cannot move the library to '" + library +
                                   "': " + ec.message());
  return CompiledLibrary{std::string(library), /*cached=*/false};
}
