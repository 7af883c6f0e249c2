//===- NNOps.td - nn dialect operations ------------------------*- tablegen -*-===//

#ifndef TANDEM_DIALECT_NN_IR_NNOPS_TD
#define TANDEM_DIALECT_NN_IR_NNOPS_TD

include "tandem/Dialect/NN/IR/NNBase.td"
include "tandem/Dialect/NN/IR/NNAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def NN_ParameterOp : NN_DeclarationOp<"parameter", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "A trainable parameter of the model";
  let description = [{
    Declares a trainable parameter: a module-level symbol with a statically
    shaped floating-point tensor type and an initializer. Functions read it
    with `nn.param`. A parameter read in several places (e.g. a token
    embedding tied to the LM head) is one parameter.

    ```mlir
    nn.parameter @wte : tensor<256x32xf32> = normal(0.02)
    nn.parameter @ln_f.bias : tensor<32xf32> = zeros
    ```

    With `logical_shape`, the parameter is stored padded along one
    dimension (`nn-pad-classes` pads a vocabulary to a GEMM-friendly size):
    the initializer draws the values of a tensor of the logical shape, in
    its row-major order, each at the same multi-index of the stored tensor,
    and the padding is zero. The logical shape has the type's rank and
    differs from it in at most one dimension, where it is smaller.

    ```mlir
    nn.parameter @wte : tensor<384x32xf32> = normal(0.02) {logical_shape = array<i64: 300, 32>}
    ```

    A `frozen` parameter is not trained: nn-autodiff computes no gradient
    for it and nn-optimizer keeps no state for it, so it keeps its initial
    values. Every pipeline stage that reads it holds its own copy, drawn
    from the same generator, so it never crosses a stage edge. With `seed`,
    its values are drawn with that seed instead of the run's (`tandem-run
    --seed`, `tandem-eval --seed`): a fixed part of the model, the same in
    every run (nn-subspace's basis and token table).

    ```mlir
    nn.parameter @subspace.basis : tensor<32x4xf32> = orthonormal {frozen, seed = 7 : i64}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<NN_FloatTensor>:$type,
                       NN_InitializerAttr:$init,
                       OptionalAttr<DenseI64ArrayAttr>:$logical_shape,
                       UnitAttr:$frozen,
                       OptionalAttr<I64Attr>:$seed);
  let assemblyFormat = [{
    $sym_name `:` $type `=` custom<Initializer>($init) attr-dict
  }];
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$sym_name, "::mlir::Type":$type,
                   "InitializerAttr":$init), [{
      build($_builder, $_state, $_builder.getStringAttr(sym_name),
            ::mlir::TypeAttr::get(type), init, /*logical_shape=*/nullptr,
            /*frozen=*/nullptr, /*seed=*/nullptr);
    }]>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
    /// Number of scalar elements in this parameter.
    int64_t getNumElements() { return getTensorType().getNumElements(); }
    /// The shape its initializer draws: `logical_shape`, or the type's.
    ::llvm::ArrayRef<int64_t> getDrawnShape() {
      if (auto logical = getLogicalShapeAttr())
        return logical.asArrayRef();
      return getTensorType().getShape();
    }
  }];
}

