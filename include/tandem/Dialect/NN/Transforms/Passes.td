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
    zeros and -infinity added when the op is causal, a softmax over keys,
    the product with `v`, and the inverse reshape; a log-sum-exp result
    becomes each row's maximum plus the log of Σ exp(score − maximum), in
    f32. Operands narrower than f32 (bf16, f16, 8-bit floats) are cast to
    f32 first and only the output is cast back (saturating for 8-bit
    floats), so scores, mask and softmax are f32 as in a fused kernel. Later
    phases that have no dedicated
    attention rule (the evaluator's cross-checks, backends without a fused
    kernel) run after this pass.
  }];
  let dependentDialects = ["::tandem::nn::NNDialect"];
}

def NNSubspace : Pass<"nn-subspace", "::mlir::ModuleOp"> {
  let summary = "Constrains a residual transformer's stream to a k-wide "
                "subspace (Protocol Models), so stage edges carry k numbers "
                "per token instead of d";
  let description = [{
    For the function named by `function`, finds the residual stream: a
    token embedding `nn.embedding %table, %ids` (the table a rank-2
    parameter d wide, the ids a function argument), optionally plus a
    learned position table (an `nn.add` with a parameter read), then a
    chain of residual additions `x + p`, each `p` a projection that writes
    into the stream (`nn.matmul %h, %w`, optionally `+ %bias`, with `w` and
    `bias` parameters read nowhere else), with `nn.stage_end` markers
    passing it on. The stream becomes k-wide coordinates `c`:

    - `c` starts as the learned tables' rows: the token table and the
      position table become k wide (same names and initializers);
    - every projection into the stream produces k-wide values (its weight
      becomes `in x k`, its bias `k`, same names and initializers), added
      to `c`;
    - every other read of the stream reads `x = T[ids] + c · Uᵀ`, where
      `subspace.basis` U (d x k, `orthonormal`) and `subspace.tokens` T
      (V x d, the token table's initializer) are frozen parameters drawn
      with `seed`: never trained, never sent, each stage draws its own
      copy, and `T[ids]` is gathered where it is read (mpmd-partition
      moves work on step inputs and frozen parameters to its users);
    - any other read of the token table (a tied LM head) reads
      `T + E_k · Uᵀ`, so only the k-wide `E_k` is trained.

    Stage edges then carry `c` verbatim. The pass refuses, at the op, what
    it cannot rewrite: no token embedding, a stream that forks, a residual
    addition whose other operand is no projection it recognises, a
    projection parameter read elsewhere, and a rank outside [1, d].
  }];
  let options = [
    Option<"rank", "rank", "int64_t", /*default=*/"0",
           "k: the width of the stream's subspace (required, 1 to d)">,
    Option<"seed", "seed", "int64_t", /*default=*/"0",
           "The seed of the frozen basis and token table (>= 0)">,
    Option<"function", "function", "std::string", /*default=*/"\"forward\"",
           "The model function to rewrite">,
  ];
  let dependentDialects = ["::tandem::nn::NNDialect"];
}

def NNPadClasses : Pass<"nn-pad-classes", "::mlir::ModuleOp"> {
  let summary = "Pads a vocabulary to a multiple for the GEMMs, masked out of "
                "the loss";
  let description = [{
    A GPT's LM head is a GEMM with one dimension the vocabulary: 50257 for
    GPT-2, odd, so its rows are misaligned for 16-byte loads and the GEMM
    falls back to slow kernels. For every `nn.cross_entropy` whose class
    count V is not a multiple of `multiple`, whose logits are an
    `nn.matmul` used only by it, with a rank-2 parameter as the right-hand
    side whose vocabulary dimension is V, the pass stores that parameter
    padded to Vp = V rounded up to `multiple` along the vocabulary
    dimension (`logical_shape` keeps V: the initializer draws the same
    values, the padding is zero), widens the logits to Vp columns and
    marks the loss `classes = V`, so the padding is no class: the softmax
    skips it, and its logits' gradient, and thus the padding's gradient
    and update, are zero.

    The parameter may also be an `nn.embedding` table (a tied LM head, the
    vocabulary its rows); the pass marks the embedding `rows = V`, so an id
    in the padding is an error, as it was before. A parameter read any other way, logits with
    other users, and a loss that already has `classes` are left alone:
    they train unpadded, as before.
  }];
  let options = [
    Option<"multiple", "multiple", "int64_t", /*default=*/"128",
           "Pad the vocabulary to a multiple of this (1: leave it)">,
  ];
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
    Option<"decomposeAttention", "decompose-attention", "bool",
           /*default=*/"true",
           "Rewrite nn.attention into matmuls and a softmax before "
           "differentiating (targets without a fused attention kernel); "
           "false keeps it, gives it a log-sum-exp result and "
           "differentiates it with nn.attention_grad, which reads that and "
           "the output">,
    Option<"decomposeNorms", "decompose-norms", "bool", /*default=*/"true",
           "Write the gradients of nn.layer_norm and nn.rms_norm as "
           "elementwise ops and reductions; false writes their input "
           "gradients as nn.layer_norm_grad and nn.rms_norm_grad (targets "
           "with fused row kernels), the weight gradients still as ops of "
           "their own">,
    Option<"decomposeGelu", "decompose-gelu", "bool", /*default=*/"true",
           "Write the gradient of nn.gelu as elementwise ops; false writes "
           "nn.gelu_grad (targets that run it in a GEMM's epilogue)">,
  ];
  let dependentDialects = ["::tandem::nn::NNDialect",
                           "::mlir::func::FuncDialect"];
}

