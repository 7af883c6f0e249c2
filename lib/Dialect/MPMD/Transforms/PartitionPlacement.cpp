//===- PartitionPlacement.cpp - stage placement
//-----------------------------===//
//
// Part of mpmd-partition; see Partition.cpp for the overview.
//
//===----------------------------------------------------------------------===//

#include "Partitioner.h"

#include "tandem/Dialect/NN/Transforms/Autodiff.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <functional>
#include <limits>
#include <optional>

using namespace mlir;
using namespace tandem;
using namespace tandem::mpmd;
using namespace tandem::mpmd::partition;
//===----------------------------------------------------------------------===//
// Placement
//===----------------------------------------------------------------------===//

LogicalResult Partitioner::placeForward() {
  bool annotated = false;
  for (Operation &op : *body)
    annotated |= op.hasAttr(kStageAnnotation);

  // Segment: how many markers lie on the longest path from the inputs.
  llvm::DenseMap<Operation *, int64_t> segment;
  int64_t numSegments = 1;
  std::map<int64_t, nn::StageEndOp> markerOfSegment;
  for (Operation &op : *body) {
    if (!isPerMicrobatch(&op) || phase[&op] != Phase::Forward)
      continue;
    int64_t s = 0;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || isSource(def) || isPrologue(def))
        continue;
      s = std::max(s, segment[def] + ((!annotated && isa<nn::StageEndOp>(def))
                                          ? int64_t(1)
                                          : int64_t(0)));
    }
    if (annotated) {
      if (auto attr = op.getAttrOfType<IntegerAttr>(kStageAnnotation)) {
        int64_t wanted = attr.getInt();
        if (wanted < 0 || wanted >= numVirtual)
          return op.emitError("mpmd-partition: '")
                 << kStageAnnotation << "' = " << wanted
                 << " is not a virtual stage of the grid (expected [0, "
                 << numVirtual << "))";
        if (wanted < s)
          return op.emitError("mpmd-partition: '")
                 << kStageAnnotation << "' places this op on virtual stage "
                 << wanted << ", but it uses a value from virtual stage " << s
                 << " (forward values only flow to later stages)";
        s = wanted;
      }
    } else if (auto marker = dyn_cast<nn::StageEndOp>(op)) {
      auto [it, inserted] = markerOfSegment.try_emplace(s, marker);
      if (!inserted) {
        InFlightDiagnostic diag =
            marker.emitError("mpmd-partition: the nn.stage_end markers do "
                             "not cut the graph into a chain: this marker and "
                             "another one both end segment ")
            << s << " (one marker per stage boundary, each after the last)";
        diag.attachNote(it->second.getLoc()) << "the other marker";
        return diag;
      }
    }
    segment[&op] = s;
    numSegments = std::max(numSegments, s + 1);
  }

  // Work that reads only step inputs, constants and frozen parameters (no
  // activation, nothing trained: e.g. nn-subspace's fixed token table
  // gathered by the ids) is redone where it is used instead of being sent
  // there: it moves to the earliest segment among its forward users.
  llvm::DenseSet<Operation *> floating;
  for (Operation &op : *body) {
    if (!isPerMicrobatch(&op) || phase[&op] != Phase::Forward ||
        isa<nn::StageEndOp>(op) || op.hasAttr(kStageAnnotation))
      continue;
    bool fromFixed = llvm::all_of(op.getOperands(), [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      if (!def)
        return true;
      if (auto read = dyn_cast<nn::ParamOp>(def))
        return readsFrozen(read);
      return isa<nn::ConstantOp>(def) || floating.contains(def);
    });
    if (fromFixed)
      floating.insert(&op);
  }
  for (Operation &op : llvm::reverse(*body)) {
    if (!floating.contains(&op))
      continue;
    std::optional<int64_t> earliest;
    for (Operation *user : op.getUsers())
      if (auto it = segment.find(user); it != segment.end())
        earliest = std::min(earliest.value_or(it->second), it->second);
    if (earliest)
      segment[&op] = *earliest;
  }

  if (!annotated && numSegments < numVirtual)
    return original.emitError("mpmd-partition: the nn.stage_end markers cut @")
           << original.getSymName() << " into " << numSegments
           << " stage(s), fewer than the " << numVirtual << " virtual stages ("
           << opts.stages << " stages x " << opts.chunks
           << " chunks) requested; add markers or use fewer stages";
  for (auto &[op, s] : segment)
    virtualStage[op] = annotated ? s : s * numVirtual / numSegments;
  return success();
}