def NN_ParamOp : NN_Op<"param", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Reads a parameter";
  let description = [{
    Yields the current value of the `nn.parameter` named by `name`. The result
    type must equal the parameter's type.

    ```mlir
    %w = nn.param @wte : tensor<256x32xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let extraClassDeclaration = [{
    /// The nn.parameter it reads, or null when the module has none.
    ParameterOp getDeclaration();
    /// Whether it reads a `frozen` parameter (one nothing trains).
    bool readsFrozen();
  }];
}

//===----------------------------------------------------------------------===//
// Constants and casts
//===----------------------------------------------------------------------===//

def NN_ConstantOp : NN_Op<"constant", [ConstantLike, Pure,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "A constant tensor";
  let description = [{
    ```mlir
    %c = nn.constant dense<1.0> : tensor<4xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

def NN_CastOp : NN_Op<"cast", [Pure, SameOperandsAndResultShape,
                               NN_Elementwise]> {
  let summary = "Converts the element type";
  let description = [{
    Converts every element to the result's element type, rounding to nearest
    even. A cast to an f8 type must state what happens to values beyond the
    type's range: `saturate = true` clamps them to the largest finite value,
    `saturate = false` maps them to the type's non-finite value (NaN for
    f8E4M3FN, infinity for f8E5M2). Other casts must not carry `saturate`.

    ```mlir
    %h = nn.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
    %q = nn.cast %x {saturate = true} : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, OptionalAttr<BoolAttr>:$saturate);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

class NN_UnaryOp<string mnemonic, string title, string doc,
                 list<Trait> traits = []>
    : NN_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType,
                                   InferTypeOpInterface, NN_Elementwise],
                                  traits)> {
  let summary = "Elementwise " # title;
  let description = "Computes " # doc # " of every element.";
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def NN_NegOp : NN_UnaryOp<"neg", "negation", "the negation"> { let hasFolder = 1; }
def NN_ExpOp : NN_UnaryOp<"exp", "exponential", "exp(x)">;
def NN_LogOp : NN_UnaryOp<"log", "natural logarithm", "the natural logarithm">;
def NN_TanhOp : NN_UnaryOp<"tanh", "hyperbolic tangent", "tanh(x)">;
def NN_SqrtOp : NN_UnaryOp<"sqrt", "square root", "the square root">;
def NN_RsqrtOp : NN_UnaryOp<"rsqrt", "reciprocal square root",
                                   "the reciprocal square root">;
def NN_ReluOp : NN_UnaryOp<"relu", "ReLU", "max(x, 0)">;
def NN_GeluOp : NN_UnaryOp<"gelu", "GELU (tanh form)",
    "GELU in its tanh form, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))">;
def NN_SiluOp : NN_UnaryOp<"silu", "SiLU", "x·sigmoid(x)">;
// sin and cos exist for schedules computed in the graph (cosine learning-rate
// decay driven by the optimizer's step counter) and rotary embeddings.
def NN_SinOp : NN_UnaryOp<"sin", "sine", "sin(x)">;
def NN_CosOp : NN_UnaryOp<"cos", "cosine", "cos(x)">;
// The exact error function and its complement (JAX's exact GELU,
// 0.5·x·erfc(−x/√2), and jax.scipy.special.erf).
def NN_ErfOp : NN_UnaryOp<"erf", "error function",
    "the error function erf(x) = 2/√π·∫₀ˣ exp(−t²) dt"> {
  let description = [{
    Computes the error function erf(x) = 2/√π·∫₀ˣ exp(−t²) dt of every
    element, exactly (not an approximation such as GELU's tanh form): the
    evaluator rounds the double result to the element type.

    ```mlir
    %y = nn.erf %x : tensor<8x16xf32>
    ```
  }];
}
def NN_ErfcOp : NN_UnaryOp<"erfc", "complementary error function",
    "erfc(x) = 1 − erf(x)"> {
  let description = [{
    Computes the complementary error function erfc(x) = 1 − erf(x) of every
    element, without the cancellation of `1 − erf(x)` for large x (it stays
    accurate down to the element type's smallest values). JAX's exact GELU
    is `0.5·x·erfc(−x/√2)`.

    ```mlir
    %y = nn.erfc %x : tensor<8x16xf32>
    ```
  }];
}

def NN_StopGradientOp : NN_Op<"stop_gradient", [Pure,
    SameOperandsAndResultType, InferTypeOpInterface, NN_Elementwise]> {
  let summary = "Identity whose gradient is zero";
  let description = [{
    Returns its operand unchanged, but `nn-autodiff` propagates no cotangent
    through it: a value reached only through `nn.stop_gradient` gets no
    gradient from that path (JAX's `lax.stop_gradient`;
    `jax.nn.log_softmax` subtracts `stop_gradient(max(x))`). It never folds
    away, so canonicalization before `nn-autodiff` does not change the
    gradients; targets compute it as the identity inside an elementwise
    kernel.

    ```mlir
    %m = nn.stop_gradient %max : tensor<8x1xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def NN_GeluGradOp : NN_Op<"gelu_grad", [Pure, SameOperandsAndResultType,
                                         InferTypeOpInterface,
                                         NN_Elementwise]> {
  let summary = "GELU's input gradient";
  let description = [{
    For the input `x` of an `nn.gelu` and the cotangent `dy` of its result
    (both of one type), returns `dy · gelu'(x)`, the derivative of the tanh
    form: with t = tanh(√(2/π)·(x + 0.044715·x³)),
    gelu'(x) = 0.5·(1 + t) + 0.5·x·(1 − t²)·√(2/π)·(1 + 3·0.044715·x²).
    `nn-autodiff{decompose-gelu=false}` writes it for a target that lowers
    it (the CUDA target runs it in a GEMM's epilogue, cuBLASLt's DGELU);
    otherwise the gradient is elementwise ops.

    ```mlir
    %dx = nn.gelu_grad %x, %dy : tensor<8x16x128xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$cotangent);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input `,` $cotangent attr-dict `:` type($result)";
}

def NN_PowOp : NN_Op<"pow", [Pure, SameOperandsAndResultType,
                             InferTypeOpInterface, NN_Elementwise]> {
  let summary = "Raises every element to a constant power";
  let description = [{
    ```mlir
    %y = nn.pow %x, 3.0 : tensor<4xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, F64Attr:$exponent);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input `,` $exponent attr-dict `:` type($result)";
  let hasFolder = 1;
}

class NN_BinaryOp<string mnemonic, string title, string doc>
    : NN_Op<mnemonic, [Pure, InferTypeOpAdaptor, NN_Elementwise]> {
  let summary = "Elementwise " # title # " with broadcasting";
  let description = "Computes " # doc # [{ of two tensors of the same element
    type. Shapes broadcast as in NumPy: dimensions are aligned from the right,
    and each pair must be equal or contain a 1.

    ```mlir
    %y = nn.add %x, %bias : tensor<8x16x32xf32>, tensor<32xf32> -> tensor<8x16x32xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$lhs, NN_Tensor:$rhs);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &results) {
      return inferBroadcastResult(getOperationName(), loc, adaptor.getLhs(),
                                  adaptor.getRhs(), results);
    }
  }];
}

def NN_AddOp : NN_BinaryOp<"add", "sum", "the sum">;
def NN_SubOp : NN_BinaryOp<"sub", "difference", "the difference">;
def NN_MulOp : NN_BinaryOp<"mul", "product", "the product">;
def NN_DivOp : NN_BinaryOp<"div", "quotient", "the quotient">;
// NaN-propagating, as NumPy's maximum/minimum: clamps (gradient clipping,
// learning-rate warmup) must not hide a NaN.
def NN_MaximumOp : NN_BinaryOp<"maximum", "maximum",
                               "the larger (NaN if either is NaN)">;
def NN_MinimumOp : NN_BinaryOp<"minimum", "minimum",
                               "the smaller (NaN if either is NaN)">;

// A piecewise-constant mask: nn-autodiff builds the gradients of relu,
// maximum, minimum and reduce_max from it.
def NN_GreaterEqualOp : NN_BinaryOp<"greater_equal", "comparison",
    "1 where lhs ≥ rhs and 0 elsewhere (NaN compares false), in the operands' "
    "element type,">;

// An exact choice between two values: `cond·a + (1 − cond)·b` would turn an
// infinite or NaN `a` into NaN even where cond is 0, and rounds; training
// steps that skip an update (fp16 loss scaling) must keep the old value bit
// for bit.
def NN_SelectOp : NN_Op<"select", [Pure, NN_Elementwise,
    AllTypesMatch<["true_value", "false_value", "result"]>]> {
  let summary = "Chooses elementwise between two tensors by a mask";
  let description = [{
    Yields `true_value` where `cond` is non-zero and `false_value` where it
    is zero, element by element and bit for bit (a NaN condition counts as
    non-zero). `cond` is a float tensor (1/0 masks such as
    `nn.greater_equal`'s) whose shape broadcasts to the result's: aligned
    from the right, each dimension equal or 1, rank at most the result's, so
    a rank-0 condition selects a whole tensor. Both values have the
    result's type. `nn-optimizer` uses it to skip a step whose gradients
    are not finite (docs/training.md, "Mixed precision").

    ```mlir
    %r = nn.select %ok, %new, %old : tensor<f32>, tensor<4x8xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$cond, NN_Tensor:$true_value,
                       NN_Tensor:$false_value);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $cond `,` $true_value `,` $false_value attr-dict `:` type($cond) `,`
    type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def NN_MatmulOp : NN_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "Matrix product, 2-D or batched";
  let description = [{
    Multiplies the last two dimensions of `lhs` (M×K, or K×M with
    `transpose_lhs`) by those of `rhs` (K×N, or N×K with `transpose_rhs`).
    Leading dimensions are batch dimensions: both operands have the same
    batch dimensions, or `rhs` is 2-D and is applied to every batch of `lhs`
    (a weight shared across tokens). Operands have the same floating-point
    element type; the result has it too.

    ```mlir
    %y = nn.matmul %x, %w : tensor<8x16x32xf32>, tensor<32x96xf32> -> tensor<8x16x96xf32>
    %s = nn.matmul %q, %k {transpose_rhs} : tensor<4x16x8xf32>, tensor<4x16x8xf32> -> tensor<4x16x16xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$lhs, NN_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Normalizations and activations over an axis
//===----------------------------------------------------------------------===//

class NN_AxisOp<string mnemonic, string title, string doc>
    : NN_Op<mnemonic, [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = title # " along one axis";
  let description = "Computes " # doc # [{ along `axis` (0 ≤ axis < rank),
    in the numerically stable form that subtracts the maximum first.

    ```mlir
    %p = nn.}] # mnemonic # [{ %x {axis = 1 : i64} : tensor<4x10xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$axis);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def NN_SoftmaxOp : NN_AxisOp<"softmax", "Softmax", "softmax">;
def NN_LogSoftmaxOp : NN_AxisOp<"log_softmax", "Log-softmax", "log-softmax">;

def NN_LayerNormOp : NN_Op<"layer_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "Layer normalization over the last dimension";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) * weight + bias` over the last
    dimension, with the biased variance. `weight` and `bias` are 1-D with the
    size of the last dimension and the input's element type.

    ```mlir
    %y = nn.layer_norm %x, %w, %b {epsilon = 1.0e-05 : f64} : tensor<8x16x32xf32>, tensor<32xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       NN_FloatTensor:$bias, F64Attr:$epsilon);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight `,` $bias attr-dict `:` type($input) `,` type($weight)
    `,` type($bias)
  }];
  // The generated parser infers the result type before the attr-dict's
  // inherent attributes reach the properties (llvm-project#193284), so the
  // inference must not read `epsilon`; the verifier checks it.
  let hasVerifier = 1;
}

def NN_RMSNormOp : NN_Op<"rms_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "RMS normalization over the last dimension";
  let description = [{
    `x / sqrt(mean(x²) + epsilon) * weight` over the last dimension.

    ```mlir
    %y = nn.rms_norm %x, %w {epsilon = 1.0e-06 : f64} : tensor<8x32xf32>, tensor<32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       F64Attr:$epsilon);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` type($input) `,` type($weight)
  }];
  // As for layer_norm: inference must not read `epsilon`.
  let hasVerifier = 1;
}

// The input gradients of the normalizations, one row kernel on a target.
// Each also returns dy·x̂ per element, which autodiff sums into the weight's
// gradient with a reduction of its own: weight-gradient work (W) that ZB-H1
// can defer, while the op is input-gradient work (B).
class NN_NormGradOp<string mnemonic, string title>
    : NN_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = "The input gradient of nn." # title # ", and the weight gradient's terms";
  let results = (outs NN_FloatTensor:$input_grad, NN_FloatTensor:$weight_terms);
  // As for the forward ops: inference must not read `epsilon`.
  let hasVerifier = 1;
}

def NN_LayerNormGradOp
    : NN_NormGradOp<"layer_norm_grad", "layer_norm"> {
  let description = [{
    For the input `x`, weight and epsilon of an `nn.layer_norm` and the
    cotangent `dy` of its result (the input's type), returns, over the last
    dimension, `dx = r (ĝ - mean(ĝ) - x̂ mean(ĝ x̂))` and the weight
    gradient's terms `dy · x̂`, with x̂ = (x - mean(x)) r,
    r = 1 / sqrt(var(x) + epsilon) (the biased variance) and
    ĝ = dy · weight. The weight's gradient is the sum of the terms and the
    bias's the sum of dy over the leading dimensions: autodiff writes those
    sums as ops of their own (weight-gradient work, W, which ZB-H1 can
    defer), while this op is input-gradient work (B). The forward pass stores
    nothing for it; the row's statistics are recomputed.
    `nn-autodiff{decompose-norms=false}` writes it for a target that lowers
    it; otherwise the gradient is elementwise ops and reductions.

    ```mlir
    %dx, %terms = nn.layer_norm_grad %x, %w, %dy {epsilon = 1.0e-05 : f64} : tensor<8x16x32xf32>, tensor<32xf32>, tensor<8x16x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       NN_FloatTensor:$cotangent, F64Attr:$epsilon);
  let assemblyFormat = [{
    $input `,` $weight `,` $cotangent attr-dict `:` type($input) `,`
    type($weight) `,` type($cotangent)
  }];
}

def NN_RMSNormGradOp
    : NN_NormGradOp<"rms_norm_grad", "rms_norm"> {
  let description = [{
    For the input `x`, weight and epsilon of an `nn.rms_norm` and the
    cotangent `dy` of its result, returns, over the last dimension,
    `dx = r (ĝ - x̂ mean(ĝ x̂))` and the weight gradient's terms `dy · x̂`,
    with x̂ = x r, r = 1 / sqrt(mean(x²) + epsilon) and ĝ = dy · weight.
    The weight's gradient, the terms' sum over the leading dimensions, is
    a reduction of its own (W); see `nn.layer_norm_grad`.

    ```mlir
    %dx, %terms = nn.rms_norm_grad %x, %w, %dy {epsilon = 1.0e-06 : f64} : tensor<8x32xf32>, tensor<32xf32>, tensor<8x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       NN_FloatTensor:$cotangent, F64Attr:$epsilon);
  let assemblyFormat = [{
    $input `,` $weight `,` $cotangent attr-dict `:` type($input) `,`
    type($weight) `,` type($cotangent)
  }];
}

//===----------------------------------------------------------------------===//
// Embedding, attention, loss
//===----------------------------------------------------------------------===//

def NN_EmbeddingOp : NN_Op<"embedding", [Pure, InferTypeOpAdaptor]> {
  let summary = "Looks up rows of a table";
  let description = [{
    For a table of shape V×D and integer ids of any shape S, returns the
    rows `table[ids]` with shape S×D. Ids outside [0, V) are an error at run
    time.

    With `rows` = R (1 ≤ R ≤ V), only the first R rows are the vocabulary:
    ids must lie in [0, R), and the other V − R rows are padding that no id
    reads (`nn-pad-classes` writes it when it pads a table that is also an
    LM head).

    ```mlir
    %x = nn.embedding %wte, %tokens : tensor<256x32xf32>, tensor<8x16xi32> -> tensor<8x16x32xf32>
    %y = nn.embedding %padded, %tokens {rows = 250 : i64} : tensor<256x32xf32>, tensor<8x16xi32> -> tensor<8x16x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$table, NN_IntTensor:$ids,
                       OptionalAttr<I64Attr>:$rows);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $ids attr-dict `:` type($table) `,` type($ids) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The vocabulary: `rows`, or the table's first dimension.
    int64_t getRowCount() {
      if (auto rows = getRowsAttr())
        return rows.getInt();
      return getTable().getType().getShape()[0];
    }
  }];
}

def NN_OneHotOp : NN_Op<"one_hot", [Pure]> {
  let summary = "One-hot encodes integer ids";
  let description = [{
    For integer ids of any shape S and `classes` = V (V ≥ 1), returns the
    float tensor of shape S×V that is 1 where the last index equals the id
    at the other indices and 0 elsewhere (`jax.nn.one_hot`). The result's
    element type is any float type. Ids outside [0, V) are an error at run
    time, as for `nn.embedding`. With `nn.mul` and `nn.reduce_sum` it picks
    one element per row (`jnp.take_along_axis`). It has no gradient: its
    operand is integer.

    ```mlir
    %h = nn.one_hot %targets {classes = 256 : i64} : tensor<8x16xi32> -> tensor<8x16x256xf32>
    ```
  }];
  let arguments = (ins NN_IntTensor:$ids, I64Attr:$classes);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $ids attr-dict `:` type($ids) `->` type($result)
  }];
  let hasVerifier = 1;
}

