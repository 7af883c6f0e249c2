//===- Passes.td - nn dialect passes ---------------------------*- tablegen -*-===//

#ifndef TANDEM_DIALECT_NN_TRANSFORMS_PASSES_TD
#define TANDEM_DIALECT_NN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def NNDecomposeAttention : Pass<"nn-decompose-attention"> {
  let summary = "Rewrites nn.attention into matmuls, a softmax and reshapes";
  let description = [{
    Replaces every `nn.attention` by its definition: split the model
    dimension into heads (reshape + transpose to batch × heads × sequence ×
    head-dim), scores `q·kᵀ` scaled by the op's scale, a causal mask of
    zeros and -infinity (the lowest finite value for types without
    infinity) added when the op is causal, a softmax over keys, the product
    with `v`, and the inverse reshape. Later phases that have no dedicated
    attention rule (the evaluator's cross-checks, backends without a fused
    kernel) run after this pass.
  }];
  let dependentDialects = ["::tandem::nn::NNDialect"];
}

#endif // TANDEM_DIALECT_NN_TRANSFORMS_PASSES_TD
