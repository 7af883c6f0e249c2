//===- PartitionPhases.cpp - phases and accumulation
//------------------------===//
//
// Part of mpmd-partition; see Partition.cpp for the overview.
//
//===----------------------------------------------------------------------===//

#include "Partitioner.h"

#include "tandem/Dialect/NN/Transforms/Autodiff.h"

using namespace mlir;
using namespace tandem;
using namespace tandem::mpmd;
using namespace tandem::mpmd::partition;
//===----------------------------------------------------------------------===//
// Inputs and phases
//===----------------------------------------------------------------------===//

LogicalResult Partitioner::checkInputs() {
  if (!original.getBody().hasOneBlock())
    return original.emitError("mpmd-partition: @")
           << original.getSymName()
           << " must have a body of one block (found a declaration or "
              "several blocks)";
  for (auto [index, type] :
       llvm::enumerate(original.getFunctionType().getInputs())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() || tensor.getRank() == 0)
      return original.emitError("mpmd-partition: input #")
             << index << " of @" << original.getSymName() << " is " << type
             << "; expected a statically shaped tensor with a batch "
                "dimension (the function's inputs are one microbatch)";
  }
  if (auto names = original->getAttrOfType<ArrayAttr>("nn.updates")) {
    if (names.size() + 1 != original.getNumResults())
      return original.emitError("mpmd-partition: 'nn.updates' of @")
             << original.getSymName() << " names " << names.size()
             << " parameters for " << original.getNumResults()
             << " results (expected the loss, then one result per name)";
    for (Attribute name : names) {
      auto symbol = dyn_cast<FlatSymbolRefAttr>(name);
      auto param = symbol
                       ? module.lookupSymbol<nn::ParameterOp>(symbol.getAttr())
                       : nullptr;
      if (!param)
        return original.emitError("mpmd-partition: 'nn.updates' entry ")
               << name << " does not name an nn.parameter";
      updates.push_back(symbol);
    }
  }
  return success();
}

LogicalResult Partitioner::classify() {
  work = cast<func::FuncOp>(original->clone());
  body = &work->getBody().front();
  for (auto parameter : module.getOps<nn::ParameterOp>())
    if (parameter.getFrozen())
      frozen.insert(parameter.getSymName());
  // func.func's verifier guarantees the terminator.
  ret = cast<func::ReturnOp>(body->getTerminator());
  for (Operation &op : body->without_terminator()) {
    if (isa<nn::ParamOp, nn::ConstantOp>(op))
      phase[&op] = Phase::Source;
    else if (op.hasAttr("nn.optimizer") || op.hasAttr(nn::kGradSumAttrName))
      phase[&op] = Phase::Step;
    else if (op.hasAttr("nn.grad"))
      phase[&op] = Phase::Backward;
    else
      phase[&op] = Phase::Forward;

    // Parameter-only work moves to the step's prologue.
    if (isPerMicrobatch(&op) && op.getNumOperands() != 0) {
      llvm::SmallSetVector<StringRef, 2> params;
      bool invariant = true;
      for (Value operand : op.getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (auto read = dyn_cast_or_null<nn::ParamOp>(def))
          params.insert(read.getName());
        else if (def && isPrologue(def))
          params.insert(paramsOf[def].begin(), paramsOf[def].end());
        else if (!def || !isa<nn::ConstantOp>(def))
          invariant = false;
      }
      if (invariant && !params.empty()) {
        phase[&op] = Phase::Prologue;
        paramsOf[&op] = std::move(params);
      }
    }

    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || isSource(def) || isPrologue(def))
        continue;
      if (isPerMicrobatch(&op) && isStep(def))
        return op.emitError("mpmd-partition: this op runs once per "
                            "microbatch but uses a value computed once per "
                            "step")
                   .attachNote(def->getLoc())
               << "computed here";
      if (phase[&op] == Phase::Forward && phase[def] == Phase::Backward)
        return op.emitError("mpmd-partition: this forward op uses a "
                            "gradient (a value of the backward pass)")
                   .attachNote(def->getLoc())
               << "computed here";
    }
  }
  return success();
}

/// The mean over microbatches of `sum` (a sum over microbatches), computed
/// once, right before `before`.
Value Partitioner::meanOf(Value sum, Operation *before) {
  if (opts.microbatches == 1)
    return sum;
  auto [it, inserted] = means.try_emplace(sum, Value());
  if (!inserted)
    return it->second;
  OpBuilder b(before);
  auto type = cast<RankedTensorType>(sum.getType());
  auto scalarType = RankedTensorType::get({}, type.getElementType());
  auto count = nn::ConstantOp::create(
      b, sum.getLoc(), scalarType,
      DenseElementsAttr::get(
          scalarType, FloatAttr::get(type.getElementType(),
                                     static_cast<double>(opts.microbatches))));
  phase[count] = Phase::Source;
  auto mean = nn::DivOp::create(b, sum.getLoc(), sum, count.getResult());
  phase[mean] = Phase::Step;
  meanOps.insert(mean);
  it->second = mean.getResult();
  return it->second;
}

LogicalResult Partitioner::insertAccumulation() {
  llvm::DenseMap<Value, Value> sums;
  SmallVector<Operation *> consumers;
  for (Operation &op : *body)
    if (isStep(&op) || &op == ret.getOperation())
      consumers.push_back(&op);

  for (Operation *op : consumers) {
    bool combines = op->hasAttr(nn::kGradSumAttrName);
    for (OpOperand &use : op->getOpOperands()) {
      Value value = use.get();
      Operation *def = value.getDefiningOp();
      if (!def) {
        auto arg = cast<BlockArgument>(value);
        if (op == ret.getOperation())
          return op->emitError("mpmd-partition: returns input #")
                 << arg.getArgNumber()
                 << " of the function unchanged; a step result must be "
                    "computed";
        return op->emitError("mpmd-partition: uses input #")
               << arg.getArgNumber()
               << " of the function once per step (inputs are per "
                  "microbatch)";
      }
      Value replacement;
      if (isPerMicrobatch(def)) {
        if (!isa<FloatType>(
                cast<RankedTensorType>(value.getType()).getElementType()))
          return op->emitError("mpmd-partition: needs the per-microbatch "
                               "value of type ")
                 << value.getType()
                 << " once per step, but only floating-point values can be "
                    "averaged over microbatches";
        Value &sum = sums[value];
        if (!sum) {
          OpBuilder b(op);
          auto node = UnrealizedConversionCastOp::create(
              b, value.getLoc(), TypeRange{value.getType()}, ValueRange{value});
          newStepNode(node, Special::Accumulate);
          stepStage[node] = -1; // placed with its producer, below
          sum = node.getResult(0);
        }
        replacement = combines ? sum : meanOf(sum, op);
      } else if (!combines && def->hasAttr(nn::kGradSumAttrName)) {
        replacement = meanOf(value, op);
      } else {
        continue;
      }
      use.set(replacement);
    }
  }
  return success();
}