def NN_AttentionOp : NN_Op<"attention", [Pure]> {
  let summary = "Multi-head scaled dot-product attention";
  let description = [{
    `q` is B×Tq×D, and D is split into `heads` heads of Dh = D/heads each.
    `k` and `v` are B×Tk×(kv_heads·Dh): with grouped-query attention
    (`kv_heads`, which divides `heads`; absent, it is `heads`) consecutive
    groups of heads/kv_heads query heads share a key and value head, query
    head h reading key and value head h / (heads/kv_heads) — what repeating
    each key and value head heads/kv_heads times would give, without the
    copies. Per head: `softmax(q·kᵀ·scale + mask)·v`, where `scale`
    defaults to 1/√Dh and, with `causal`, the mask hides keys after the
    query's position (causal attention needs Tq = Tk). The heads are
    concatenated back into a B×Tq×D result. `nn-decompose-attention` rewrites
    the op into matmuls, a softmax and reshapes (and, with `kv_heads`, a
    broadcast of the key and value heads over their groups).

    A second result, when the op has one, is each query row's log-sum-exp
    of its visible scores, `lse[b, h, i] = log Σ_j exp(scale·q_i·k_j)`, a
    B×heads×Tq f32 tensor whatever the operands' type: what
    `nn.attention_grad` needs to recompute the probabilities without a
    pass for their maximum and sum (`nn-autodiff{decompose-attention=false}`
    asks for it).

    ```mlir
    %y = nn.attention %q, %k, %v {causal, heads = 2 : i64} : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32> -> tensor<8x16x32xf32>
    %z = nn.attention %q, %kg, %vg {causal, heads = 4 : i64, kv_heads = 2 : i64} : tensor<8x16x32xf32>, tensor<8x16x16xf32>, tensor<8x16x16xf32> -> tensor<8x16x32xf32>
    %w, %lse = nn.attention %q, %k, %v {causal, heads = 2 : i64} : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32> -> tensor<8x16x32xf32>, tensor<8x2x16xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$query, NN_FloatTensor:$key,
                       NN_FloatTensor:$value, I64Attr:$heads,
                       UnitAttr:$causal, OptionalAttr<F64Attr>:$scale,
                       OptionalAttr<I64Attr>:$kv_heads);
  let results = (outs NN_FloatTensor:$result,
                      Optional<NN_FloatTensor>:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value attr-dict `:` type($query) `,` type($key) `,`
    type($value) `->` type($result) (`,` type($lse)^)?
  }];
  let builders = [
    // The result's type (and, with `withLse`, the log-sum-exp's) from the
    // operands; they must be valid (the verifier reports bad ones).
    OpBuilder<(ins "mlir::Value":$query, "mlir::Value":$key,
                   "mlir::Value":$value, "int64_t":$heads, "bool":$causal,
                   "mlir::FloatAttr":$scale, "mlir::IntegerAttr":$kv_heads,
                   CArg<"bool", "false">:$withLse)>
  ];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The type of the log-sum-exp for a query of type `query`:
    /// batch x heads x query length, f32.
    static mlir::RankedTensorType getLseType(mlir::RankedTensorType query,
                                             int64_t heads);
    /// The softmax scale: the explicit `scale`, or 1/sqrt(head dimension).
    double getEffectiveScale();
    /// The key and value heads: `kv_heads`, or `heads` without it.
    int64_t getKeyValueHeads();
  }];
}

def NN_AttentionGradOp : NN_Op<"attention_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradients of nn.attention with respect to query, key and value";
  let description = [{
    For the operands and attributes of an `nn.attention`, its two results
    `y` (B×Tq×D, the query's type) and `lse` (B×heads×Tq f32), and the
    cotangent `dy` of `y` (the query's type), returns the cotangents of the
    query, key and value. Per head, with P = exp(q·kᵀ·scale + mask − lse)
    (the softmax, from the forward pass's log-sum-exp) and dP = dy·vᵀ:
    dv = Pᵀ·dy, dS = P ∘ (dP − D) with D = rowsum(dy ∘ y) (which is
    rowsum(dP ∘ P)), dq = dS·k·scale, dk = dSᵀ·q·scale; with `kv_heads`, a
    key and value head's dk and dv sum those of the query heads of its
    group. No probability is stored: they are recomputed from the scores
    and `lse`, so a target can lower the pair without a Tq×Tk matrix in
    memory. `nn-autodiff{decompose-attention=false}` writes it;
    `nn-decompose-attention` does not touch it (a target that does not
    lower it asks autodiff to decompose `nn.attention` instead).

    ```mlir
    %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %y, %lse, %dy {causal, heads = 2 : i64} : tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x2x16xf32>, tensor<8x16x32xf32> -> tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$query, NN_FloatTensor:$key,
                       NN_FloatTensor:$value, NN_FloatTensor:$output,
                       NN_FloatTensor:$lse, NN_FloatTensor:$cotangent,
                       I64Attr:$heads, UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$scale,
                       OptionalAttr<I64Attr>:$kv_heads);
  let results = (outs NN_FloatTensor:$dquery, NN_FloatTensor:$dkey,
                      NN_FloatTensor:$dvalue);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $output `,` $lse `,` $cotangent attr-dict
    `:` type($query) `,` type($key) `,` type($value) `,` type($output) `,`
    type($lse) `,` type($cotangent) `->` type($dquery) `,` type($dkey) `,`
    type($dvalue)
  }];
  let extraClassDeclaration = [{
    /// The softmax scale: the explicit `scale`, or 1/sqrt(head dimension).
    double getEffectiveScale();
    /// The key and value heads: `kv_heads`, or `heads` without it.
    int64_t getKeyValueHeads();
  }];
}

