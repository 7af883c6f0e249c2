//===- FunctionEmitter.h - C++ for one function (CPU target) ----*- C++ -*-===//
//
// Private to lib/Target/CPU: the per-function emitter behind emitCpp and
// the helpers its pieces share. CppEmitter.cpp emits storage, the body and
// the non-fused kernels; KernelGroups.cpp reads the kernels recorded in the
// IR (tandem/Lowering/Kernels.h) as groups;
// FusedKernels.cpp writes the fused functions (elementwise groups,
// reductions with their prologue and epilogue, GEMM epilogues);
// EmitterSupport.cpp holds types, literals and loop helpers.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LIB_TARGET_CPU_FUNCTIONEMITTER_H
#define TANDEM_LIB_TARGET_CPU_FUNCTIONEMITTER_H

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Lowering/IndexChecks.h"
#include "tandem/Lowering/Indexing.h"
#include "tandem/Lowering/ScratchPlan.h"
#include "tandem/Target/CPU/CppEmitter.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include "llvm/Support/raw_ostream.h"
#include <map>

#include <optional>
#include <string>
#include <vector>

namespace tandem::cpu::detail {

using llvm::StringRef;
using mlir::Block;
using mlir::DenseElementsAttr;
using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Type;
using mlir::Value;

//===----------------------------------------------------------------------===//
// Types, literals and loops (EmitterSupport.cpp)
//===----------------------------------------------------------------------===//

/// The C++ storage type of `type`'s elements, or nullopt when the emitter
/// does not support it yet.
std::optional<StringRef> cType(Type type);
RankedTensorType tensorType(Value value);
StringRef cTypeOf(Value value);
int64_t numElements(Value value);
/// Elements of a tensor of `shape` (1 for rank 0).
int64_t numElementsOf(llvm::ArrayRef<int64_t> shape);
/// Bytes of `value`'s elements.
int64_t byteSize(Value value);
/// A C++ expression of type double with exactly `value`.
std::string doubleLiteral(double value);
/// A C++ expression of the element's storage type with exactly the
/// constant's `index`th element.
/// Appends array `name` of `value`'s elements (C type `type`) to `out`: an
/// initializer list, or, when runs of equal elements make it at least 8
/// times shorter (a causal mask has two runs per row), run lengths that a
/// `name`_expand() expands on first use (returns true then), so the
/// compiler never parses a million-element initializer.
bool emitDenseConstant(std::string &out, llvm::StringRef name,
                       DenseElementsAttr value, llvm::StringRef type);
std::string elementLiteral(DenseElementsAttr value, int64_t index,
                           StringRef type);
using lowering::broadcastStrides;
using lowering::offsetExpr;
using lowering::rowMajorStrides;
/// Writes `for` loops over every dimension of `shape` (variables d0, d1..)
/// and returns the number of braces to close. Rank 0 opens one block.
/// `parallel`: OpenMP over the outermost loop; `simd`: the innermost loop's
/// iterations are independent (`omp simd`).
int openLoops(llvm::raw_ostream &os, llvm::ArrayRef<int64_t> shape,
              StringRef indent, bool parallel = false, bool simd = false);
void closeLoops(llvm::raw_ostream &os, int count, StringRef indent);

/// Ops that compute each result element from the operand elements at the
/// same (broadcast) index: these fuse.
bool isElementwise(Operation *op);
/// Reductions over axes: they fuse with elementwise producers of their input
/// and consumers of their result.
bool isReduction(Operation *op);
/// Elementwise ops whose results may hold integers (pure data movement).
bool allowsIntegerResult(Operation *op);

//===----------------------------------------------------------------------===//
// Translation unit
//===----------------------------------------------------------------------===//

/// The parts of the translation unit shared by every function: constants
/// and deduplicated fused-group functions.
struct Unit {
  std::string constants;
  std::string groups;
  /// Group body text (without its name) -> function name.
  llvm::StringMap<std::string> groupByBody;
  llvm::StringSet<> groupNames;
  /// Dense constants already emitted (attribute and C type) -> array name:
  /// the same mask on every layer is one array.
  std::map<std::pair<const void *, std::string>, std::string> constantNames;
  unsigned numConstants = 0;
  /// Constants stored as run lengths: tk_expand_constants() expands them.
  std::vector<std::string> expanders;
  unsigned numGroupCalls = 0;
  /// The index checks the entry points report (IndexChecks.h).
  tandem::lowering::IndexCheckTable indexChecks;
};

/// A fused group: elementwise ops with one iteration shape, optionally
/// around one reduction, optionally the epilogue of one matmul.
struct Group {
  llvm::SmallVector<Operation *> members;
  /// The iteration shape; for a group with a reduction, the reduction's
  /// result shape (its epilogue's shape).
  llvm::SmallVector<int64_t> shape;
  /// Program position of the first member.
  unsigned first = 0;
  /// A reduce_sum/mean/max member: the members before it (its prologue)
  /// iterate over its input's shape, the members after it (its epilogue)
  /// over its result's shape.
  Operation *reduction = nullptr;
  /// A matmul whose result only this group reads: the GEMM writes into
  /// `gemmOutput`'s buffer and the group rewrites that buffer in place.
  Operation *gemm = nullptr;
  Value gemmOutput;
  /// An output may be the memory of an input (an in-place parameter update,
  /// KernelPlan::inPlace): the function's pointers lose `__restrict`, and
  /// its `omp simd` loop, reading each element before writing it, stays
  /// vectorized.
  bool mayAlias = false;
};

class FunctionEmitter {
public:
  FunctionEmitter(Operation *function, Unit &unit, const EmitOptions &options)
      : function(function), unit(unit), options(options) {}

