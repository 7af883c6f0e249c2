//===- NNOps.h - nn dialect operations --------------------------*- C++ -*-===//

#ifndef TANDEM_DIALECT_NN_IR_NNOPS_H
#define TANDEM_DIALECT_NN_IR_NNOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tandem/Dialect/NN/IR/NNAttrs.h"
#include "tandem/Dialect/NN/IR/NNDialect.h"

namespace tandem::nn {

/// Fails, naming the op, when `op` sits directly in a module.
llvm::LogicalResult verifyInsideFunction(mlir::Operation *op);

/// The most bytes one tensor may hold: 2^48 (256 TiB), beyond the memory of
/// any machine a rank runs on; the runtime's manifest reader refuses more
/// too (tandem::runtime::kMaxBytes).
inline constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 48;

/// Fails, naming the op, `what` and the size, when `type` is a ranked
/// tensor of more than kMaxTensorBytes (computed in checked arithmetic, so
/// a shape whose element count overflows 64 bits is refused too).
llvm::LogicalResult verifyTensorSize(mlir::Operation *op, mlir::Type type,
                                     const llvm::Twine &what);

/// verifyTensorSize for every operand and result of `op`.
llvm::LogicalResult verifyTensorSizes(mlir::Operation *op);

/// The trait of every nn op that computes (all but nn.parameter): it sits
/// in a function, and every tensor it reads or makes fits a machine.
template <typename ConcreteType>
class InsideFunction
    : public mlir::OpTrait::TraitBase<ConcreteType, InsideFunction> {
public:
  static llvm::LogicalResult verifyTrait(mlir::Operation *op) {
    if (llvm::failed(verifyInsideFunction(op)))
      return llvm::failure();
    return verifyTensorSizes(op);
  }
};

/// Ops whose result elements each come from the operand elements at the same
/// (broadcast) index: kernel formation fuses chains of them into one loop.
template <typename ConcreteType>
class ElementwiseKernel
    : public mlir::OpTrait::TraitBase<ConcreteType, ElementwiseKernel> {};

/// Reductions over axes: kernel formation fuses them with the elementwise
/// producers of their input and consumers of their result.
template <typename ConcreteType>
class ReductionKernel
    : public mlir::OpTrait::TraitBase<ConcreteType, ReductionKernel> {};

/// Result type of a NumPy-broadcasting elementwise op `opName` on `lhs` and
/// `rhs`; reports an error at `loc` (when given) if the shapes or element
/// types are incompatible.
llvm::LogicalResult
inferBroadcastResult(llvm::StringRef opName, std::optional<mlir::Location> loc,
                     mlir::Value lhs, mlir::Value rhs,
                     llvm::SmallVectorImpl<mlir::Type> &results);

/// NumPy broadcast of two shapes, or failure if they are incompatible.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// Result type of a reduction over `axes`.
llvm::LogicalResult
inferReduceResult(llvm::StringRef opName, std::optional<mlir::Location> loc,
                  mlir::Value input, llvm::ArrayRef<int64_t> axes,
                  bool keepdims, llvm::SmallVectorImpl<mlir::Type> &results);

/// Folds a reduction over no axes to its input.
mlir::OpFoldResult foldReduce(mlir::Operation *op,
                              llvm::ArrayRef<int64_t> axes);

/// True for the f8 element types, whose casts need an explicit overflow
/// choice.
bool isFloat8(mlir::Type type);

/// The tandem_codec::Code (include/tandem/Support/Codec.h) of a codec
/// payload's element type (i8, f8E4M3FN, f8E5M2), or -1 for another type.
int payloadCode(mlir::Type elementType);

/// Whether `op` may read or write codec payloads (i8 and f8 codes, stored
/// by generated code as a byte each): the codecs, data movement that copies
/// bytes unchanged, and terminators, which return them. Every target
/// refuses payloads anywhere else.
bool handlesPayloads(mlir::Operation *op);

/// The shape of the scales of `shape` quantized in blocks of `block` along
/// the last dimension: the last dimension becomes ceil(n / block).
llvm::SmallVector<int64_t> blockScalesShape(llvm::ArrayRef<int64_t> shape,
                                            int64_t block);

} // namespace tandem::nn

#define GET_OP_CLASSES
#include "tandem/Dialect/NN/IR/NNOps.h.inc"

#endif // TANDEM_DIALECT_NN_IR_NNOPS_H