def NN_CrossEntropyOp : NN_Op<"cross_entropy", [Pure, InferTypeOpAdaptor]> {
  let summary = "Mean cross-entropy of logits against integer targets";
  let description = [{
    `logits` has shape S×V and `targets` (integer class indices in [0, V))
    has shape S. Returns the mean over all positions of
    `-log_softmax(logits)[target]` as a rank-0 tensor of the logits' element
    type.

    With `classes` = C (1 ≤ C ≤ V), only the first C columns are classes:
    the softmax runs over them, targets must lie in [0, C), and the other
    V − C columns are padding that nothing reads (`nn-pad-classes` writes
    it when it pads the vocabulary).

    ```mlir
    %loss = nn.cross_entropy %logits, %targets : tensor<8x16x256xf32>, tensor<8x16xi32> -> tensor<f32>
    %padded = nn.cross_entropy %logits, %targets {classes = 250 : i64} : tensor<8x16x256xf32>, tensor<8x16xi32> -> tensor<f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$logits, NN_IntTensor:$targets,
                       OptionalAttr<I64Attr>:$classes);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $targets attr-dict `:` type($logits) `,` type($targets) `->`
    type($result)
  }];
  let extraClassDeclaration = [{
    /// The number of classes: `classes`, or the logits' last dimension.
    int64_t getClassCount() {
      if (auto classes = getClassesAttr())
        return classes.getInt();
      return getLogits().getType().getShape().back();
    }
  }];
}

def NN_EmbeddingGradOp : NN_Op<"embedding_grad", [Pure]> {
  let summary = "Scatter-adds rows into a zero table (embedding's gradient)";
  let description = [{
    The gradient of `nn.embedding` with respect to its table: for a
    cotangent of shape S×D and integer ids of shape S, returns the V×D
    table (V from the result type) whose row v is the sum of the cotangent
    rows at the positions where `ids` equals v, added in increasing
    row-major position order. Ids outside [0, V) are an error at run time.
    With `rows` = R, as for `nn.embedding`: ids must lie in [0, R) and the
    rows from R on are zero.

    ```mlir
    %dw = nn.embedding_grad %dx, %tokens : tensor<8x16x32xf32>, tensor<8x16xi32> -> tensor<256x32xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$cotangent, NN_IntTensor:$ids,
                       OptionalAttr<I64Attr>:$rows);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $cotangent `,` $ids attr-dict `:` type($cotangent) `,` type($ids) `->`
    type($result)
  }];
  let extraClassDeclaration = [{
    /// The vocabulary: `rows`, or the result's first dimension.
    int64_t getRowCount() {
      if (auto rows = getRowsAttr())
        return rows.getInt();
      return getType().getShape()[0];
    }
  }];
  let hasVerifier = 1;
}

