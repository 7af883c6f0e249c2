//===- PadClasses.cpp - pad a vocabulary to a multiple for the GEMMs ------===//
//
// Stores an LM head's weight padded along the vocabulary so the logits GEMM
// has an aligned dimension, and tells the loss how many columns are
// classes. The padding is zero at initialization and stays zero: the loss
// gives its logits a zero gradient, so the weight's padding gets none.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Dialect/NN/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

namespace tandem::nn {
#define GEN_PASS_DEF_NNPADCLASSES
#include "tandem/Dialect/NN/Transforms/Passes.h.inc"
} // namespace tandem::nn

using namespace mlir;
using namespace tandem::nn;

namespace {

/// What padding one parameter means for the IR: the reads, the logits
/// products and the losses whose types change.
struct Padding {
  /// The padded dimension of the parameter (0: rows, 1: columns) and the
  /// class count (the parameter's size there).
  int64_t dim = -1, classes = 0;
  SmallVector<ParamOp> reads;
  SmallVector<EmbeddingOp> embeddings;
  SmallVector<MatmulOp> products;
  SmallVector<CrossEntropyOp> losses;
  /// A use that padding would change the meaning of.
  bool blocked = false;
};

/// The loss that `product` (a logits GEMM) feeds as its only use, if it
/// has no `classes` yet.
CrossEntropyOp lossOf(MatmulOp product) {
  if (!product.getResult().hasOneUse())
    return {};
  auto loss = dyn_cast<CrossEntropyOp>(*product.getResult().user_begin());
  if (!loss || loss.getLogits() != product.getResult() || loss.getClasses())
    return {};
  return loss;
}

/// Records how `read` is used into `padding`, or marks it blocked.
void classify(ParamOp read, Padding &padding) {
  padding.reads.push_back(read);
  auto agree = [&](int64_t dim) {
    if (padding.dim >= 0 && padding.dim != dim)
      padding.blocked = true;
    padding.dim = dim;
  };
  for (OpOperand &use : read.getResult().getUses()) {
    Operation *user = use.getOwner();
    if (auto embedding = dyn_cast<EmbeddingOp>(user);
        embedding && use.getOperandNumber() == 0) {
      // Ids index the rows; told the vocabulary, the embedding rejects
      // ids of the padded rows.
      agree(0);
      padding.embeddings.push_back(embedding);
      continue;
    }
    auto product = dyn_cast<MatmulOp>(user);
    CrossEntropyOp loss;
    if (product && use.getOperandNumber() == 1)
      loss = lossOf(product);
    if (!loss) {
      padding.blocked = true;
      continue;
    }
    // The logits' columns are the right-hand side's columns, or its rows
    // when it is transposed.
    agree(product.getTransposeRhs() ? 0 : 1);
    padding.products.push_back(product);
    padding.losses.push_back(loss);
  }
}

struct PadClassesPass : tandem::nn::impl::NNPadClassesBase<PadClassesPass> {
  using NNPadClassesBase::NNPadClassesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (multiple < 1) {
      module.emitError() << "nn-pad-classes: multiple must be at least 1, "
                            "found "
                         << static_cast<int64_t>(multiple);
      return signalPassFailure();
    }
    if (multiple == 1)
      return;
    llvm::MapVector<StringAttr, Padding> paddings;
    module.walk([&](ParamOp read) {
      classify(read, paddings[read.getNameAttr().getAttr()]);
    });
    SymbolTable symbols(module);
    for (auto &[name, padding] : paddings) {
      auto parameter = symbols.lookup<ParameterOp>(name);
      if (padding.blocked || padding.losses.empty() || !parameter ||
          parameter.getLogicalShape() ||
          parameter.getTensorType().getRank() != 2)
        continue;
      if (failed(pad(parameter, padding)))
        return signalPassFailure();
    }
  }

  LogicalResult pad(ParameterOp parameter, Padding &padding) {
    RankedTensorType type = parameter.getTensorType();
    int64_t classes = type.getDimSize(padding.dim);
    if (classes % multiple == 0)
      return success();
    // Every product's logits and every loss must see the parameter's
    // vocabulary as its class dimension.
    for (auto [product, loss] : llvm::zip(padding.products, padding.losses))
      if (product.getType().getShape().back() != classes)
        return success();
    std::optional<int64_t> padded = llvm::checkedMul<int64_t>(
        llvm::divideCeil(classes, multiple), multiple);
    std::optional<int64_t> elements =
        padded ? llvm::checkedMul<int64_t>(*padded,
                                           type.getDimSize(1 - padding.dim))
               : std::nullopt;
    if (!elements)
      return parameter.emitError()
             << "nn-pad-classes: padding " << classes << " classes to a "
             << "multiple of " << static_cast<int64_t>(multiple)
             << " overflows";
    SmallVector<int64_t> shape(type.getShape());
    shape[padding.dim] = *padded;
    auto paddedType = RankedTensorType::get(shape, type.getElementType());
    parameter.setLogicalShape(type.getShape());
    parameter.setType(paddedType);
    for (ParamOp read : padding.reads)
      read.getResult().setType(paddedType);
    for (auto [product, loss] : llvm::zip(padding.products, padding.losses)) {
      SmallVector<int64_t> logits(product.getType().getShape());
      logits.back() = *padded;
      product.getResult().setType(
          RankedTensorType::get(logits, product.getType().getElementType()));
      loss.setClasses(classes);
    }
    for (EmbeddingOp embedding : padding.embeddings)
      if (!embedding.getRows())
        embedding.setRows(classes);
    return success();
  }
};

} // namespace
