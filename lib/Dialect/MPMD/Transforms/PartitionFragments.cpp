//===- PartitionFragments.cpp - fragments and transfers
//---------------------===//
//
// Part of mpmd-partition; see Partition.cpp for the overview.
//
//===----------------------------------------------------------------------===//

#include "Partitioner.h"
#include "mlir/IR/IRMapping.h"

#include "tandem/Dialect/NN/Transforms/Autodiff.h"

using namespace mlir;
using namespace tandem;
using namespace tandem::mpmd;
using namespace tandem::mpmd::partition;
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
  // prologue. A frozen parameter is never sent: every stage that reads it
  // binds its own copy (the same draws everywhere).
  llvm::SetVector<std::pair<int64_t, StringRef>> handedOver;
  auto handOver = [&](int64_t stage, ArrayRef<Operation *> ops) {
    for (Operation *op : ops)
      for (Value operand : op->getOperands())
        if (auto read = operand.getDefiningOp<nn::ParamOp>()) {
          int64_t home = homeOf(read, stage);
          if (home != stage)
            handedOver.insert({home, read.getName()});
        }
  };
  for (Group &group : groups)
    handOver(group.stage, group.ops);
  for (auto &[key, ops] : prologueGroups)
    handOver(key.second, ops);
  for (auto [home, name] : handedOver)
    prologueGroups.try_emplace({0, home});
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
  for (auto [home, name] : handedOver)
    groups[prologueOf.at(home)].exportedParams.insert(name);
  // Prologue results read by other groups.
  for (unsigned index : prologueOrder)
    for (Operation *op : groups[index].ops)
      for (Value result : op->getResults())
        for (Operation *user : result.getUsers())
          if (groupOf.count(user) && groupOf[user] != index)
            groups[index].exports.insert(result);
}

namespace {

/// Builds one fragment's signature and body from a group.
class FragmentBuilder {
public:
  explicit FragmentBuilder(OpBuilder &b) : b(b) {}

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
    FragmentBuilder fb(b);
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
        int64_t home = homeOf(read, group.stage);
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
