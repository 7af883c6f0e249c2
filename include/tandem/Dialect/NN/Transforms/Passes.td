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

def NNAutodiff : Pass<"nn-autodiff", "::mlir::ModuleOp"> {
  let summary = "Derives a function returning the loss and every parameter's "
                "gradient (reverse mode)";
  let description = [{
    For the function named by `function`, which returns a rank-0 float loss,
    adds `@<function>_grad` with the same arguments returning the loss and
    the gradient of every parameter the function reads, listed in the
    `nn.gradients` attribute in the module's parameter declaration order.
    Backward ops are tagged `#nn.grad<B|W, of = id>` (see
    docs/training.md).
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"forward\"",
           "The function whose scalar result is differentiated">,
  ];
  let dependentDialects = ["::tandem::nn::NNDialect",
                           "::mlir::func::FuncDialect"];
}

def NNOptimizer : Pass<"nn-optimizer", "::mlir::ModuleOp"> {
  let summary = "Builds a training step from a gradient function";
  let description = [{
    Takes the gradient function named by `function` (the output of
    nn-autodiff) and adds `@<result>`, which returns the loss and the new
    value of every parameter and optimizer-state parameter it updates,
    listed in the `nn.updates` attribute (see docs/training.md).
  }];
  let options = [
    Option<"function", "function", "std::string",
           /*default=*/"\"forward_grad\"",
           "The gradient function produced by nn-autodiff">,
    Option<"result", "result", "std::string", /*default=*/"\"train_step\"",
           "Name of the training-step function to create">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "sgd, momentum or adamw">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "Peak learning rate">,
  ];
  let dependentDialects = ["::tandem::nn::NNDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // TANDEM_DIALECT_NN_TRANSFORMS_PASSES_TD
