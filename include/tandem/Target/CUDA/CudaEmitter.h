//===- CudaEmitter.h - CUDA C++ for functions and fragments -----*- C++ -*-===//
//
// The CUDA target's printer: one translation unit holding, for every
// function, an `extern "C"` entry point of the fragment ABI that launches
// the function's kernels on the context's stream. Kernels are the ones
// recorded in the IR (tandem/Lowering/Kernels.h; formed under the target's
// policy when none are recorded), written through the macro layer of
// KernelPrelude.h so that the same text compiles with nvcc for the GPU and
// with the host compiler for the emulation. docs/cuda-backend.md.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TARGET_CUDA_CUDAEMITTER_H
#define TANDEM_TARGET_CUDA_CUDAEMITTER_H

#include "tandem/Lowering/TargetBackend.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"

#include <string>
#include <vector>

namespace tandem::cuda {

/// Threads per block of every generated kernel (KernelPrelude.h's launch
/// bounds).
constexpr int kBlockSize = 256;

/// The kernels the CUDA target forms.
lowering::FusionPolicy fusionPolicy();

/// The emitter's choices the target's options make.
struct EmitOptions {
  /// nn.attention's forward pass on the tensor cores where its shape
  /// allows (bf16 or f16, heads a multiple of 16 and at most
  /// kMaxTensorCoreHeadDim wide; TensorCorePrelude.h), else on the CUDA
  /// cores (--cuda-attention=fused-cuda-cores: always).
  bool tensorCoreAttention = true;
};

/// The widest head the tensor-core attention takes: its accumulator rows
/// and fragments stay in registers.
constexpr int64_t kMaxTensorCoreHeadDim = 128;

/// Emits `functions` (func.func or mpmd.fragment ops with bodies). What it
/// cannot lower yet is an error at the op.
mlir::FailureOr<lowering::EmittedSource>
emitCuda(llvm::ArrayRef<mlir::Operation *> functions,
         const EmitOptions &options = {});

/// The nn ops the emitter lowers, sorted.
std::vector<std::string> supportedOps();

/// The nn ops it does not lower yet, each with the kernel that will
/// (docs/cuda-backend.md, "Not lowered yet"): every registered op is in one
/// list or the other (unittests/Dialect/NN/OpCoverageTest.cpp).
std::vector<std::pair<std::string, std::string>> opsNotLoweredYet();

} // namespace tandem::cuda

#endif // TANDEM_TARGET_CUDA_CUDAEMITTER_H
