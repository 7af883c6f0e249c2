//===- Partition.cpp - mpmd-partition -------------------------------------===//
//
// Turns a training-step function into an mpmd.program (docs/mpmd.md,
// "mpmd-partition"). The function is written for one microbatch; a step
// runs it on m microbatches. Working on a clone of the function:
//
//  1. Every op gets a phase: sources (nn.param, nn.constant: copied into
//     whichever fragment needs them), forward, backward (`nn.grad`), or once
//     per step (`nn.optimizer`, and the `nn.grad_sum` adds that combine the
//     contributions of several reads of one parameter).
//  2. Each per-microbatch value the step phase (or the function's result)
//     needs gets an accumulation node: the sum over microbatches in
//     increasing order, on the stage that produced it. The step then sees
//     the mean: the sum divided by m, after any `nn.grad_sum` combination,
//     so a tied parameter's contributions are each summed on their own
//     stage and added once, in the same order for every stage count.
//  3. Forward ops get virtual stages from the nn.stage_end markers (or the
//     `mpmd.stage` annotations of a user's partitioning pass), backward ops
//     the stage of the forward op they differentiate, step ops the stage of
//     the parameter they update (consumers first; shared ones, such as the
//     global gradient norm, the latest stage among their operands).
//  4. Groups (virtual stage, kind) and (stage, level) become fragments,
//     where a step op's level counts the stage changes on its longest input
//     path, so the fragment graph is acyclic; every value crossing groups
//     becomes a transfer.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"
#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Dialect/NN/Transforms/Autodiff.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <set>
#include <tuple>

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDPARTITION
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

using namespace mlir;
using namespace tandem;
using namespace tandem::mpmd;

namespace {

/// A user pass's stage assignment for a forward op (a virtual stage).
constexpr StringLiteral kStageAnnotation = "mpmd.stage";

/// Prologue: work that depends only on parameters (e.g. a parameter's
/// low-precision cast), done once per step instead of once per microbatch.
enum class Phase { Source, Prologue, Forward, Backward, Step };

/// Step-phase nodes that are not cloned: the sum over microbatches of a
/// per-microbatch value (a fragment argument bound by an accumulating
/// transfer), and the value a fragment yields as a step result.
enum class Special { None, Accumulate, Yield };

struct PartitionOptions {
  int64_t stages, chunks, microbatches;
  bool splitBackward;
};

/// A future fragment.
struct Group {
  int64_t stage = 0, chunk = 0;
  FragmentKind kind = FragmentKind::Fwd;
  std::string name;
  SmallVector<Operation *> ops;
  /// Values defined here (or, for accumulation and yield nodes, standing
  /// for them) that other groups or the step's results read, in order.
  llvm::SetVector<Value> exports;
  /// Parameters this step_prologue hands to other stages.
  llvm::SetVector<StringRef> exportedParams;
  FragmentOp fragment;
};

class Partitioner {
public:
  Partitioner(ModuleOp module, func::FuncOp function, StringRef programName,
              PartitionOptions options)
      : module(module), original(function), programName(programName),
        opts(options), numVirtual(options.stages * options.chunks) {}

  LogicalResult run();

private:
  LogicalResult checkInputs();
  LogicalResult classify();
  LogicalResult insertAccumulation();
  LogicalResult placeForward();
  LogicalResult placeBackward();
  LogicalResult placeStep();
  void formGroups();
  LogicalResult build();

  bool isPerMicrobatch(Operation *op) const {
    auto it = phase.find(op);
    return it != phase.end() &&
           (it->second == Phase::Forward || it->second == Phase::Backward);
  }
  bool isStep(Operation *op) const {
    auto it = phase.find(op);
    return it != phase.end() && it->second == Phase::Step;
  }
  bool isPrologue(Operation *op) const {
    auto it = phase.find(op);
    return it != phase.end() && it->second == Phase::Prologue;
  }
  bool isSource(Operation *op) const {
    auto it = phase.find(op);
    return it != phase.end() && it->second == Phase::Source;
  }
  Special specialOf(Operation *op) const {
    auto it = special.find(op);
    return it == special.end() ? Special::None : it->second;
  }
  int64_t physicalStage(int64_t virtualStage) const {
    return virtualStage % opts.stages;
  }
  Operation *newStepNode(Operation *op, Special kind) {
    phase[op] = Phase::Step;
    special[op] = kind;
    return op;
  }
  Value meanOf(Value sum, Operation *before);

