//===- NativeCompile.cpp - tandemc's native phase -------------------------===//

#include "NativeCompile.h"

#include "tandem/Lowering/RankLowering.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include <algorithm>
#include <optional>

using namespace mlir;
using namespace tandem::tandemc;

namespace {

/// One distinct rank source and what compiling it gave.
struct Library {
  std::string source;
  /// The first rank with this source (errors name it).
  int64_t firstRank = 0;
  std::optional<tandem::lowering::CompiledLibrary> compiled;
  std::string error;
};

/// The compiler's message, with a hint when the link failed for want of
/// OpenBLAS: the generated GEMMs call it, and the linker's "cannot find
/// -lopenblas" (GNU ld) or "unable to find library -lopenblas" (lld) alone
/// does not say which package provides it.
std::string explain(std::string message) {
  StringRef text = message;
  if (text.contains("cannot find -lopenblas") ||
      text.contains("unable to find library -lopenblas"))
    message += "\nnote: the generated code links OpenBLAS (-lopenblas): on "
               "Debian, install libopenblas-openmp-dev (scripts/setup.sh "
               "does)";
  return message;
}

} // namespace

LogicalResult tandem::tandemc::compileNative(ModuleOp module,
                                             const NativeOptions &options,
                                             TimingScope &phase) {
  tandem::lowering::TargetBackend &backend = *options.backend;
  std::string language = backend.sourceLanguage().str();
  tandem::lowering::LowerRanksOptions lowerOptions;
  lowerOptions.outputDir = options.outputDir;
  lowerOptions.compileLibraries = false;
  lowerOptions.diagnosticPrefix = options.toolName;
  FailureOr<std::vector<tandem::lowering::LoweredRank>> ranks;
  {
    TimingScope emit = phase.nest("emit " + language);
    ranks = tandem::lowering::lowerRanks(module, backend, lowerOptions);
  }
  if (failed(ranks))
    return failure();

  TimingScope compile = phase.nest(language + " compile");
  // Ranks whose sources are equal share one compilation: the cache would
  // find the first one's library anyway, but only once it exists, and the
  // compilations below run at the same time.
  std::vector<Library> libraries;
  std::vector<size_t> libraryOf;
  llvm::StringMap<size_t> bySource;
  for (const tandem::lowering::LoweredRank &rank : *ranks) {
    auto buffer = llvm::MemoryBuffer::getFile(rank.sourcePath);
    if (!buffer)
      return module.emitError()
             << options.toolName << ": cannot read '" << rank.sourcePath
             << "': " << buffer.getError().message();
    StringRef source = (*buffer)->getBuffer();
    auto [it, inserted] = bySource.try_emplace(source, libraries.size());
    if (inserted)
      libraries.push_back({source.str(), rank.rank, std::nullopt, ""});
    libraryOf.push_back(it->second);
  }

  unsigned jobs = options.jobs
                      ? options.jobs
                      : llvm::hardware_concurrency().compute_thread_count();
  jobs = std::max(1u, std::min<unsigned>(jobs, libraries.size()));
  {
    llvm::StdThreadPool pool(llvm::hardware_concurrency(jobs));
    for (Library &library : libraries)
      pool.async([&library, &backend] {
        llvm::Expected<tandem::lowering::CompiledLibrary> compiled =
            backend.compile(library.source);
        if (compiled)
          library.compiled = *compiled;
        else
          library.error = llvm::toString(compiled.takeError());
      });
    pool.wait();
  }
  for (const Library &library : libraries)
    if (!library.compiled)
      return module.emitError()
             << options.toolName << ": rank " << library.firstRank << ": "
             << explain(library.error);

  unsigned compiled = 0, cached = 0;
  for (const Library &library : libraries)
    ++(library.compiled->cached ? cached : compiled);
  for (auto [rank, index] : llvm::zip_equal(*ranks, libraryOf)) {
    const Library &library = libraries[index];
    if (std::error_code ec =
            llvm::sys::fs::copy_file(library.compiled->path, rank.libraryPath))
      return module.emitError()
             << options.toolName << ": cannot copy '" << library.compiled->path
             << "' to '" << rank.libraryPath << "': " << ec.message();
    {
      InFlightDiagnostic remark = emitRemark(module.getLoc())
                                  << options.toolName << ": rank " << rank.rank
                                  << ": " << rank.libraryPath << ", "
                                  << rank.manifestPath;
      if (library.firstRank != rank.rank)
        remark << " (same source as rank " << library.firstRank << ")";
      else if (library.compiled->cached)
        remark << " (cached library)";
    }
    // What the compiler said of the library's code (nvcc: registers and
    // spills), once per library.
    if (library.firstRank == rank.rank && !library.compiled->report.empty())
      emitRemark(module.getLoc())
          << options.toolName << ": rank " << rank.rank << ": " << language
          << " compiler: " << library.compiled->report;
  }
  emitRemark(module.getLoc())
      << options.toolName << ": " << language << ": " << ranks->size()
      << " ranks, " << libraries.size() << " libraries: " << compiled
      << " compiled, " << cached << " cached";
  return success();
}