def NNOptimizer : Pass<"nn-optimizer", "::mlir::ModuleOp"> {
  let summary = "Builds a training step from a gradient function";
  let description = [{
    Takes the gradient function named by `function` (the output of
    nn-autodiff: loss first, then one gradient per parameter listed in its
    `nn.gradients` attribute) and adds `@<result>` with the same arguments.
    The new function holds a copy of the gradient function's body (so later
    phases see one flat function; the autodiff tags stay on the copied ops),
    followed by the update, and returns the loss, the new value of every
    parameter in `nn.gradients` order, then the new optimizer state, listed
    in its `nn.updates` attribute (see docs/training.md). The step is pure:
    the driver writes the results back.

    Optimizer state is declared as `nn.parameter`s initialized to zeros,
    after the existing parameters: `@opt.step` (a rank-0 f32 step counter
    t, exact up to 2^24 steps), then per parameter in canonical order
    `@opt.mom.<name>` (momentum) or `@opt.m.<name>`, `@opt.v.<name>`
    (adamw), each f32 with the parameter's shape. Every op the pass adds
    carries the unit attribute `nn.optimizer`.

    With lr(t) the scheduled learning rate and wd the decay of the
    parameter's group (decoupled: applied to the parameter, not the
    gradient, for every optimizer):

    - `sgd`:      p ← p − lr(t)·wd·p − lr(t)·g
    - `momentum`: u ← μ·u + g;  p ← p − lr(t)·wd·p − lr(t)·u (PyTorch's
                  form, no dampening)
    - `adamw`:    m ← β1·m + (1−β1)·g;  v ← β2·v + (1−β2)·g²;
                  p ← p − lr(t)·wd·p − lr(t)·(m/c1) / (sqrt(v/c2) + eps)
                  with c1 = 1 − β1^(t+1), c2 = 1 − β2^(t+1)

    Weight-decay groups: a parameter decays when `decay` selects it
    (`matrices`: rank ≥ 2, so biases and normalization weights do not;
    `all`; `none`) and its name contains none of the `no-decay`
    substrings.

    Clipping (`clip-norm` > 0): the global norm is the square root of the
    per-parameter sums of squares added one by one in `nn.gradients` order
    (the canonical parameter order); every gradient is multiplied by
    min(1, clip-norm / (norm + 1e-6)).

    Loss scaling: when the gradient function carries `nn.loss_scale`
    (set by nn-mixed-precision), the gradients are divided by the scale,
    a probe sum(g·0) per gradient added in canonical order decides whether
    every gradient is finite, every result keeps its old value through
    `nn.select` when one is not (the step counter too), and a dynamic
    scale's `@opt.loss_scale`/`@opt.good_steps` are updated and returned
    last (docs/training.md, "Mixed precision").

    Schedules: `constant` uses lr. `warmup-cosine` uses, for the step
    counter t before its increment (0-based), W = warmup-steps and
    T = total-steps: lr·(t+1)/W for t < W; then
    min-lr + (lr − min-lr)·(1 + cos(π·(t−W)/(T−W)))/2 for W ≤ t < T;
    min-lr for t ≥ T.
  }];
  let options = [
    Option<"function", "function", "std::string",
           /*default=*/"\"forward_grad\"",
           "The gradient function produced by nn-autodiff">,
    Option<"result", "result", "std::string", /*default=*/"\"train_step\"",
           "Name of the training-step function to create">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "sgd, momentum or adamw">,
    Option<"lr", "lr", "double", /*default=*/"1e-3",
           "Peak learning rate (> 0)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Momentum coefficient μ of `momentum`, in [0, 1)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "AdamW's first-moment decay, in [0, 1)">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999",
           "AdamW's second-moment decay, in [0, 1)">,
    Option<"eps", "eps", "double", /*default=*/"1e-8",
           "AdamW's denominator term (> 0)">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
           "Decoupled weight decay (≥ 0); -1 selects the optimizer's default: "
           "0.01 for adamw, 0 for sgd and momentum">,
    Option<"decay", "decay", "std::string", /*default=*/"\"matrices\"",
           "Which parameters decay: matrices (rank >= 2), all or none">,
    ListOption<"noDecay", "no-decay", "std::string",
               "Name substrings of parameters that never decay">,
    Option<"clipNorm", "clip-norm", "double", /*default=*/"0.0",
           "Global gradient-norm clipping threshold (0 = off)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"constant\"",
           "Learning-rate schedule: constant or warmup-cosine">,
    Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
           "Linear warmup steps of warmup-cosine">,
    Option<"totalSteps", "total-steps", "int64_t", /*default=*/"0",
           "Step at which warmup-cosine reaches min-lr (required)">,
    Option<"minLr", "min-lr", "double", /*default=*/"0.0",
           "Final learning rate of warmup-cosine (>= 0)">,
  ];
  let dependentDialects = ["::tandem::nn::NNDialect",
                           "::mlir::func::FuncDialect"];
}