def NN_CrossEntropyGradOp : NN_Op<"cross_entropy_grad",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of cross_entropy with respect to the logits";
  let description = [{
    For logits of shape S×V, integer targets of shape S and the rank-0
    cotangent `g` of the mean cross-entropy, returns
    `(softmax(logits) - onehot(targets)) · g / N` (N the number of
    positions), computed with the stable softmax that subtracts each row's
    maximum. With `classes` = C, as for `nn.cross_entropy`: the softmax runs
    over the first C columns and the gradient of the padding columns is 0.

    ```mlir
    %dl = nn.cross_entropy_grad %logits, %targets, %g : tensor<8x16x256xf32>, tensor<8x16xi32>, tensor<f32> -> tensor<8x16x256xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$logits, NN_IntTensor:$targets,
                       NN_FloatTensor:$cotangent,
                       OptionalAttr<I64Attr>:$classes);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $targets `,` $cotangent attr-dict `:` type($logits) `,`
    type($targets) `,` type($cotangent) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The number of classes: `classes`, or the logits' last dimension.
    int64_t getClassCount() {
      if (auto classes = getClassesAttr())
        return classes.getInt();
      return getLogits().getType().getShape().back();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def NN_ReshapeOp : NN_Op<"reshape", [Pure]> {
  let summary = "Reinterprets the shape, keeping row-major element order";
  let description = [{
    ```mlir
    %y = nn.reshape %x : tensor<8x16x32xf32> to tensor<128x32xf32>
    ```
  }];
  let arguments = (ins NN_CarriedTensor:$input);
  let results = (outs NN_CarriedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_TransposeOp : NN_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "Permutes dimensions";
  let description = [{
    Result dimension i is input dimension `permutation[i]`.

    ```mlir
    %y = nn.transpose %x, [0, 2, 1] : tensor<8x16x32xf32> -> tensor<8x32x16xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasFolder = 1;
}

def NN_BroadcastToOp : NN_Op<"broadcast_to", [Pure, NN_Elementwise]> {
  let summary = "Broadcasts to a larger shape";
  let description = [{
    NumPy broadcasting to the result type: the input's dimensions align with
    the result's trailing dimensions and each is equal or 1.

    ```mlir
    %y = nn.broadcast_to %b : tensor<32xf32> to tensor<8x32xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_ConcatOp : NN_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "Concatenates tensors along an axis";
  let description = [{
    ```mlir
    %y = nn.concat %a, %b {axis = 1 : i64} : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x10xf32>
    ```
  }];
  let arguments = (ins Variadic<NN_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type($inputs, $result)";
  let hasFolder = 1;
}

def NN_SliceOp : NN_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "Extracts a strided box";
  let description = [{
    Takes, along every dimension d, the elements `starts[d]`,
    `starts[d] + strides[d]`, ... below `limits[d]`.

    ```mlir
    %y = nn.slice %x [0, 8] to [4, 16] step [1, 1] : tensor<4x32xf32> -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$strides);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input $starts `to` $limits `step` $strides attr-dict `:` type($input)
    `->` type($result)
  }];
  let hasFolder = 1;
}