  ModuleOp module;
  func::FuncOp original;
  StringRef programName;
  PartitionOptions opts;
  int64_t numVirtual;

  OwningOpRef<func::FuncOp> work;
  Block *body = nullptr;
  func::ReturnOp ret;
  /// nn.updates: the parameter result i + 1 replaces (train steps).
  SmallVector<FlatSymbolRefAttr> updates;

  llvm::DenseMap<Operation *, Phase> phase;
  llvm::DenseMap<Operation *, Special> special;
  llvm::DenseMap<Operation *, int64_t> virtualStage;
  /// Stage of step and prologue ops.
  llvm::DenseMap<Operation *, int64_t> stepStage;
  /// The parameters a prologue op depends on.
  llvm::DenseMap<Operation *, llvm::SmallSetVector<StringRef, 2>> paramsOf;
  llvm::DenseMap<Operation *, int64_t> level;
  llvm::StringMap<int64_t> owner;
  llvm::DenseMap<Value, Value> means;
  llvm::DenseSet<Operation *> meanOps;

  std::vector<Group> groups;
  llvm::DenseMap<Operation *, unsigned> groupOf;
  /// Each stage's level-0 prologue, which hands parameters to other stages.
  std::map<int64_t, unsigned> prologueOf;
  /// Prologue groups by (level, stage): the program's first fragments.
  SmallVector<unsigned> prologueOrder;
};

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