LogicalResult Partitioner::placeBackward() {
  llvm::DenseMap<int64_t, Operation *> forwardById;
  for (Operation &op : *body)
    if (auto id = op.getAttrOfType<IntegerAttr>("nn.id"))
      forwardById[id.getInt()] = &op;

  for (Operation &op : *body) {
    if (!isPerMicrobatch(&op) || phase[&op] != Phase::Backward)
      continue;
    auto grad = op.getAttrOfType<nn::GradAttr>("nn.grad");
    Operation *of = grad ? forwardById.lookup(grad.getOf()) : nullptr;
    if (of && virtualStage.count(of)) {
      virtualStage[&op] = virtualStage[of];
      continue;
    }
    // A rule's op for a source (no stage of its own): follow its inputs.
    int64_t s = 0;
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp(); def && isPerMicrobatch(def))
        s = std::max(s, virtualStage[def]);
    virtualStage[&op] = s;
  }

  // The schedules run forward stages in increasing and backward stages in
  // decreasing order; data must flow that way.
  for (Operation &op : *body) {
    if (!isPerMicrobatch(&op) || phase[&op] != Phase::Backward)
      continue;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || !isPerMicrobatch(def) || phase[def] != Phase::Backward)
        continue;
      if (virtualStage[def] < virtualStage[&op])
        return op.emitError("mpmd-partition: this backward op runs on "
                            "virtual stage ")
               << virtualStage[&op]
               << " but uses a gradient computed on the earlier virtual "
                  "stage "
               << virtualStage[def]
               << " (backward values only flow to earlier stages)";
      if (opts.splitBackward) {
        auto defGrad = def->getAttrOfType<nn::GradAttr>("nn.grad");
        auto grad = op.getAttrOfType<nn::GradAttr>("nn.grad");
        if (defGrad && grad && defGrad.getKind() == nn::GradKind::W &&
            grad.getKind() == nn::GradKind::B)
          return op.emitError("mpmd-partition: this input-gradient (B) op "
                              "uses a weight-gradient (W) op's result, so "
                              "the backward pass cannot be split")
                     .attachNote(def->getLoc())
                 << "the W op";
      }
    }
  }
  return success();
}

