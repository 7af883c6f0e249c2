//===- CompilePipeline.h - tandemc's compile phases -------------*- C++ -*-===//
//
// The phases `tandemc model.mlir` runs, each a textual MLIR pass pipeline,
// so that --emit can stop after any of them and a user's partitioning pass
// (from a plugin) can run in front of mpmd-partition.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TOOLS_TANDEMC_COMPILEPIPELINE_H
#define TANDEM_TOOLS_TANDEMC_COMPILEPIPELINE_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::tandemc {

/// The forms the program takes, in pipeline order; `--emit` names one.
enum class Phase {
  NN,        ///< the parsed, verified model
  Precision, ///< after nn-mixed-precision
  Grad,      ///< after nn-autodiff
  Train,     ///< after nn-optimizer
  Partition, ///< after the partitioner and mpmd-partition
  Schedule,  ///< after mpmd-schedule
  Remat,     ///< after mpmd-remat
  Lowered,   ///< after mpmd-lower-transfers
  Verified,  ///< after mpmd-verify
  Split,     ///< one module per rank (mpmd-split-programs)
  Native,    ///< per-rank C++, libraries and manifests (--target cpu)
};

/// What the user asked for, from tandemc's flags.
struct CompileOptions {
  std::string function = "forward";
  int64_t stages = 1;
  /// 0: 2 for interleaved-1f1b, else 1.
  int64_t chunks = 0;
  int64_t microbatches = 1;
  std::string schedule = "1f1b";
  /// nn-optimizer's options, e.g. "optimizer=adamw lr=0.001".
  std::string optimizer = "optimizer=adamw";
  /// f32 (nothing to do), bf16 or fp16.
  std::string precision = "f32";
  /// nn-mixed-precision's further options (e.g. "loss-scale=dynamic").
  std::string precisionOptions;
  /// none, full, selective, annotated or budget=<bytes>.
  std::string remat = "none";
  /// mpmd-compress-transfers' options (e.g. "activations=int8
  /// gradients=fp8"); empty: no codecs on stage edges.
  std::string compress;
  /// nn-subspace's options (e.g. "rank=64 seed=7"); empty: the residual
  /// stream keeps the model's width.
  std::string subspace;
  /// A pass pipeline element run before mpmd-partition (a user's
  /// partitioner that writes `mpmd.stage` annotations).
  std::string partitioner;
  /// `none` (stop at the per-rank MLIR) or a registered target (the rank
  /// lowering after the split: DIR/rank<N>.{cpp,so,json} for cpu).
  std::string target = "none";
  /// The target's transports pair messages in posting order per rank pair
  /// (NCCL): mpmd-verify{fifo-pairs=true}.
  bool fifoPairs = false;
  /// The target lowers nn.attention and nn.attention_grad: autodiff keeps
  /// attention fused (nn-autodiff{decompose-attention=false}) and the eval
  /// program does not decompose it.
  bool fusedAttention = false;
  /// The target lowers nn.layer_norm_grad and nn.rms_norm_grad: autodiff
  /// writes the normalizations' input gradients with them
  /// (nn-autodiff{decompose-norms=false}).
  bool fusedNorms = false;
  /// The target lowers nn.gelu_grad (nn-autodiff{decompose-gelu=false}).
  bool fusedGelu = false;
  /// The target reads split pieces in place: the backward recomputes
  /// splits instead of stashing their pieces
  /// (mpmd-remat{recompute-splits=true}).
  bool recomputeSplits = false;
  /// Pad a loss's vocabulary to a multiple of this (nn-pad-classes) before
  /// anything else; 1: leave it.
  int64_t classMultiple = 1;
  /// Report each rank's peak memory (mpmd-memory) after verification.
  bool memory = false;
  /// Where tandemc writes rank<N>.mlir (Phase::Split).
  std::string outputDir;
};

struct PhasePipeline {
  Phase phase;
  /// Passes on the top-level builtin.module (textual, without the
  /// `builtin.module(...)` anchor), or empty when the phase does nothing
  /// for these options. Phase::Native has none: tandemc lowers and compiles
  /// the ranks itself (NativeCompile.h).
  std::string pipeline;
};

/// The phases up to and including `last`, with their pass pipelines;
/// checks the options (stages, schedule names, remat spec) first.
llvm::Expected<std::vector<PhasePipeline>>
buildPhases(const CompileOptions &options, Phase last);

/// The --emit name of a phase ("nn", "train", "split", ...).
const char *phaseName(Phase phase);

} // namespace tandem::tandemc

#endif // TANDEM_TOOLS_TANDEMC_COMPILEPIPELINE_H
