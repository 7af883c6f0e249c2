//===- CUDABackend.h - the cuda target ---------------------------*- C++
//-*-===//
//
// The CUDA target behind `--target cuda`: the CUDA emitter (CudaEmitter.h)
// and nvcc, or with --cuda-emulate the host compiler, which builds the same
// kernel text into a library that runs every kernel on the CPU
// (docs/cuda-backend.md).
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TARGET_CUDA_CUDABACKEND_H
#define TANDEM_TARGET_CUDA_CUDABACKEND_H

#include "tandem/Lowering/TargetBackend.h"

#include <memory>
#include <string>
#include <vector>

namespace tandem::cuda {

struct CompileOptions {
  /// The SM architecture (--cuda-arch).
  std::string arch = "sm_90a";
  /// Build the host emulation with the host compiler instead of nvcc.
  bool emulate = false;
  /// Empty: $TANDEM_CUDA_CACHE, else <tmp>/tandem-cuda-cache.
  std::string cacheDir;
  /// nn.attention as the fused kernels (nn.attention_grad for its
  /// gradient), or decomposed into GEMMs and a masked softmax before
  /// autodiff (--cuda-attention=decomposed, for comparison).
  bool fusedAttention = true;
  /// Fused attention's forward pass on the tensor cores where its shape
  /// allows (--cuda-attention=fused), or always on the CUDA cores
  /// (--cuda-attention=fused-cuda-cores, for comparison).
  bool tensorCoreAttention = true;
};

/// The architectures --cuda-arch accepts.
std::vector<std::string> supportedArchitectures();

/// The flags the library is compiled with (nvcc's, or the host compiler's
/// for the emulation), without the output and the source.
std::vector<std::string> compileFlags(const CompileOptions &options);

/// The libraries the library links, after the source: cuBLASLt, or the CPU
/// BLAS for the emulation.
std::vector<std::string> linkLibraries(const CompileOptions &options);

/// ptxas's `-v` output (nvcc's stderr) in one line: "K kernels, at most R
/// registers, S bytes spilled" (S: the spill stores of every kernel), or
/// empty when it names no kernel.
std::string summarizePtxas(llvm::StringRef log);

/// Compiles `source` through the compile cache: nvcc ($TANDEM_NVCC, else
/// nvcc in PATH, else /usr/local/cuda/bin/nvcc; its version is part of the
/// key) or, emulated, $TANDEM_CXX (else c++).
llvm::Expected<lowering::CompiledLibrary>
compileSource(llvm::StringRef source, const CompileOptions &options);

std::unique_ptr<lowering::TargetBackend>
createCUDABackend(const CompileOptions &options = {});

/// Registers the backend as `cuda` (tandem::registerAllTargets calls this).
void registerCUDABackend();

} // namespace tandem::cuda

#endif // TANDEM_TARGET_CUDA_CUDABACKEND_H