def NN_SplitOp : NN_Op<"split", [Pure, InferTypeOpAdaptor]> {
  let summary = "Splits a tensor along an axis into pieces of given sizes";
  let description = [{
    ```mlir
    %q, %k, %v = nn.split %qkv {axis = 2 : i64, sizes = array<i64: 32, 32, 32>} : tensor<8x16x96xf32> -> tensor<8x16x32xf32>, tensor<8x16x32xf32>, tensor<8x16x32xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, I64Attr:$axis,
                       DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<NN_Tensor>:$results);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($results)
  }];
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class NN_ReduceOp<string mnemonic, string title, string doc>
    : NN_Op<mnemonic, [Pure, InferTypeOpAdaptor, NN_Reduction]> {
  let summary = title # " over a set of axes";
  let description = "Reduces with " # doc # [{ over `axes` (distinct,
    increasing, each in [0, rank)). With `keepdims` the reduced dimensions
    stay as size 1; otherwise they are dropped.

    ```mlir
    %s = nn.}] # mnemonic # [{ %x [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input $axes (`keepdims` $keepdims^)? attr-dict `:` type($input) `->`
    type($result)
  }];
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> loc,
        Adaptor adaptor, ::llvm::SmallVectorImpl<::mlir::Type> &results) {
      return inferReduceResult(getOperationName(), loc, adaptor.getInput(),
                               adaptor.getAxes(), adaptor.getKeepdims(),
                               results);
    }
    ::mlir::OpFoldResult $cppClass::fold(FoldAdaptor) {
      return foldReduce(getOperation(), getAxes());
    }
  }];
  let hasFolder = 1;
}