  // Prologue work runs on the (latest) owner of the parameters it reads.
  for (Operation &op : *body) {
    if (!isPrologue(&op))
      continue;
    int64_t s = 0;
    for (StringRef name : paramsOf[&op])
      s = std::max(s, owner.try_emplace(name, 0).first->second);
    stepStage[&op] = s;
    // A parameter owned elsewhere arrives from its owner's first prologue.
    int64_t l = 0;
    for (Value operand : op.getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (auto read = dyn_cast_or_null<nn::ParamOp>(def))
        l = std::max(l, int64_t(owner.lookup(read.getName()) != s));
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
  return success();
}

//===----------------------------------------------------------------------===//
// Groups and fragments
//===----------------------------------------------------------------------===//

void Partitioner::formGroups() {
  auto placeName = [&](int64_t virtualStage) {
    int64_t stage = physicalStage(virtualStage);
    int64_t chunk = virtualStage / opts.stages;
    std::string name = "s" + std::to_string(stage);
    if (opts.chunks > 1)
      name += ".c" + std::to_string(chunk);
    return std::make_tuple(stage, chunk, name);
  };
  std::map<std::pair<int64_t, FragmentKind>, unsigned> perMicrobatch;
  auto addPerMicrobatch = [&](int64_t v, FragmentKind kind) {
    auto [stage, chunk, name] = placeName(v);
    Group group;
    group.stage = stage;
    group.chunk = chunk;
    group.kind = kind;
    group.name = name + "." + stringifyFragmentKind(kind).str();
    perMicrobatch[{v, kind}] = groups.size();
    groups.push_back(std::move(group));
  };
  // Every position gets a full set of fragments (possibly empty), so every
  // schedule finds what it runs.
  for (int64_t v = 0; v < numVirtual; ++v)
    addPerMicrobatch(v, FragmentKind::Fwd);
  for (int64_t v = numVirtual - 1; v >= 0; --v) {
    if (opts.splitBackward) {
      addPerMicrobatch(v, FragmentKind::BwdInput);
      addPerMicrobatch(v, FragmentKind::BwdWeight);
    } else {
      addPerMicrobatch(v, FragmentKind::Bwd);
    }
  }

  std::map<std::pair<int64_t, int64_t>, SmallVector<Operation *>> stepGroups,
      prologueGroups;
  for (Operation &op : body->without_terminator()) {
    if (isSource(&op))
      continue;
    if (isPrologue(&op)) {
      prologueGroups[{level[&op], stepStage[&op]}].push_back(&op);
      continue;
    }
    if (isStep(&op)) {
      stepGroups[{level[&op], stepStage[&op]}].push_back(&op);
      continue;
    }
    FragmentKind kind = FragmentKind::Fwd;
    if (phase[&op] == Phase::Backward) {
      kind = FragmentKind::Bwd;
      if (opts.splitBackward) {
        auto grad = op.getAttrOfType<nn::GradAttr>("nn.grad");
        kind = grad && grad.getKind() == nn::GradKind::W
                   ? FragmentKind::BwdWeight
                   : FragmentKind::BwdInput;
      }
    }
    unsigned index = perMicrobatch.at({virtualStage[&op], kind});
    groups[index].ops.push_back(&op);
    groupOf[&op] = index;
  }
  std::map<int64_t, int64_t> stepCount;
  for (auto &[key, ops] : stepGroups) {
    Group group;
    group.stage = key.second;
    bool optimizer = llvm::any_of(
        ops, [](Operation *op) { return op->hasAttr("nn.optimizer"); });
    group.kind =
        optimizer ? FragmentKind::Optimizer : FragmentKind::StepEpilogue;
    group.name = "s" + std::to_string(group.stage) + ".step" +
                 std::to_string(stepCount[group.stage]++);
    group.ops = ops;
    for (Operation *op : ops)
      groupOf[op] = groups.size();
    groups.push_back(std::move(group));
  }

  // Exports: values read by another group or returned. An accumulation
  // node's operand is exported by its producer (the accumulating transfer).
  for (Group &group : groups) {
    for (Operation *op : group.ops) {
      if (specialOf(op) == Special::Accumulate) {
        Value leaf = op->getOperand(0);
        groups[groupOf[leaf.getDefiningOp()]].exports.insert(leaf);
      }
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers())
          if (groupOf.count(user) && groupOf[user] != groupOf[op] &&
              specialOf(user) != Special::Accumulate)
            groups[groupOf[op]].exports.insert(result);
    }
  }

  // Parameters read away from their owner come from the owner's first
  // prologue.
  for (Group &group : groups)
    for (Operation *op : group.ops)
      for (Value operand : op->getOperands())
        if (auto read = operand.getDefiningOp<nn::ParamOp>()) {
          int64_t home = owner.lookup(read.getName());
          if (home != group.stage)
            prologueGroups.try_emplace({0, home});
        }
  for (auto &[key, ops] : prologueGroups) {
    auto [level, stage] = key;
    Group prologue;
    prologue.stage = stage;
    prologue.kind = FragmentKind::StepPrologue;
    prologue.name = "s" + std::to_string(stage) + ".prologue" +
                    (level ? std::to_string(level) : "");
    prologue.ops = ops;
    unsigned index = groups.size();
    for (Operation *op : ops)
      groupOf[op] = index;
    if (level == 0)
      prologueOf[stage] = index;
    prologueOrder.push_back(index);
    groups.push_back(std::move(prologue));
  }
  // Prologue results read by other groups.
  for (unsigned index : prologueOrder)
    for (Operation *op : groups[index].ops)
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers())
          if (groupOf.count(user) && groupOf[user] != index)
            groups[index].exports.insert(result);
}

} // namespace

namespace {

/// Builds one fragment's signature and body from a group.
class FragmentBuilder {
public:
  FragmentBuilder(OpBuilder &b, Group &group) : b(b), group(group) {}

  /// An argument bound to parameter `name`.
  Value param(StringRef name, Type type) {
    auto [it, inserted] = params.try_emplace(name, Value());
    if (inserted)
      it->second = addArgument(
          type, b.getNamedAttr(MPMDDialect::kParamAttrName,
                               FlatSymbolRefAttr::get(b.getContext(), name)));
    return it->second;
  }
  /// An argument bound to step input `index`.
  Value input(unsigned index, Type type) {
    auto [it, inserted] = inputs.try_emplace(index, Value());
    if (inserted)
      it->second =
          addArgument(type, b.getNamedAttr(MPMDDialect::kInputAttrName,
                                           b.getI64IntegerAttr(index)));
    return it->second;
  }
  /// An argument bound by a transfer of `value` from group `from`.
  Value received(Value value, unsigned from) {
    auto [it, inserted] = transfers.try_emplace(value, Value());
    if (inserted) {
      it->second = addArgument(value.getType(), std::nullopt);
      incoming.push_back({from, value});
    }
    return it->second;
  }

