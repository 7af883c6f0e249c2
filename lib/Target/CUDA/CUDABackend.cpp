//===- CUDABackend.cpp - the cuda target ----------------------------------===//

#include "tandem/Target/CUDA/CUDABackend.h"

#include "tandem/Lowering/CompileCache.h"
#include "tandem/Target/CUDA/CudaEmitter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

#include <map>
#include <mutex>
#include <optional>

using namespace tandem::cuda;
using namespace tandem::lowering;

std::vector<std::string> tandem::cuda::supportedArchitectures() {
  return {"sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"};
}

std::vector<std::string>
tandem::cuda::compileFlags(const CompileOptions &options) {
  if (options.emulate)
    // The same arithmetic as nvcc's flags below: no contraction, IEEE
    // division and square root, denormals kept (the host's default).
    return {"-x",
            "c++",
            "-std=c++17",
            "-O2",
            "-fPIC",
            "-shared",
            "-fno-fast-math",
            "-ffp-contract=off",
            "-fno-math-errno",
            "-fno-trapping-math"};
  // -arch=sm_90a would also embed compute_90 PTX, compiled by a second
  // cicc run; an arch-specific library runs on that architecture only, so
  // its machine code alone.
  llvm::StringRef arch = options.arch;
  std::string target = arch.ends_with("a") ? "-gencode=arch=compute_" +
                                                 arch.drop_front(3).str() +
                                                 ",code=" + arch.str()
                                           : "-arch=" + arch.str();
  return {"-x", "cu", "-std=c++17", "-O3", "-shared", "-Xcompiler", "-fPIC",
          "-cudart", "shared", target, "-fmad=false", "-prec-div=true",
          "-prec-sqrt=true", "-ftz=false",
          // Registers and spills per kernel, for the build's report.
          "-Xptxas", "-v"};
}

std::string tandem::cuda::summarizePtxas(llvm::StringRef log) {
  unsigned kernels = 0;
  uint64_t registers = 0, spilled = 0;
  llvm::SmallVector<llvm::StringRef> lines;
  log.split(lines, '\n');
  // "ptxas info    : Compiling entry function '...' for 'sm_90a'", then
  // "    N bytes stack frame, S bytes spill stores, L bytes spill loads"
  // and "ptxas info    : Used R registers, ...".
  for (llvm::StringRef line : lines) {
    if (line.contains("Compiling entry function"))
      ++kernels;
    size_t used = line.find("Used ");
    if (used != llvm::StringRef::npos) {
      uint64_t count = 0;
      if (!line.substr(used + 5).consumeInteger(10, count))
        registers = std::max(registers, count);
    }
    size_t spill = line.find(" bytes spill stores");
    if (spill != llvm::StringRef::npos) {
      llvm::StringRef before = line.substr(0, spill);
      uint64_t bytes = 0;
      if (!before.substr(before.rfind(' ') + 1).getAsInteger(10, bytes))
        spilled += bytes;
    }
  }
  if (kernels == 0)
    return "";
  return std::to_string(kernels) + " kernels, at most " +
         std::to_string(registers) + " registers, " + std::to_string(spilled) +
         " bytes spilled";
}

std::vector<std::string>
tandem::cuda::linkLibraries(const CompileOptions &options) {
  // The GEMM call sites (GemmPrelude.h): cuBLASLt on the GPU, the CPU BLAS
  // in the emulation.
  if (options.emulate)
    return {"-lopenblas"};
  return {"-lcublasLt"};
}

namespace {

/// nvcc to run: $TANDEM_NVCC, nvcc in PATH, or the toolkit's default place.
llvm::Expected<std::string> findNvcc() {
  if (std::optional<std::string> chosen =
          llvm::sys::Process::GetEnv("TANDEM_NVCC"))
    return findTool(*chosen, "CUDA compiler", "TANDEM_NVCC");
  if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("nvcc"))
    return *found;
  if (llvm::sys::fs::can_execute("/usr/local/cuda/bin/nvcc"))
    return std::string("/usr/local/cuda/bin/nvcc");
  return llvm::createStringError(
      "CUDA compiler 'nvcc' not found in PATH or /usr/local/cuda/bin (set "
      "TANDEM_NVCC, or use --cuda-emulate)");
}

