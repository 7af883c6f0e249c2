//===- FusionGroups.cpp - what the CPU emitter fuses ----------------------===//
//
// Greedy grouping in program order: elementwise ops into groups of one
// iteration shape, reductions with the groups producing their input
// (prologue) and consuming their result (epilogue), and groups that are
// the only reader of a matmul as its in-place epilogue. docs/cpu-backend.md
// ("Fusion") states the rules.
//
//===----------------------------------------------------------------------===//

#include "FunctionEmitter.h"

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
namespace nn = tandem::nn;

namespace tandem::cpu::detail {

/// Where a value's data comes into existence: parameters and constants exist
/// from the start, views when their source does.
unsigned FunctionEmitter::definedAt(Value value) {
  Operation *def = value.getDefiningOp();
  if (!def || isa<nn::ParamOp, nn::ConstantOp>(def))
    return 0;
  if (isa<nn::ReshapeOp, nn::StageEndOp>(def))
    return definedAt(def->getOperand(cast<OpResult>(value).getResultNumber()));
  return position[def];
}

/// Whether elementwise `op` may join group `groupIndex` (through one of its
/// operands defined there): its result has the group's shape and the group
/// is not sealed. In a group with a reduction only the epilogue grows: `op`
/// may read the reduction's result and epilogue values, not prologue values
/// (those exist only inside the reduction's inner loop).
///
/// Operands from outside the group need no check: they are defined before
/// `op`, and a group that produced one is sealed by the read, so it runs
/// before `op` and hence before this group, which runs at its last op.
bool FunctionEmitter::canJoin(Operation *op, int groupIndex) {
  Group &group = groups[groupIndex];
  if (group.sealed || llvm::ArrayRef<int64_t>(group.shape) !=
                          tensorType(op->getResult(0)).getShape())
    return false;
  return llvm::all_of(op->getOperands(), [&](Value operand) {
    Operation *def = operand.getDefiningOp();
    if (!inGroup(def, groupIndex))
      return true;
    return !group.reduction || def == group.reduction ||
           position[def] > position[group.reduction];
  });
}

/// Moves every member of group `from` into group `into`, keeping members in
/// program order. Both are unsealed elementwise groups of one shape: no op
/// outside either has read their values, so the union may run at the later
/// of their last ops, where every member's operands exist.
void FunctionEmitter::mergeGroups(int into, int from) {
  Group &target = groups[into], &source = groups[from];
  for (Operation *member : source.members)
    groupOf[member] = into;
  target.members.append(source.members.begin(), source.members.end());
  llvm::sort(target.members, [&](Operation *a, Operation *b) {
    return position[a] < position[b];
  });
  target.first = std::min(target.first, source.first);
  source.members.clear();
}

/// Greedy fusion in program order. An elementwise op joins the group of one
/// of its operands when canJoin allows it. Then the group can run at its
/// last op's position: everything it reads exists before its first op, and
/// nothing outside it reads its values before its last op.
///
/// A reduction takes the group of its input as its prologue when that group
/// is not sealed (the reduction is the first op outside it to read its
/// values, so values others read later can be stored from inside the
/// reduction's loop, which visits every input element once) and iterates
/// over the input's shape; later elementwise ops of the result's shape join
/// as its epilogue.
void FunctionEmitter::formGroups() {
  unsigned index = 0;
  for (Operation &op : body->getOperations())
    position[&op] = ++index; // Arguments are at position 0.
  auto groupOfValue = [&](Value value) -> int {
    Operation *def = value.getDefiningOp();
    auto it = def ? groupOf.find(def) : groupOf.end();
    return it == groupOf.end() ? -1 : it->second;
  };
  auto newGroup = [&](Operation *op, llvm::ArrayRef<int64_t> shape) {
    Group group;
    group.shape.assign(shape.begin(), shape.end());
    group.first = position[op];
    groups.push_back(std::move(group));
    return static_cast<int>(groups.size()) - 1;
  };
  for (Operation &op : body->getOperations()) {
    int joined = -1;
    if (isReduction(&op)) {
      Value input = op.getOperand(0);
      int prologue = options.fuseReductions ? groupOfValue(input) : -1;
      if (prologue >= 0 && !groups[prologue].sealed &&
          !groups[prologue].reduction &&
          llvm::ArrayRef<int64_t>(groups[prologue].shape) ==
              tensorType(input).getShape())
        joined = prologue;
      else
        joined = newGroup(&op, tensorType(op.getResult(0)).getShape());
      Group &group = groups[joined];
      llvm::ArrayRef<int64_t> shape = tensorType(op.getResult(0)).getShape();
      group.shape.assign(shape.begin(), shape.end());
      group.reduction = &op;
      group.members.push_back(&op);
      groupOf[&op] = joined;
    } else if (isElementwise(&op)) {
      for (Value operand : op.getOperands()) {
        int candidate = groupOfValue(operand);
        if (candidate < 0)
          continue;
        if (groups[candidate].reduction && !options.fuseReductions)
          continue;
        if (canJoin(&op, candidate)) {
          joined = candidate;
          break;
        }
      }
      if (joined < 0)
        joined = newGroup(&op, tensorType(op.getResult(0)).getShape());
      // An op reading two unsealed elementwise groups of its shape unites
      // them (an optimizer's update reads the moment and the gradient
      // chains): one loop instead of one per chain and no stored values
      // between them.
      if (options.mergeGroups && !groups[joined].reduction)
        for (Value operand : op.getOperands()) {
          int other = groupOfValue(operand);
          if (other < 0 || other == joined || groups[other].sealed ||
              groups[other].reduction ||
              groups[other].shape != groups[joined].shape)
            continue;
          mergeGroups(joined, other);
        }
      groups[joined].members.push_back(&op);
      groupOf[&op] = joined;
    }
    // Reading a group's value from outside seals that group.
    for (Value operand : op.getOperands()) {
      int group = groupOfValue(operand);
      if (group >= 0 && group != joined)
        groups[group].sealed = true;
    }
  }
  if (options.fuseGemmEpilogues)
    attachGemmEpilogues();
}

/// A matmul whose result is read by one elementwise op only, in a group of
/// the result's shape without a reduction, gets that group as its epilogue:
/// BLAS writes straight into one of the group's outputs, which the group
/// then updates in place (assignStorage picks the output). The group's
/// members compute exactly what they computed from a separate buffer.
void FunctionEmitter::attachGemmEpilogues() {
  for (Operation &op : body->getOperations()) {
    auto matmul = dyn_cast<nn::MatmulOp>(op);
    if (!matmul || matmul.getResult().use_empty())
      continue;
    Operation *user = *matmul.getResult().getUsers().begin();
    if (!llvm::all_equal(matmul.getResult().getUsers()))
      continue;
    auto it = groupOf.find(user);
    if (it == groupOf.end())
      continue;
    Group &group = groups[it->second];
    if (group.reduction || group.gemm ||
        llvm::ArrayRef<int64_t>(group.shape) !=
            tensorType(matmul.getResult()).getShape())
      continue;
    group.gemm = matmul;
  }
}

/// In-place parameter updates: a fragment result bound to `update = @p`
/// that a flat elementwise group (no reduction, no GEMM, every input of its
/// shape or a single element) computes, where the argument bound to
/// `param = @p` has the same type and is read by that group only. The
/// group reads the argument's element i before writing the result's
/// element i (or, for a value returned twice, the result is copied in at
/// the end), and nothing reads the argument afterwards, so both may be one
/// buffer.
void FunctionEmitter::findInPlaceResults() {
  auto fragment = dyn_cast<tandem::mpmd::FragmentOp>(function);
  if (!fragment)
    return;
  Operation *terminator = body->getTerminator();
  for (unsigned r = 0; r < fragment.getNumResults(); ++r) {
    FlatSymbolRefAttr param = fragment.getUpdateBinding(r);
    if (!param)
      continue;
    Value result = terminator->getOperand(r);
    // Returned more than once, the value is computed into scratch and
    // copied into every result slot at the end, after the group has read
    // the argument: no aliasing inside the loop.
    bool copiedAtEnd = llvm::count(terminator->getOperands(), result) > 1;
    Operation *def = result.getDefiningOp();
    auto it = def ? groupOf.find(def) : groupOf.end();
    if (it == groupOf.end())
      continue;
    Group &group = groups[it->second];
    if (group.reduction || group.gemm)
      continue;
    bool flat = llvm::all_of(group.members, [&](Operation *member) {
      return llvm::all_of(member->getOperands(), [&](Value operand) {
        return inGroup(operand.getDefiningOp(), it->second) ||
               tensorType(operand).getShape() ==
                   llvm::ArrayRef<int64_t>(group.shape) ||
               tensorType(operand).getNumElements() == 1;
      });
    });
    if (!flat)
      continue;
    // One argument bound to the parameter: a second would alias the
    // buffer the update overwrites.
    unsigned bound = 0;
    for (unsigned a = 0; a < fragment.getNumArguments(); ++a)
      bound += fragment.getParamBinding(a) == param;
    for (unsigned a = 0; bound == 1 && a < fragment.getNumArguments(); ++a) {
      if (fragment.getParamBinding(a) != param)
        continue;
      Value argument = body->getArgument(a);
      if (tensorType(argument) != tensorType(result) ||
          !llvm::all_of(argument.getUsers(), [&](Operation *user) {
            return inGroup(user, it->second);
          }))
        break;
      group.mayAlias |= !copiedAtEnd;
      info.inPlaceResults.push_back({r, a});
      break;
    }
  }
}

} // namespace tandem::cpu::detail