  Value addArgument(Type type, std::optional<NamedAttribute> attr) {
    argTypes.push_back(type);
    argAttrs.push_back(attr ? b.getDictionaryAttr({*attr})
                            : b.getDictionaryAttr({}));
    return block->addArgument(type, b.getUnknownLoc());
  }

  OpBuilder &b;
  Group &group;
  Block *block = nullptr;
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  llvm::StringMap<Value> params;
  llvm::DenseMap<unsigned, Value> inputs;
  llvm::DenseMap<Value, Value> transfers;
  /// (producer group, value) per transfer-bound argument, in order.
  SmallVector<std::pair<unsigned, Value>> incoming;
};

} // namespace

LogicalResult Partitioner::build() {
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  auto program =
      ProgramOp::create(b, original.getLoc(), programName, opts.stages,
                        opts.chunks, /*replicas=*/1, opts.microbatches);
  Block &programBody = program.getBody().front();

  // Fragment order: prologues, per-microbatch, step (by level, then stage).
  SmallVector<unsigned> order(prologueOrder);
  for (unsigned i = 0; i < groups.size(); ++i)
    if (groups[i].kind != FragmentKind::StepPrologue)
      order.push_back(i);

  // Prologue exports: every parameter read away from its owner.
  for (Group &group : groups)
    for (Operation *op : group.ops)
      for (Value operand : op->getOperands())
        if (auto read = operand.getDefiningOp<nn::ParamOp>()) {
          int64_t home = owner.lookup(read.getName());
          if (home != group.stage)
            groups[prologueOf.at(home)].exportedParams.insert(read.getName());
        }

  struct Binding {
    unsigned consumer;
    unsigned arg;
    unsigned producer;
    unsigned result;
  };
  SmallVector<Binding> bindings;
  // Result index of each exported value / parameter, per group.
  SmallVector<llvm::DenseMap<Value, unsigned>> resultOf(groups.size());
  SmallVector<llvm::StringMap<unsigned>> paramResultOf(groups.size());

  for (unsigned index : order) {
    Group &group = groups[index];
    b.setInsertionPointToEnd(&programBody);
    auto fragment = FragmentOp::create(b, original.getLoc(), group.name,
                                       b.getFunctionType({}, {}), group.stage,
                                       group.chunk, group.kind);
    group.fragment = fragment;
    FragmentBuilder fb(b, group);
    fb.block = &fragment.getBody().front();
    OpBuilder inside = OpBuilder::atBlockEnd(fb.block);
    IRMapping mapping;
    llvm::DenseMap<Operation *, Value> constants;

    SmallVector<Value> yields;
    SmallVector<DictionaryAttr> resultAttrs;
    auto resolve = [&](Value value) -> Value {
      if (Value mapped = mapping.lookupOrNull(value))
        return mapped;
      if (auto arg = dyn_cast<BlockArgument>(value))
        return fb.input(arg.getArgNumber(), value.getType());
      Operation *def = value.getDefiningOp();
      if (auto read = dyn_cast<nn::ParamOp>(def)) {
        int64_t home = owner.lookup(read.getName());
        if (home == group.stage)
          return fb.param(read.getName(), value.getType());
        unsigned from = prologueOf.at(home);
        Value arg = fb.received(value, from);
        return arg;
      }
      if (isa<nn::ConstantOp>(def)) {
        Value &clone = constants[def];
        if (!clone)
          clone = inside.clone(*def)->getResult(0);
        return clone;
      }
      return fb.received(value, groupOf.at(def));
    };

    if (group.kind == FragmentKind::StepPrologue) {
      for (StringRef name : group.exportedParams) {
        auto param = module.lookupSymbol<nn::ParameterOp>(name);
        paramResultOf[index][name] = yields.size();
        yields.push_back(fb.param(name, param.getType()));
        resultAttrs.push_back(b.getDictionaryAttr({}));
      }
    }
    for (Operation *op : group.ops) {
      switch (specialOf(op)) {
      case Special::Accumulate: {
        Value leaf = op->getOperand(0);
        mapping.map(op->getResult(0),
                    fb.received(leaf, groupOf.at(leaf.getDefiningOp())));
        continue;
      }
      case Special::Yield:
        mapping.map(op->getResult(0), resolve(op->getOperand(0)));
        continue;
      case Special::None:
        break;
      }
      for (Value operand : op->getOperands())
        if (!mapping.contains(operand))
          mapping.map(operand, resolve(operand));
      inside.clone(*op, mapping);
    }
    for (Value value : group.exports) {
      resultOf[index][value] = yields.size();
      yields.push_back(mapping.lookup(value));
      resultAttrs.push_back(b.getDictionaryAttr({}));
    }
    for (OpOperand &use : ret->getOpOperands()) {
      Operation *def = use.get().getDefiningOp();
      if (!def || !groupOf.count(def) || groupOf[def] != index)
        continue;
      unsigned i = use.getOperandNumber();
      NamedAttribute attr =
          (i >= 1 && i <= updates.size())
              ? b.getNamedAttr(MPMDDialect::kUpdateAttrName, updates[i - 1])
              : b.getNamedAttr(MPMDDialect::kOutputAttrName,
                               b.getI64IntegerAttr(i));
      yields.push_back(mapping.lookup(use.get()));
      resultAttrs.push_back(b.getDictionaryAttr({attr}));
    }
    YieldOp::create(inside, original.getLoc(), yields);

    fragment.setFunctionTypeAttr(TypeAttr::get(
        b.getFunctionType(fb.argTypes, ValueRange(yields).getTypes())));
    fragment.setAllArgAttrs(fb.argAttrs);
    fragment.setAllResultAttrs(resultAttrs);
    // Remember which argument each incoming value feeds.
    unsigned argIndex = 0;
    for (auto [i, attrs] : llvm::enumerate(fb.argAttrs)) {
      if (!attrs.empty())
        continue;
      auto [from, value] = fb.incoming[argIndex++];
      // Producers come first in program order (forward stages ascending,
      // backward descending, step levels ascending).
      if (!groups[from].fragment)
        return groups[index].fragment.emitError(
                   "mpmd-partition: internal error: fragment @")
               << groups[index].name << " reads a value of @"
               << groups[from].name << ", which comes later";
      unsigned result;
      if (auto read = value.getDefiningOp<nn::ParamOp>())
        result = paramResultOf[from].lookup(read.getName());
      else
        result = resultOf[from].lookup(value);
      bindings.push_back({index, static_cast<unsigned>(i), from, result});
    }
  }

  b.setInsertionPointToEnd(&programBody);
  for (const Binding &binding : bindings) {
    FragmentOp src = groups[binding.producer].fragment;
    FragmentOp dst = groups[binding.consumer].fragment;
    TransferOp::create(b, original.getLoc(),
                       FlatSymbolRefAttr::get(src.getSymNameAttr()),
                       b.getI64IntegerAttr(binding.result),
                       FlatSymbolRefAttr::get(dst.getSymNameAttr()),
                       b.getI64IntegerAttr(binding.arg),
                       TypeAttr::get(src.getResultTypes()[binding.result]));
  }
  return success();
}

LogicalResult Partitioner::run() {
  if (failed(checkInputs()) || failed(classify()) ||
      failed(insertAccumulation()) || failed(placeForward()) ||
      failed(placeBackward()) || failed(placeStep()))
    return failure();
  formGroups();
  return build();
}

namespace {

struct MPMDPartitionPass
    : public tandem::mpmd::impl::MPMDPartitionBase<MPMDPartitionPass> {
  using MPMDPartitionBase::MPMDPartitionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&](const Twine &message) {
      module.emitError("mpmd-partition: ") << message;
      signalPassFailure();
    };
    if (stages < 1 || chunks < 1 || microbatches < 1)
      return fail("stages, chunks and microbatches must be at least 1, "
                  "found stages=" +
                  Twine(stages) + " chunks=" + Twine(chunks) +
                  " microbatches=" + Twine(microbatches));
    auto function = module.lookupSymbol<func::FuncOp>(this->function);
    if (!function)
      return fail("no function @" + this->function + " to partition");
    if (module.lookupSymbol(program))
      return fail("the module already has a symbol @" + program);
    Partitioner partitioner(module, function, program,
                            {stages, chunks, microbatches, splitBackward});
    if (failed(partitioner.run()))
      signalPassFailure();
  }
};

} // namespace