/// `nvcc --version`'s output, once per nvcc: a new toolkit is a new key.
llvm::Expected<std::string> nvccVersion(const std::string &nvcc) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = versions.find(nvcc);
  if (it != versions.end())
    return it->second;
  llvm::SmallString<128> path;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("tandem-nvcc", "txt", path))
    return llvm::createStringError("cannot create a temporary file: " +
                                   ec.message());
  std::optional<llvm::StringRef> redirects[] = {
      std::nullopt, llvm::StringRef(path), llvm::StringRef(path)};
  llvm::StringRef args[] = {nvcc, "--version"};
  int status = llvm::sys::ExecuteAndWait(nvcc, args, std::nullopt, redirects);
  auto buffer = llvm::MemoryBuffer::getFile(path);
  llvm::sys::fs::remove(path);
  if (status != 0 || !buffer)
    return llvm::createStringError("'" + nvcc + " --version' failed");
  return versions[nvcc] = (*buffer)->getBuffer().str();
}

} // namespace

llvm::Expected<CompiledLibrary>
tandem::cuda::compileSource(llvm::StringRef source,
                            const CompileOptions &options) {
  std::string cacheDir =
      options.cacheDir.empty()
          ? defaultCacheDir("TANDEM_CUDA_CACHE", "tandem-cuda-cache")
          : options.cacheDir;
  std::vector<std::string> flags = compileFlags(options);
  std::string compiler;
  std::vector<std::string> key = {source.str()};
  if (options.emulate) {
    compiler = llvm::sys::Process::GetEnv("TANDEM_CXX").value_or("c++");
    key.push_back(compiler);
  } else {
    llvm::Expected<std::string> nvcc = findNvcc();
    if (!nvcc)
      return nvcc.takeError();
    llvm::Expected<std::string> version = nvccVersion(*nvcc);
    if (!version)
      return version.takeError();
    compiler = *nvcc;
    key.insert(key.end(), {*nvcc, *version});
  }
  key.insert(key.end(), flags.begin(), flags.end());
  std::vector<std::string> libraries = linkLibraries(options);
  key.insert(key.end(), libraries.begin(), libraries.end());
  llvm::Expected<CompiledLibrary> library =
      buildCached(cacheDir, key, ".so", [&](CacheBuild &build) -> llvm::Error {
        llvm::Expected<std::string> program =
            options.emulate ? findTool(compiler, "C++ compiler", "TANDEM_CXX")
                            : llvm::Expected<std::string>(compiler);
        if (!program)
          return program.takeError();
        llvm::Expected<std::string> sourceFile = build.temporary(".cu");
        if (!sourceFile)
          return sourceFile.takeError();
        if (llvm::Error error = writeTextFile(*sourceFile, source))
          return error;
        std::vector<std::string> args = {*program};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"-o", build.output(), *sourceFile});
        args.insert(args.end(), libraries.begin(), libraries.end());
        std::string log;
        if (llvm::Error error = runCompiler(args, "CUDA", build, &log))
          return error;
        // Kept in the cache with the library, so a hit has it too.
        if (!options.emulate)
          build.setReport(summarizePtxas(log));
        return llvm::Error::success();
      });
  return library;
}

namespace {

class CUDABackend : public TargetBackend {
public:
  explicit CUDABackend(CompileOptions compileOptions)
      : compileOptions(std::move(compileOptions)) {}

  llvm::StringRef name() const override { return "cuda"; }
  llvm::StringRef sourceLanguage() const override { return "CUDA"; }

  std::vector<TargetOption> options() const override {
    return {{"cuda-arch", "The GPU architecture: " +
                              llvm::join(supportedArchitectures(), ", ") +
                              " (default sm_90a: H100, H200)"},
            {"cuda-emulate",
             "Build each rank's library with the host compiler: every "
             "kernel runs on the CPU, with the GPU's arithmetic",
             /*flag=*/true},
            {"cuda-attention",
             "fused (default: nn.attention and its gradient as fused "
             "kernels, the forward pass on the tensor cores where its shape "
             "allows), fused-cuda-cores (the fused kernels on the CUDA "
             "cores only) or decomposed (GEMMs and a masked softmax)"}};
  }