LogicalResult Partitioner::placeStep() {
  // A user's pass may place a parameter itself: `mpmd.stage` on its reads
  // (a virtual stage; its physical stage owns it). Reads that disagree make
  // the placement ambiguous.
  llvm::StringMap<nn::ParamOp> placedBy;
  for (Operation &op : *body) {
    auto read = dyn_cast<nn::ParamOp>(op);
    auto attr =
        read ? op.getAttrOfType<IntegerAttr>(kStageAnnotation) : IntegerAttr();
    if (!attr)
      continue;
    if (attr.getInt() < 0 || attr.getInt() >= numVirtual)
      return op.emitError("mpmd-partition: '")
             << kStageAnnotation << "' = " << attr.getInt()
             << " is not a virtual stage of the grid (expected [0, "
             << numVirtual << "))";
    int64_t stage = physicalStage(attr.getInt());
    auto [it, inserted] = placedBy.try_emplace(read.getName(), read);
    if (!inserted &&
        physicalStage(it->second->getAttrOfType<IntegerAttr>(kStageAnnotation)
                          .getInt()) != stage) {
      InFlightDiagnostic diag =
          op.emitError("mpmd-partition: the placement of parameter @")
          << read.getName() << " is ambiguous: this read places it on stage "
          << stage << ", another one on stage "
          << physicalStage(
                 it->second->getAttrOfType<IntegerAttr>(kStageAnnotation)
                     .getInt());
      diag.attachNote(it->second.getLoc()) << "the other read";
      return diag;
    }
    owner.try_emplace(read.getName(), stage);
  }
  // Owners: the stage of the first per-microbatch op reading the parameter
  // (the embedding's stage for a tied embedding).
  for (Operation &op : *body) {
    if (!isPerMicrobatch(&op))
      continue;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      int64_t stage = physicalStage(virtualStage[&op]);
      if (auto read = dyn_cast_or_null<nn::ParamOp>(def))
        owner.try_emplace(read.getName(), stage);
      else if (def && isPrologue(def))
        for (StringRef name : paramsOf[def])
          owner.try_emplace(name, stage);
    }
  }
  // A parameter's gradient is summed over microbatches where each
  // contribution is computed, and combined and averaged on its owner.
  llvm::DenseMap<int64_t, nn::ParamOp> readById;
  for (Operation &op : *body)
    if (auto read = dyn_cast<nn::ParamOp>(op))
      if (auto id = op.getAttrOfType<IntegerAttr>("nn.id"))
        readById[id.getInt()] = read;
  for (Operation &op : *body) {
    if (specialOf(&op) == Special::Accumulate) {
      stepStage[&op] =
          physicalStage(virtualStage.lookup(op.getOperand(0).getDefiningOp()));
    } else if (op.hasAttr(nn::kGradSumAttrName)) {
      auto grad = op.getAttrOfType<nn::GradAttr>("nn.grad");
      nn::ParamOp read = grad ? readById.lookup(grad.getOf()) : nullptr;
      if (read && owner.count(read.getName()))
        stepStage[&op] = owner.lookup(read.getName());
    } else if (meanOps.contains(&op)) {
      Operation *sum = op.getOperand(0).getDefiningOp();
      if (auto it = stepStage.find(sum); it != stepStage.end())
        stepStage[&op] = it->second;
    }
  }

  auto updatedBy = [&](unsigned resultIndex) -> FlatSymbolRefAttr {
    if (resultIndex == 0 || resultIndex > updates.size())
      return nullptr;
    return updates[resultIndex - 1];
  };

  // Consumers first: a step op whose consumers all run on one stage runs
  // there (the parameter's owner, for its update).
  llvm::DenseMap<Operation *, std::set<int64_t>> consumerStages;
  SmallVector<Operation *> stepOps;
  for (Operation &op : *body)
    if (isStep(&op) && specialOf(&op) != Special::Accumulate)
      stepOps.push_back(&op);
  for (Operation *op : llvm::reverse(stepOps)) {
    if (stepStage.count(op))
      continue;
    std::set<int64_t> stages;
    for (OpOperand &use : op->getUses()) {
      Operation *user = use.getOwner();
      if (user == ret.getOperation()) {
        if (FlatSymbolRefAttr param = updatedBy(use.getOperandNumber()))
          if (auto it = owner.find(param.getValue()); it != owner.end())
            stages.insert(it->second);
        continue;
      }
      if (auto it = stepStage.find(user); it != stepStage.end())
        stages.insert(it->second);
      else
        stages.insert(consumerStages[user].begin(), consumerStages[user].end());
    }
    if (stages.size() == 1)
      stepStage[op] = *stages.begin();
    consumerStages[op] = std::move(stages);
  }
  // Shared work (several consumers' stages): the latest stage among its
  // inputs, so a chain such as the global norm's sum follows the owners.
  for (Operation *op : stepOps) {
    if (stepStage.count(op))
      continue;
    int64_t s = -1;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp(); def && isStep(def))
        s = std::max(s, stepStage[def]);
    if (s < 0)
      s = consumerStages[op].empty() ? 0 : *consumerStages[op].begin();
    stepStage[op] = s;
  }

  replicateSharedScalars(stepOps);

  // Parameters only the step reads (optimizer state): the stage computing
  // their new value, else the first stage reading them.
  for (auto [index, param] : llvm::enumerate(updates)) {
    Operation *def = ret.getOperand(index + 1).getDefiningOp();
    if (def && isStep(def))
      owner.try_emplace(param.getValue(), stepStage[def]);
  }
  for (Operation *op : stepOps)
    for (Value operand : op->getOperands())
      if (auto read = operand.getDefiningOp<nn::ParamOp>())
        owner.try_emplace(read.getName(), stepStage[op]);

  // Every step result comes from a step node on the stage that owns it.
  for (OpOperand &use : ret->getOpOperands()) {
    Value value = use.get();
    // Inputs returned unchanged were rejected with the accumulation.
    Operation *def = value.getDefiningOp();
    FlatSymbolRefAttr param = updatedBy(use.getOperandNumber());
    int64_t wanted = 0;
    if (param)
      wanted = owner.try_emplace(param.getValue(), 0).first->second;
    else if (isStep(def))
      continue;
    if (isStep(def) && stepStage[def] == wanted)
      continue;
    OpBuilder b(ret);
    auto node = UnrealizedConversionCastOp::create(
        b, value.getLoc(), TypeRange{value.getType()}, ValueRange{value});
    newStepNode(node, Special::Yield);
    stepStage[node] = wanted;
    use.set(node.getResult(0));
  }

  // Prologue work runs on the (latest) owner of the parameters it reads;
  // frozen ones are everywhere.
  for (Operation &op : *body) {
    if (!isPrologue(&op))
      continue;
    int64_t s = 0;
    for (StringRef name : paramsOf[&op])
      if (!frozen.contains(name))
        s = std::max(s, owner.try_emplace(name, 0).first->second);
    stepStage[&op] = s;
  }
  // Prologue work on frozen parameters (nn-subspace's tied head, T + E·Uᵀ:
  // d wide from a k-wide E) runs where its readers are, when they are on
  // one stage: what crosses then is the trained parameter it lifts.
  for (Operation &op : llvm::reverse(*body)) {
    if (!isPrologue(&op) || llvm::none_of(paramsOf[&op], [&](StringRef name) {
          return frozen.contains(name);
        }))
      continue;
    std::set<int64_t> stages;
    for (Operation *user : op.getUsers()) {
      if (isPrologue(user) || isStep(user))
        stages.insert(stepStage[user]);
      else if (auto it = virtualStage.find(user); it != virtualStage.end())
        stages.insert(physicalStage(it->second));
    }
    if (stages.size() == 1)
      stepStage[&op] = *stages.begin();
  }
  for (Operation &op : *body) {
    if (!isPrologue(&op))
      continue;
    int64_t s = stepStage[&op];
    // A parameter owned elsewhere arrives from its owner's first prologue.
    int64_t l = 0;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (auto read = dyn_cast_or_null<nn::ParamOp>(def))
        l = std::max(l, int64_t(homeOf(read, s) != s));
      else if (def && isPrologue(def))
        l = std::max(l, level[def] + (stepStage[def] != s));
    }
    level[&op] = l;
  }

  // Levels: stage changes on the longest input path.
  for (Operation &op : *body) {
    if (!isStep(&op))
      continue;
    int64_t l = 0;
    for (Value operand : op.getOperands())
      if (Operation *def = operand.getDefiningOp(); def && isStep(def))
        l = std::max(l, level[def] + (stepStage[def] != stepStage[&op]));
    level[&op] = l;
  }
  // Then as late as its readers allow: an op whose readers are all step
  // ops of its own stage runs at their earliest level. With a global
  // gradient norm the update waits a level or two for the clipping factor;
  // the parts of it that do not (AdamW's decayed parameter, m * beta1,
  // v * beta2) would otherwise run a level early and reach the update as
  // parameter-sized slots, and the update could not be written over the
  // parameter it reads.
  for (Operation &op : llvm::reverse(*body)) {
    if (!isStep(&op) || specialOf(&op) != Special::None || op.use_empty())
      continue;
    int64_t latest = std::numeric_limits<int64_t>::max();
    for (Operation *user : op.getUsers()) {
      if (!isStep(user) || specialOf(user) != Special::None ||
          stepStage[user] != stepStage[&op]) {
        latest = level[&op];
        break;
      }
      latest = std::min(latest, level[user]);
    }
    level[&op] = std::max(level[&op], latest);
  }
  return success();
}