def NN_ReduceSumOp : NN_ReduceOp<"reduce_sum", "Sum", "the sum">;
def NN_ReduceMeanOp : NN_ReduceOp<"reduce_mean", "Mean", "the mean">;
def NN_ReduceMaxOp : NN_ReduceOp<"reduce_max", "Maximum", "the maximum">;

//===----------------------------------------------------------------------===//
// Pipeline structure
//===----------------------------------------------------------------------===//

def NN_StageEndOp : NN_Op<"stage_end", [InferTypeOpAdaptor]> {
  let summary = "Marks the end of a pipeline stage";
  let description = [{
    The user's "pipeline stage ends here" (like `pipe_split` or
    `mark_stage_end`): returns its operands unchanged, and everything that
    depends on its results belongs to a later stage than what it depends on.
    `mpmd-partition` cuts the graph at these markers. The op is not folded
    away: it has no effect on values, but it carries the user's intent.

    ```mlir
    %h = nn.stage_end %x : tensor<8x16x32xf32>
    ```
  }];
  let arguments = (ins Variadic<NN_CarriedTensor>:$inputs);
  let results = (outs Variadic<NN_CarriedTensor>:$results);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
}

include "tandem/Dialect/NN/IR/NNCodecOps.td"

#endif // TANDEM_DIALECT_NN_IR_NNOPS_TD
