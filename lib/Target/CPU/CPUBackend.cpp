//===- CPUBackend.cpp - the cpu target ------------------------------------===//

#include "tandem/Target/CPU/CPUBackend.h"

#include "tandem/Runtime/MemoryPlan.h"
#include "tandem/Target/CPU/CppEmitter.h"

using namespace tandem;
using namespace tandem::lowering;

namespace {

class CPUBackend : public TargetBackend {
public:
  explicit CPUBackend(cpu::CompileOptions options)
      : compileOptions(std::move(options)) {}

  llvm::StringRef name() const override { return "cpu"; }
  llvm::StringRef sourceLanguage() const override { return "C++"; }

  std::vector<TargetOption> options() const override {
    return {{"cpu-arch", "The CPU the libraries are for, as -march= "
                         "(default: $TANDEM_CPU_ARCH, else native)"}};
  }

  llvm::Error configure(const TargetOptionValues &values) override {
    if (llvm::Error error = TargetBackend::configure(values))
      return error;
    auto arch = values.find("cpu-arch");
    if (arch != values.end())
      compileOptions.arch = arch->second;
    return llvm::Error::success();
  }

  runtime::TargetInfo targetInfo() const override {
    runtime::TargetInfo info;
    info.kind = runtime::TargetKind::Cpu;
    info.arch = cpu::resolveArch(compileOptions.arch);
    info.features = cpu::archFeatures(info.arch);
    // The ABI's scratch alignment, a cache line.
    info.alignment = runtime::kArenaAlignment;
    return info;
  }

  runtime::MemorySpace memorySpace() const override {
    return runtime::MemorySpace::Host;
  }

  // Each microbatch's fragment writes its own slot; the runtime adds them
  // in microbatch order, as the evaluator does.
  runtime::Accumulation accumulation() const override {
    return runtime::Accumulation::Runtime;
  }

  std::vector<std::string> supportedOps() const override {
    return cpu::supportedOps();
  }

  llvm::StringRef sourceExtension() const override { return ".cpp"; }
  llvm::StringRef libraryExtension() const override { return ".so"; }

  mlir::FailureOr<EmittedSource>
  emit(llvm::ArrayRef<mlir::Operation *> functions) override {
    FusionPolicy policy = fusionPolicy();
    cpu::EmitOptions options;
    options.fuseReductions = policy.fuseReductions;
    options.fuseGemmEpilogues = policy.fuseGemmEpilogues;
    options.mergeGroups = policy.mergeGroups;
    mlir::FailureOr<cpu::EmitResult> result = cpu::emitCpp(functions, options);
    if (mlir::failed(result))
      return mlir::failure();
    EmittedSource source;
    source.text = std::move(result->source);
    for (const cpu::EmittedFunction &function : result->functions)
      source.fragments.push_back({function.name, function.symbol,
                                  function.scratchBytes,
                                  function.inPlaceResults});
    source.indexChecks = std::move(result->indexChecks);
    return source;
  }

  llvm::Expected<CompiledLibrary> compile(llvm::StringRef source) override {
    llvm::Expected<cpu::CompiledLibrary> library =
        cpu::compileSource(source, compileOptions);
    if (!library)
      return library.takeError();
    return CompiledLibrary{library->path, library->cached};
  }

private:
  cpu::CompileOptions compileOptions;
};

} // namespace

std::unique_ptr<TargetBackend>
tandem::cpu::createCPUBackend(const CompileOptions &options) {
  return std::make_unique<CPUBackend>(options);
}

void tandem::cpu::registerCPUBackend() {
  registerTargetBackend("cpu", [] { return createCPUBackend(); });
}
