//===- NNBase.td - nn dialect definition and type constraints --*- tablegen -*-===//
//
// The `nn` dialect holds a model graph: the forward pass and the loss, with
// trainable parameters as module-level symbols. Every other Tandem phase
// (autodiff, optimizers, partitioning, lowering) starts from this form.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_NN_IR_NNBASE_TD
#define TANDEM_DIALECT_NN_IR_NNBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def NN_Dialect : Dialect {
  let name = "nn";
  let cppNamespace = "::tandem::nn";
  let summary = "Model graphs for pipeline-parallel training";
  let description = [{
    The `nn` dialect describes a model: a function computing the forward pass
    and a scalar loss from inputs (tokens, targets, features) passed as
    function arguments, reading trainable parameters declared as module-level
    `nn.parameter` symbols. Values are statically shaped tensors of f64, f32,
    f16, bf16, f8E4M3FN, f8E5M2, i32 or i64, and i8 for the codes of
    `nn.quantize`, which only `nn.dequantize`, `nn.reshape` and
    `nn.stage_end` take. The user marks where a pipeline
    stage ends with `nn.stage_end`.

    Ops whose result is determined by their operands implement
    `InferTypeOpInterface`, so builders need not spell the result type; the
    verifiers report what was expected and what was found.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasOperationAttrVerify = 1;
}

// Every nn op but nn.parameter computes, so it belongs in a function (a
// func.func or an mpmd fragment): at module level nothing would run it and
// the rank programs would silently drop it.
def NN_InsideFunction : NativeOpTrait<"InsideFunction"> {
  let cppNamespace = "::tandem::nn";
}

// Kernel formation (tandem-form-kernels, docs/targets.md) reads these, not
// op lists. Elementwise: each result element is computed from the operand
// elements at the same (NumPy-broadcast) index, so chains of such ops fuse
// into one loop. Reduction: reduces its input over axes, so it fuses with
// the elementwise producers of its input and consumers of its result.
def NN_Elementwise : NativeOpTrait<"ElementwiseKernel"> {
  let cppNamespace = "::tandem::nn";
}
def NN_Reduction : NativeOpTrait<"ReductionKernel"> {
  let cppNamespace = "::tandem::nn";
}

class NN_Op<string mnemonic, list<Trait> traits = []>
    : Op<NN_Dialect, mnemonic, !listconcat(traits, [NN_InsideFunction])>;

// The module-level declarations (nn.parameter) take their traits as given.
class NN_DeclarationOp<string mnemonic, list<Trait> traits = []>
    : Op<NN_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def NN_FloatElement : AnyTypeOf<[F64, F32, F16, BF16, F8E4M3FN, F8E5M2]>;
def NN_IntElement : AnyTypeOf<[I32, I64]>;

def NN_FloatTensor
    : StaticShapeTensorOf<[F64, F32, F16, BF16, F8E4M3FN, F8E5M2]>;
def NN_IntTensor : StaticShapeTensorOf<[I32, I64]>;
def NN_Tensor
    : StaticShapeTensorOf<[F64, F32, F16, BF16, F8E4M3FN, F8E5M2, I32, I64]>;
// What nn.stage_end and nn.reshape carry unchanged: also the i8 codes of
// nn.quantize, which no arithmetic reads.
def NN_CarriedTensor
    : StaticShapeTensorOf<[F64, F32, F16, BF16, F8E4M3FN, F8E5M2, I32, I64,
                           I8]>;

#endif // TANDEM_DIALECT_NN_IR_NNBASE_TD