def NNMixedPrecision : Pass<"nn-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "Runs a forward function's compute in low precision, with "
                "f32 master weights and optional loss scaling";
  let description = [{
    Rewrites the forward function named by `function` (before nn-autodiff,
    which differentiates through the casts, so the backward pass runs in the
    forward's precisions and parameter gradients come back f32). A policy is
    a row of a table: its compute type, the ops that run in it (the low
    list), the ops kept in f32 (the f32 list), and its default loss scaling:

    | policy | compute type | low list                | f32 list  | loss scale |
    |--------|--------------|-------------------------|-----------|------------|
    | `bf16` | bf16         | nn.matmul, nn.attention | see below | none       |
    | `fp16` | f16          | nn.matmul, nn.attention | see below | dynamic    |
    | `f32`  | (no-op)      |                         |           | none       |

    The f32 list: nn.softmax, nn.log_softmax, nn.layer_norm, nn.rms_norm,
    nn.cross_entropy, nn.reduce_sum, nn.reduce_mean, nn.reduce_max,
    nn.exp, nn.log, nn.pow. (Attention's softmax stays f32 in every
    lowering; its log-sum-exp result is f32.)
    `low-precision-ops` and `f32-ops` move ops between the lists (an op
    named in both, an unknown op or a structural op such as nn.param,
    nn.constant, nn.cast or nn.stage_end is an error). Every other op
    follows its operands: it runs in their type when all its float
    operands agree, and in f32 (the wider type) when they do not. Master
    weights (parameter reads, and reshapes, broadcasts and transposes of
    them) do not count unless the op reads nothing else: a bias added to
    a bf16 product is a bf16 add, its bias cast to bf16.

    Only f32 ops change. Parameters (the master weights) keep their type;
    a low-list op's float operands are cast to the compute type and its
    results have it (a matmul's result is low precision: the product is
    accumulated in wider precision and rounded once, as cuBLAS does with a
    bf16 output and an f32 accumulator; the evaluator accumulates in double).
    Casts are placed once per (value, type), right after the value's
    definition (a parameter read is cast directly after its `nn.param`), and
    never chained: a value the pass cast is converted from its source. The
    function's results keep their types.

    Loss scaling (`loss-scale`): `none`; `static:<s>`; `dynamic`,
    `dynamic:<initial>` or `dynamic:<initial>:<interval>` (initial scale
    65536 and growth interval 2000 by default, growth factor 2, backoff
    0.5); `default` takes the policy's. It sets the function's
    `nn.loss_scale` dictionary, which nn-autodiff (seed = scale) and
    nn-optimizer (unscale, skip the update on a non-finite gradient, grow
    or back off the scale) read; dynamic scaling declares `@opt.loss_scale`
    (the scale divided by the initial scale, starting at 1) and
    `@opt.good_steps` (zeros). See docs/training.md, "Mixed precision".
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"forward\"",
           "The forward function to rewrite">,
    Option<"policy", "policy", "std::string", /*default=*/"\"bf16\"",
           "bf16, fp16 or f32 (no change)">,
    ListOption<"lowPrecisionOps", "low-precision-ops", "std::string",
               "Ops moved to the policy's low-precision list">,
    ListOption<"f32Ops", "f32-ops", "std::string",
               "Ops moved to the policy's f32 list">,
    Option<"lossScale", "loss-scale", "std::string",
           /*default=*/"\"default\"",
           "none, static:<s>, dynamic[:<initial>[:<interval>]] or default "
           "(the policy's)">,
  ];
  let dependentDialects = ["::tandem::nn::NNDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // TANDEM_DIALECT_NN_TRANSFORMS_PASSES_TD