/// Step scalars computed from parameters and constants alone (the
/// optimizer's step counter, learning rate, weight-decay step and bias
/// corrections, a dynamic loss scale) are recomputed on every stage that
/// reads them instead of being sent from one stage. Sent, they would make
/// every other stage's optimizer wait for that stage's step fragment and
/// split it in two around the receive (levels): the half before it would
/// return each new moment twice, once as its update and once for the half
/// after, a copy the size of the optimizer state. The clones are the same
/// ops on the same inputs, so every stage computes the same bits.
void Partitioner::replicateSharedScalars(
    SmallVectorImpl<Operation *> &stepOps) {
  auto isScalar = [](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return type && type.hasStaticShape() && type.getNumElements() == 1;
  };
  llvm::SetVector<Operation *> replicable;
  for (Operation *op : stepOps) {
    if (specialOf(op) != Special::None || op->getNumRegions() != 0 ||
        !isMemoryEffectFree(op) || op->getNumResults() == 0 ||
        !llvm::all_of(op->getResults(), isScalar))
      continue;
    bool fromParameters = llvm::all_of(op->getOperands(), [&](Value operand) {
      Operation *def = operand.getDefiningOp();
      return def && (isSource(def) || replicable.contains(def));
    });
    if (fromParameters)
      replicable.insert(op);
  }
  if (replicable.empty())
    return;

  std::map<std::pair<Operation *, int64_t>, Operation *> clones;
  SmallVector<Operation *> created;
  std::function<Value(Value, int64_t)> valueOn = [&](Value value,
                                                     int64_t stage) -> Value {
    Operation *def = value.getDefiningOp();
    if (!def || !replicable.contains(def) || stepStage[def] == stage)
      return value;
    Operation *&clone = clones[{def, stage}];
    if (!clone) {
      IRMapping mapping;
      for (Value operand : def->getOperands())
        mapping.map(operand, valueOn(operand, stage));
      // After the original: its operands' clones follow their originals,
      // which come before it.
      OpBuilder b(def->getContext());
      b.setInsertionPointAfter(def);
      clone = b.clone(*def, mapping);
      phase[clone] = Phase::Step;
      stepStage[clone] = stage;
      created.push_back(clone);
    }
    return clone->getResult(cast<OpResult>(value).getResultNumber());
  };
  // Step readers only: the step's results (the counter's update) keep
  // reading the original on its stage.
  for (Operation *op : stepOps) {
    if (replicable.contains(op))
      continue;
    for (OpOperand &use : op->getOpOperands())
      use.set(valueOn(use.get(), stepStage[op]));
  }
  stepOps.append(created.begin(), created.end());

  // Originals every reader moved away from.
  for (Operation *op : llvm::reverse(replicable)) {
    if (!op->use_empty())
      continue;
    llvm::erase(stepOps, op);
    phase.erase(op);
    stepStage.erase(op);
    op->erase();
  }
}