  FailureOr<EmittedFunction> emit(llvm::raw_ostream &os);

private:
  LogicalResult checkOp(Operation *op);
  /// The kernels recorded in the IR (or, when none are, formed under
  /// `options` without changing it) as groups, and the in-place results.
  LogicalResult loadKernels();
  unsigned definedAt(Value value);
  LogicalResult assignStorage();
  LogicalResult emitBody(llvm::raw_ostream &os);
  std::string newName() { return "v" + std::to_string(counter++); }
  /// Scratch for `bytes` written at emission time `start` and last read at
  /// `end` (inclusive): an offset token that `scratch.place` resolves.
  std::string allocate(int64_t bytes, unsigned start, unsigned end);
  /// Scratch live only while the current op's kernel runs.
  std::string allocateTemporary(int64_t bytes) {
    return allocate(bytes, now, now);
  }
  /// When `op`'s code runs: a group member runs with its group, at the
  /// group's last member.
  unsigned emitTime(Operation *op);
  /// The last emission time at which `value`'s memory is read, following
  /// views (reshape, stage_end) to their readers.
  unsigned lastRead(Value value);
  /// The pointer expression of `value`'s buffer.
  std::string ptr(Value value) { return pointers.lookup(value); }
  bool inGroup(Operation *op, int group) {
    auto it = groupOf.find(op);
    return it != groupOf.end() && it->second == group;
  }

  void emitGroup(llvm::raw_ostream &os, int group);
  std::string groupExpr(Operation *op, llvm::ArrayRef<std::string> operands);
  void writeLoads(llvm::raw_ostream &b, llvm::ArrayRef<Operation *> readers,
                  llvm::ArrayRef<Value> inputs,
                  llvm::function_ref<std::string(Value)> indexOf,
                  StringRef indent, llvm::DenseMap<Value, std::string> &local);
  void writeMembers(llvm::raw_ostream &b, const Group &group,
                    llvm::ArrayRef<Operation *> ops, StringRef indent,
                    llvm::DenseMap<Value, std::string> &local);
  void writeElementwiseLoops(llvm::raw_ostream &b, int groupIndex,
                             llvm::ArrayRef<Value> inputs,
                             llvm::ArrayRef<Value> outputs);
  void writeReductionLoops(llvm::raw_ostream &b, int groupIndex,
                           llvm::ArrayRef<Value> inputs,
                           llvm::ArrayRef<Value> outputs);
  LogicalResult emitKernel(llvm::raw_ostream &os, Operation *op);
  void emitMatmul(llvm::raw_ostream &os, tandem::nn::MatmulOp op);
  void emitSoftmax(llvm::raw_ostream &os, Operation *op, int64_t axis,
                   bool log);
  /// nn.quantize and nn.dequantize (CodecEmitter.cpp).
  void emitQuantize(llvm::raw_ostream &os, nn::QuantizeOp op);
  void emitDequantize(llvm::raw_ostream &os, nn::DequantizeOp op);
  void emitStrided(llvm::raw_ostream &os, Value in, Value out,
                   llvm::ArrayRef<int64_t> strides, int64_t base);

  Operation *function;
  Unit &unit;
  const EmitOptions &options;
  Block *body = nullptr;
  EmittedFunction info;
  unsigned counter = 0;
  /// 64-byte alignment: cache lines, and any vector width.
  tandem::lowering::ScratchPlan scratch{64};
  /// Emission time of the op being emitted (emitBody).
  unsigned now = 0;
  llvm::DenseMap<Value, std::string> pointers;
  /// Declarations at the top of the entry point.
  std::string declarations;
  llvm::DenseMap<Operation *, unsigned> position;
  llvm::DenseMap<Operation *, int> groupOf;
  std::vector<Group> groups;
  /// Splat constants: their one element as a literal.
  llvm::DenseMap<Value, std::string> splats;
  /// Values written directly into their result slot.
  llvm::DenseSet<Value> inPlace;
};

} // namespace tandem::cpu::detail

#endif // TANDEM_LIB_TARGET_CPU_FUNCTIONEMITTER_H
