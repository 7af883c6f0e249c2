//===- NNAttrs.td - nn dialect attributes ----------------------*- tablegen -*-===//

#ifndef TANDEM_DIALECT_NN_IR_NNATTRS_TD
#define TANDEM_DIALECT_NN_IR_NNATTRS_TD

include "tandem/Dialect/NN/IR/NNBase.td"
include "mlir/IR/EnumAttr.td"

def NN_InitKind : I32EnumAttr<"InitKind", "parameter initializer kind", [
    I32EnumAttrCase<"Zeros", 0, "zeros">,
    I32EnumAttrCase<"Ones", 1, "ones">,
    I32EnumAttrCase<"Normal", 2, "normal">,
    I32EnumAttrCase<"Uniform", 3, "uniform">,
    I32EnumAttrCase<"Orthonormal", 4, "orthonormal">
  ]> {
  let cppNamespace = "::tandem::nn";
  let genSpecializedAttr = 0;
}

def NN_InitializerAttr : AttrDef<NN_Dialect, "Initializer"> {
  let mnemonic = "init";
  let summary = "How a parameter is initialized";
  let description = [{
    One of `zeros`, `ones`, `normal(std)` (mean 0), `uniform(low, high)` or
    `orthonormal`. The runtime and the reference evaluator draw the values
    from the same counter-based generator, so both produce bitwise the same
    parameters. `orthonormal` views the tensor as a matrix (the last
    dimension is the columns, the others the rows; rows >= columns) and
    fills it with the Q factor of a seeded standard normal matrix, computed
    in double by Gram-Schmidt run twice: the columns are orthonormal.

    ```mlir
    #nn.init<normal(0.02)>
    #nn.init<uniform(-0.1, 0.1)>
    #nn.init<zeros>
    #nn.init<orthonormal>
    ```
  }];
  // `a` is the standard deviation (normal) or the low bound (uniform); `b`
  // is the high bound (uniform). Unused ones are zero.
  let parameters = (ins "InitKind":$kind, "::llvm::APFloat":$a,
                        "::llvm::APFloat":$b);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Parses and prints the initializer without the `#nn.init<...>` wrapper,
    /// as `nn.parameter` spells it.
    static ::mlir::Attribute parseBody(::mlir::AsmParser &parser);
    void printBody(::mlir::AsmPrinter &printer) const;

    double getAValue() const { return getA().convertToDouble(); }
    double getBValue() const { return getB().convertToDouble(); }

    static InitializerAttr getZeros(::mlir::MLIRContext *ctx) {
      return get(ctx, InitKind::Zeros, ::llvm::APFloat(0.0),
                 ::llvm::APFloat(0.0));
    }
    static InitializerAttr getOnes(::mlir::MLIRContext *ctx) {
      return get(ctx, InitKind::Ones, ::llvm::APFloat(0.0),
                 ::llvm::APFloat(0.0));
    }
    static InitializerAttr getNormal(::mlir::MLIRContext *ctx, double stddev) {
      return get(ctx, InitKind::Normal, ::llvm::APFloat(stddev),
                 ::llvm::APFloat(0.0));
    }
    static InitializerAttr getOrthonormal(::mlir::MLIRContext *ctx) {
      return get(ctx, InitKind::Orthonormal, ::llvm::APFloat(0.0),
                 ::llvm::APFloat(0.0));
    }
    static InitializerAttr getUniform(::mlir::MLIRContext *ctx, double low,
                                      double high) {
      return get(ctx, InitKind::Uniform, ::llvm::APFloat(low),
                 ::llvm::APFloat(high));
    }
  }];
}

def NN_GradKind : I32EnumAttr<"GradKind", "kind of backward work", [
    I32EnumAttrCase<"B", 0, "B">,
    I32EnumAttrCase<"W", 1, "W">
  ]> {
  let cppNamespace = "::tandem::nn";
  let genSpecializedAttr = 0;
}

def NN_GradAttr : AttrDef<NN_Dialect, "Grad"> {
  let mnemonic = "grad";
  let summary = "Which forward op a backward op differentiates, and how";
  let description = [{
    Attached by `nn-autodiff` (as the discardable attribute `nn.grad`) to
    every backward op of a gradient function. `of` is the `nn.id` of the
    forward op whose gradient rule produced the op. `B` marks input-gradient
    work (on the path from the loss to a function argument's cotangent,
    needed by the previous pipeline stage); `W` marks weight-gradient work
    (it only contributes to parameter gradients, needed by the optimizer).
    A `W` op's result never feeds a `B` op.

    ```mlir
    %d = nn.matmul %x, %dy {nn.grad = #nn.grad<W, of = 12>, transpose_lhs} : ...
    ```
  }];
  let parameters = (ins EnumParameter<NN_GradKind>:$kind, "int64_t":$of);
  let assemblyFormat = "`<` $kind `,` `of` `=` $of `>`";
}

#endif // TANDEM_DIALECT_NN_IR_NNATTRS_TD
