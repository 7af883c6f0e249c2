//===- CompileCache.cpp - libraries cached by what made them --------------===//

#include "tandem/Lowering/CompileCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

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
  std::string reportPath = (library + ".report").str();
  if (llvm::sys::fs::exists(library)) {
    CompiledLibrary found{std::string(library), /*cached=*/true, ""};
    if (auto buffer = llvm::MemoryBuffer::getFile(reportPath))
      found.report = (*buffer)->getBuffer().trim().str();
    return found;
  }

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
  // equal files over them. The report first, so that the library's
  // presence promises it.
  if (!entry.reportText.empty()) {
    llvm::Expected<std::string> report = entry.temporary(".report.part");
    if (!report)
      return report.takeError();
    if (llvm::Error error = writeTextFile(*report, entry.reportText))
      return std::move(error);
    if (std::error_code ec = llvm::sys::fs::rename(*report, reportPath))
      return llvm::createStringError("cannot move the report to '" +
                                     reportPath + "': " + ec.message());
  }
  if (std::error_code ec = llvm::sys::fs::rename(entry.outputPath, library))
    return llvm::createStringError("cannot move the library to '" + library +
                                   "': " + ec.message());
  return CompiledLibrary{std::string(library), /*cached=*/false,
                         entry.reportText};
}

llvm::Expected<std::string>
tandem::lowering::findTool(const std::string &program, llvm::StringRef what,
                           llvm::StringRef variable) {
  if (!llvm::sys::path::is_absolute(program) &&
      !llvm::StringRef(program).contains('/')) {
    llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(program);
    if (!found)
      return llvm::createStringError(
          what + " '" + program + "' not found in PATH (set " + variable + ")");
    return *found;
  }
  if (!llvm::sys::fs::can_execute(program))
    return llvm::createStringError(what + " '" + program +
                                   "' not found or not executable (set " +
                                   variable + ")");
  return program;
}

llvm::Error tandem::lowering::writeTextFile(llvm::StringRef path,
                                            llvm::StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError("cannot write '" + path +
                                   "': " + ec.message());
  os << text;
  os.close();
  if (os.has_error())
    return llvm::createStringError("cannot write '" + path + "'");
  return llvm::Error::success();
}

llvm::Error tandem::lowering::runCompiler(llvm::ArrayRef<std::string> args,
                                          llvm::StringRef language,
                                          CacheBuild &build,
                                          std::string *output) {
  llvm::Expected<std::string> errors = build.temporary(".stderr");
  if (!errors)
    return errors.takeError();
  std::vector<llvm::StringRef> argRefs(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(*errors), llvm::StringRef(*errors)};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(args[0], argRefs, std::nullopt,
                                         redirects, /*SecondsToWait=*/0,
                                         /*MemoryLimit=*/0, &message);
  std::string text;
  if (auto buffer = llvm::MemoryBuffer::getFile(*errors))
    text = (*buffer)->getBuffer().str();
  if (status == 0) {
    if (output)
      *output = std::move(text);
    return llvm::Error::success();
  }
  return llvm::createStringError(
      language + " compilation failed (exit status " + std::to_string(status) +
      (message.empty() ? "" : ", " + message) +
      ")\ncommand: " + llvm::join(args, " ") + "\n" + text);
}