  llvm::Error configure(const TargetOptionValues &values) override {
    if (llvm::Error error = TargetBackend::configure(values))
      return error;
    auto arch = values.find("cuda-arch");
    if (arch != values.end()) {
      if (!llvm::is_contained(supportedArchitectures(), arch->second))
        return llvm::createStringError(
            "--cuda-arch must be one of " +
            llvm::join(supportedArchitectures(), ", ") + ", found '" +
            arch->second + "'");
      compileOptions.arch = arch->second;
    }
    auto attention = values.find("cuda-attention");
    if (attention != values.end()) {
      if (attention->second != "fused" &&
          attention->second != "fused-cuda-cores" &&
          attention->second != "decomposed")
        return llvm::createStringError(
            "--cuda-attention must be fused, fused-cuda-cores or decomposed, "
            "found '" +
            attention->second + "'");
      compileOptions.fusedAttention = attention->second != "decomposed";
      compileOptions.tensorCoreAttention = attention->second == "fused";
    }
    auto emulate = values.find("cuda-emulate");
    if (emulate != values.end())
      compileOptions.emulate = emulate->second == "true";
    return llvm::Error::success();
  }

  tandem::runtime::TargetInfo targetInfo() const override {
    tandem::runtime::TargetInfo info;
    info.kind = tandem::runtime::TargetKind::Cuda;
    info.arch = compileOptions.arch;
    // cudaMalloc's alignment, and the scratch offsets' (CudaEmitter.cpp).
    info.alignment = 256;
    return info;
  }

  tandem::runtime::MemorySpace memorySpace() const override {
    return tandem::runtime::MemorySpace::Device;
  }

  // A microbatch's weight gradient is added into the sum by its GEMM
  // (beta = 1, as llm.c and Megatron do), any other summed result by a
  // kernel at the fragment's end: no slot per microbatch, no sum by the
  // runtime.
  tandem::runtime::Accumulation accumulation() const override {
    return tandem::runtime::Accumulation::Fragment;
  }

  FusionPolicy fusionPolicy() const override {
    return tandem::cuda::fusionPolicy();
  }

  std::vector<std::string> supportedOps() const override {
    std::vector<std::string> ops = tandem::cuda::supportedOps();
    // Decomposed attention: the pipeline differentiates its GEMMs and
    // softmax instead, and no fused kernel is asked for.
    if (!compileOptions.fusedAttention)
      llvm::erase_if(ops, [](const std::string &op) {
        return op == "nn.attention" || op == "nn.attention_grad";
      });
    return ops;
  }

  // The attention kernels read q, k and v as columns of a split's operand
  // (planAttentionViews in CudaEmitter.cpp).
  bool readsSplitsInPlace() const override {
    return compileOptions.fusedAttention;
  }

  /// 128 elements: 256 bytes of bf16 per row, whole cuBLASLt tiles (as
  /// llm.c and Megatron's make-vocab-size-divisible-by pad GPT-2's 50257
  /// to 50304).
  int64_t classMultiple() const override { return 128; }
  // Its ranks exchange over NCCL, which has no tags.
  bool pairsMessagesInOrder() const override { return true; }

  llvm::StringRef sourceExtension() const override { return ".cu"; }
  llvm::StringRef libraryExtension() const override { return ".so"; }

  mlir::FailureOr<EmittedSource>
  emit(llvm::ArrayRef<mlir::Operation *> functions) override {
    EmitOptions options;
    options.tensorCoreAttention = compileOptions.tensorCoreAttention;
    return emitCuda(functions, options);
  }

  llvm::Expected<CompiledLibrary> compile(llvm::StringRef source) override {
    return tandem::cuda::compileSource(source, compileOptions);
  }

private:
  CompileOptions compileOptions;
};

} // namespace

std::unique_ptr<TargetBackend>
tandem::cuda::createCUDABackend(const CompileOptions &options) {
  return std::make_unique<CUDABackend>(options);
}

void tandem::cuda::registerCUDABackend() {
  registerTargetBackend("cuda", [] { return createCUDABackend(); });
}
