//===- RankLowering.cpp - per-rank CPU libraries and manifests ------------===//
//
// For each rank of a scheduled, lowered program: the C++ of the fragments it
// runs (CppEmitter), the shared library (Compiler) and a JSON manifest of
// everything else the runtime needs: grid, parameters and their
// initializers, step inputs, fragment argument and result bindings, and the
// action list. docs/cpu-backend.md, "Per-rank libraries and manifests".
//
//===----------------------------------------------------------------------===//

#include "tandem/Target/CPU/RankLowering.h"

#include "tandem/Dialect/MPMD/Analysis/Memory.h"
#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Target/CPU/CppEmitter.h"
#include "tandem/Target/CPU/MemoryPlan.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>
#include <map>
#include <set>
#include <tuple>

using namespace mlir;
namespace mpmd = tandem::mpmd;
namespace nn = tandem::nn;

namespace {

constexpr llvm::StringLiteral kSplitRankAttrName = "mpmd.split_rank";
constexpr llvm::StringLiteral kPassName = "tandem-lower-cpu";
/// The microbatch of a once-per-step slot in the slot keys below.
constexpr int64_t kStepSlot = -1;
/// What a step input feeds: the ids of an embedding (tokens) or the targets
/// of a cross-entropy. The runtime fills such inputs from token data.
constexpr unsigned kTokensRole = 1, kTargetsRole = 2;

/// One rank to lower: its program (whole or split), its action list (null
/// for an empty one) and the module holding its nn.parameter ops.
struct RankUnit {
  mpmd::ProgramOp program;
  mpmd::RankOp list;
  int64_t rank = 0;
  ModuleOp scope;
};

std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

uint64_t elementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return std::max(1u, (type.getIntOrFloatBitWidth() + 7) / 8);
  return 0;
}

uint64_t tensorBytes(RankedTensorType type) {
  return elementBytes(type.getElementType()) *
         static_cast<uint64_t>(type.getNumElements());
}

/// The shortest decimal text that reads back as `value` (valid JSON).
std::string doubleText(double value) {
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  (void)ec;
  return std::string(buffer, end);
}

/// Writes the value `write` produces on one line (keys in the order
/// written), so that each action, argument and parameter is one line.
void writeCompact(llvm::json::OStream &j,
                  llvm::function_ref<void(llvm::json::OStream &)> write) {
  std::string text;
  llvm::raw_string_ostream os(text);
  {
    llvm::json::OStream line(os, 0);
    write(line);
  }
  j.rawValue(text);
}

void writeShape(llvm::json::OStream &j, StringRef key,
                ArrayRef<int64_t> shape) {
  j.attributeBegin(key);
  writeCompact(j, [&](llvm::json::OStream &line) {
    line.array([&] {
      for (int64_t size : shape)
        line.value(size);
    });
  });
  j.attributeEnd();
}

void writeTensor(llvm::json::OStream &j, RankedTensorType type) {
  j.attribute("dtype", typeString(type.getElementType()));
  writeShape(j, "shape", type.getShape());
  j.attribute("bytes", static_cast<int64_t>(tensorBytes(type)));
}

void writeSlot(llvm::json::OStream &j, StringRef fragment, int64_t result,
               std::optional<int64_t> microbatch) {
  j.attributeObject("slot", [&] {
    j.attribute("fragment", fragment);
    j.attribute("result", result);
    if (microbatch)
      j.attribute("microbatch", *microbatch);
  });
}

const char *lowerFirstAdvice() {
  return "expected a scheduled, lowered program: run mpmd-schedule, "
         "mpmd-lower-transfers and mpmd-verify before tandem-lower-cpu";
}

/// Checks that `program` was scheduled and its transfers lowered.
LogicalResult checkLowered(mpmd::ProgramOp program) {
  auto ranks = program.getBodyBlock().getOps<mpmd::RankOp>();
  if (ranks.empty())
    return program.emitError()
           << kPassName << ": program @" << program.getSymName()
           << " has no mpmd.rank action lists (" << lowerFirstAdvice() << ")";
  for (mpmd::RankOp rank : ranks)
    for (Operation &action : rank.getBodyBlock())
      if (isa<mpmd::SendOp, mpmd::RecvOp>(action))
        return success();
  SymbolTable table(program);
  for (auto transfer : program.getBodyBlock().getOps<mpmd::TransferOp>()) {
    auto src = table.lookup<mpmd::FragmentOp>(transfer.getSrc());
    auto dst = table.lookup<mpmd::FragmentOp>(transfer.getDst());
    if (src && dst && src.getStage() != dst.getStage())
      return transfer.emitError()
             << kPassName << ": transfer crosses from stage " << src.getStage()
             << " to stage " << dst.getStage()
             << ", but no rank has an mpmd.send or mpmd.recv ("
             << lowerFirstAdvice() << ")";
  }
  return success();
}

/// The ranks of the module: every rank of its one top-level program, or
/// the programs of mpmd-split-programs' rank modules.
FailureOr<SmallVector<RankUnit>> collectRanks(ModuleOp module) {
  SmallVector<mpmd::ProgramOp> top(module.getOps<mpmd::ProgramOp>());
  SmallVector<std::pair<mpmd::ProgramOp, ModuleOp>> split;
  for (ModuleOp nested : module.getOps<ModuleOp>())
    for (auto program : nested.getOps<mpmd::ProgramOp>())
      if (program->hasAttr(kSplitRankAttrName))
        split.push_back({program, nested});

  if (top.empty() && split.empty())
    return module.emitError()
           << kPassName << ": no mpmd.program in the module ("
           << lowerFirstAdvice() << ")";
  if (top.size() > 1 || (!top.empty() && !split.empty()))
    return module.emitError()
           << kPassName << ": expected one mpmd.program (or the per-rank "
           << "modules of mpmd-split-programs), found "
           << top.size() + split.size();

  SmallVector<RankUnit> units;
  if (!top.empty()) {
    mpmd::ProgramOp program = top.front();
    if (failed(checkLowered(program)))
      return failure();
    for (int64_t rank = 0; rank < program.getNumRanks(); ++rank) {
      RankUnit unit{program, nullptr, rank, module};
      for (auto list : program.getBodyBlock().getOps<mpmd::RankOp>())
        if (static_cast<int64_t>(list.getRank()) == rank)
          unit.list = list;
      units.push_back(unit);
    }
    return units;
  }

  std::set<int64_t> seen;
  for (auto [program, scope] : split) {
    auto rankAttr = program->getAttrOfType<IntegerAttr>(kSplitRankAttrName);
    if (!rankAttr)
      return program.emitError() << kPassName << ": '" << kSplitRankAttrName
                                 << "' must be an integer";
    int64_t rank = rankAttr.getInt();
    if (!seen.insert(rank).second)
      return program.emitError()
             << kPassName << ": a second program for rank " << rank;
    if (failed(checkLowered(program)))
      return failure();
    RankUnit unit{program, nullptr, rank, scope};
    for (auto list : program.getBodyBlock().getOps<mpmd::RankOp>())
      if (static_cast<int64_t>(list.getRank()) == rank)
        unit.list = list;
    units.push_back(unit);
  }
  return units;
}

using SlotKey = std::tuple<std::string, int64_t, int64_t>;

/// Everything the manifest says about one rank, gathered from the IR.
class RankLowering {
public:
  RankLowering(RankUnit unit) : unit(unit), table(unit.program) {}

  LogicalResult analyze();
  /// The rank's memory plan (docs/cpu-backend.md, "Memory plan").
  LogicalResult planMemory(const tandem::cpu::EmitResult &emitted);
  void writeManifest(llvm::raw_ostream &os, StringRef library, StringRef source,
                     const tandem::cpu::EmitResult &emitted);

  SmallVector<Operation *> fragmentOps() {
    SmallVector<Operation *> ops;
    for (mpmd::FragmentOp fragment : fragments)
      ops.push_back(fragment);
    return ops;
  }

private:
  /// Fragment name -> (result -> argument): updates written in place over
  /// the parameter (planMemory decides; the manifest says `in_place_of`).
  std::map<std::string, std::map<unsigned, unsigned>> inPlace;
  /// The transfer that binds argument `arg` of `fragment`, or null.
  mpmd::TransferOp transferInto(StringRef fragment, int64_t arg) {
    auto it = transfers.find(std::make_pair(fragment.str(), arg));
    return it == transfers.end() ? nullptr : it->second;
  }
  LogicalResult checkRun(mpmd::RunOp run, const std::set<SlotKey> &held);
  /// Records what step input `input`, bound to `argument`, feeds.
  void noteInputUses(BlockArgument argument, int64_t input);
  void writeAction(llvm::json::OStream &out, Operation &action);
  void writeActionLine(llvm::json::OStream &j, Operation &action);
  void writeMemory(llvm::json::OStream &j);
  void writePrediction(llvm::json::OStream &j);

  RankUnit unit;
  SymbolTable table;
  /// The fragments the rank runs, in program order.
  SmallVector<mpmd::FragmentOp> fragments;
  std::map<std::pair<std::string, int64_t>, mpmd::TransferOp> transfers;
  /// Parameters bound or updated, in the scope module's order.
  SmallVector<nn::ParameterOp> parameters;
  llvm::StringSet<> updated;
  std::map<int64_t, RankedTensorType> inputs;
  /// What each step input feeds (a bit set of InputRole) and the smallest
  /// vocabulary an embedding or cross-entropy indexes with it.
  std::map<int64_t, unsigned> inputRoles;
  std::map<int64_t, int64_t> inputVocabularies;
  std::map<int64_t, std::pair<std::string, int64_t>> outputs;
  /// Sequence numbers of point-to-point messages per (direction, peer,
  /// channel) and of collectives per member set.
  std::map<std::tuple<bool, int64_t, int64_t>, int64_t> p2pCount;
  std::map<std::vector<int64_t>, int64_t> collectiveCount;
  tandem::cpu::MemoryPlan memory;
};

LogicalResult RankLowering::checkRun(mpmd::RunOp run,
                                     const std::set<SlotKey> &held) {
  auto fragment = table.lookup<mpmd::FragmentOp>(run.getFragment());
  int64_t microbatch = run.getMicrobatch() ? *run.getMicrobatch() : kStepSlot;
  int64_t m = unit.program.getMicrobatches();
  for (unsigned arg = 0; arg < fragment.getNumArguments(); ++arg) {
    mpmd::TransferOp transfer = transferInto(fragment.getSymName(), arg);
    if (!transfer)
      continue;
    auto producer = table.lookup<mpmd::FragmentOp>(transfer.getSrc());
    SmallVector<int64_t> needed;
    if (!producer.isPerMicrobatch())
      needed.push_back(kStepSlot);
    else if (fragment.isPerMicrobatch())
      needed.push_back(microbatch);
    else
      for (int64_t k = 0; k < m; ++k)
        needed.push_back(k);
    for (int64_t k : needed) {
      if (held.count({transfer.getSrc().str(),
                      static_cast<int64_t>(transfer.getResult()), k}))
        continue;
      InFlightDiagnostic diag =
          run.emitError() << kPassName << ": rank " << unit.rank << " runs @"
                          << fragment.getSymName() << " (argument " << arg
                          << " reads @" << transfer.getSrc() << "["
                          << transfer.getResult() << "]";
      if (k != kStepSlot)
        diag << " microbatch " << k;
      diag << "), but neither produces nor receives that slot before ("
           << lowerFirstAdvice() << ")";
      return failure();
    }
  }
  return success();
}

void RankLowering::noteInputUses(BlockArgument argument, int64_t input) {
  unsigned &roles = inputRoles[input];
  auto vocabulary = [&](int64_t size) {
    auto [it, inserted] = inputVocabularies.insert({input, size});
    if (!inserted)
      it->second = std::min(it->second, size);
  };
  for (Operation *user : argument.getUsers()) {
    if (auto embedding = dyn_cast<nn::EmbeddingOp>(user)) {
      if (embedding.getIds() == argument) {
        roles |= kTokensRole;
        vocabulary(embedding.getTable().getType().getShape()[0]);
      }
    } else if (auto loss = dyn_cast<nn::CrossEntropyOp>(user)) {
      if (loss.getTargets() == argument) {
        roles |= kTargetsRole;
        vocabulary(loss.getLogits().getType().getShape().back());
      }
    }
  }
}

LogicalResult RankLowering::analyze() {
  mpmd::ProgramOp program = unit.program;
  llvm::StringSet<> runNames;
  if (unit.list)
    for (auto run : unit.list.getBodyBlock().getOps<mpmd::RunOp>())
      runNames.insert(run.getFragment());
  for (auto fragment : program.getBodyBlock().getOps<mpmd::FragmentOp>())
    if (runNames.contains(fragment.getSymName()))
      fragments.push_back(fragment);
  for (auto transfer : program.getBodyBlock().getOps<mpmd::TransferOp>())
    transfers[{transfer.getDst().str(),
               static_cast<int64_t>(transfer.getArg())}] = transfer;

  // Data availability along the list: a run reads only slots produced or
  // received earlier on this rank.
  if (unit.list) {
    std::set<SlotKey> held;
    for (Operation &action : unit.list.getBodyBlock()) {
      if (auto run = dyn_cast<mpmd::RunOp>(action)) {
        if (failed(checkRun(run, held)))
          return failure();
        auto fragment = table.lookup<mpmd::FragmentOp>(run.getFragment());
        int64_t k = run.getMicrobatch() ? *run.getMicrobatch() : kStepSlot;
        for (unsigned i = 0; i < fragment.getNumResults(); ++i)
          held.insert({run.getFragment().str(), i, k});
      } else if (auto recv = dyn_cast<mpmd::RecvOp>(action)) {
        held.insert({recv.getFragment().str(),
                     static_cast<int64_t>(recv.getResult()),
                     recv.getMicrobatch() ? *recv.getMicrobatch() : kStepSlot});
      } else if (auto broadcast = dyn_cast<mpmd::BroadcastOp>(action)) {
        held.insert({broadcast.getFragment().str(),
                     static_cast<int64_t>(broadcast.getResult()),
                     broadcast.getMicrobatch() ? *broadcast.getMicrobatch()
                                               : kStepSlot});
      }
    }
  }

  llvm::StringSet<> bound;
  for (mpmd::FragmentOp fragment : fragments) {
    for (unsigned arg = 0; arg < fragment.getNumArguments(); ++arg) {
      auto type = cast<RankedTensorType>(fragment.getArgumentTypes()[arg]);
      if (FlatSymbolRefAttr param = fragment.getParamBinding(arg)) {
        bound.insert(param.getValue());
      } else if (std::optional<int64_t> input = fragment.getInputBinding(arg)) {
        auto [it, inserted] = inputs.insert({*input, type});
        if (!inserted && it->second != type)
          return fragment.emitError()
                 << kPassName << ": argument " << arg << " reads step input "
                 << *input << " as " << type << ", another fragment as "
                 << it->second;
        noteInputUses(fragment.getArgument(arg), *input);
      } else if (!transferInto(fragment.getSymName(), arg)) {
        return fragment.emitError()
               << kPassName << ": argument " << arg
               << " is bound by no mpmd.param, mpmd.input or transfer";
      }
    }
    for (unsigned i = 0; i < fragment.getNumResults(); ++i) {
      if (FlatSymbolRefAttr param = fragment.getUpdateBinding(i)) {
        bound.insert(param.getValue());
        updated.insert(param.getValue());
      }
      if (std::optional<int64_t> output = fragment.getOutputBinding(i))
        outputs[*output] = {fragment.getSymName().str(), i};
    }
  }
  for (auto parameter : unit.scope.getOps<nn::ParameterOp>())
    if (bound.contains(parameter.getSymName()))
      parameters.push_back(parameter);
  if (parameters.size() != bound.size()) {
    for (const auto &name : bound.keys())
      if (!llvm::any_of(parameters, [&](nn::ParameterOp p) {
            return p.getSymName() == name;
          }))
        return program.emitError() << kPassName << ": no nn.parameter @" << name
                                   << " next to the program";
  }
  return success();
}

void RankLowering::writeAction(llvm::json::OStream &out, Operation &action) {
  writeCompact(out,
               [&](llvm::json::OStream &j) { writeActionLine(j, action); });
}

void RankLowering::writeActionLine(llvm::json::OStream &j, Operation &action) {
  auto optional = [](std::optional<uint64_t> value) {
    return value ? std::optional<int64_t>(static_cast<int64_t>(*value))
                 : std::nullopt;
  };
  j.object([&] {
    if (auto run = dyn_cast<mpmd::RunOp>(action)) {
      j.attribute("op", "run");
      j.attribute("fragment", run.getFragment());
      if (run.getMicrobatch())
        j.attribute("microbatch", static_cast<int64_t>(*run.getMicrobatch()));
      return;
    }
    auto p2p = [&](auto op, bool isSend) {
      j.attribute("op", isSend ? "send" : "recv");
      writeSlot(j, op.getFragment(), op.getResult(),
                optional(op.getMicrobatch()));
      j.attribute("peer", static_cast<int64_t>(op.getPeer()));
      j.attribute("channel", static_cast<int64_t>(op.getChannel()));
      j.attribute("sequence",
                  p2pCount[{isSend, op.getPeer(), op.getChannel()}]++);
      writeTensor(j, cast<RankedTensorType>(op.getType()));
      j.attribute("wire", typeString(op.getWire()));
    };
    auto collective = [&](auto op) {
      writeSlot(j, op.getFragment(), op.getResult(),
                optional(op.getMicrobatch()));
      std::vector<int64_t> group(op.getGroup().begin(), op.getGroup().end());
      j.attributeArray("group", [&] {
        for (int64_t member : group)
          j.value(member);
      });
      std::vector<int64_t> members = group;
      llvm::sort(members);
      j.attribute("sequence", collectiveCount[members]++);
      writeTensor(j, cast<RankedTensorType>(op.getType()));
    };
    if (auto send = dyn_cast<mpmd::SendOp>(action)) {
      p2p(send, true);
    } else if (auto recv = dyn_cast<mpmd::RecvOp>(action)) {
      p2p(recv, false);
    } else if (auto reduce = dyn_cast<mpmd::AllReduceOp>(action)) {
      j.attribute("op", "all_reduce");
      j.attribute("reduction",
                  mpmd::stringifyReduceKind(reduce.getReduction()));
      collective(reduce);
    } else if (auto broadcast = dyn_cast<mpmd::BroadcastOp>(action)) {
      j.attribute("op", "broadcast");
      j.attribute("root", static_cast<int64_t>(broadcast.getRoot()));
      collective(broadcast);
    }
  });
}

LogicalResult RankLowering::planMemory(const tandem::cpu::EmitResult &emitted) {
  namespace cpu = tandem::cpu;
  std::map<std::string, uint64_t> scratch;
  for (const cpu::EmittedFunction &function : emitted.functions)
    scratch[function.name] = function.scratchBytes;
  cpu::RankDescription rank;
  rank.microbatches = unit.program.getMicrobatches();
  for (mpmd::FragmentOp fragment : fragments) {
    cpu::PlanFragment planned;
    planned.name = fragment.getSymName().str();
    planned.perMicrobatch = fragment.isPerMicrobatch();
    planned.scratchBytes = scratch[planned.name];
    for (unsigned arg = 0; arg < fragment.getNumArguments(); ++arg) {
      cpu::PlanArgument argument;
      argument.bytes =
          tensorBytes(cast<RankedTensorType>(fragment.getArgumentTypes()[arg]));
      // As the manifest binds it: parameters and inputs live outside the
      // arena, whatever else names the argument.
      mpmd::TransferOp transfer =
          fragment.getParamBinding(arg) || fragment.getInputBinding(arg)
              ? nullptr
              : transferInto(fragment.getSymName(), arg);
      if (transfer) {
        auto producer = table.lookup<mpmd::FragmentOp>(transfer.getSrc());
        argument.isSlot = true;
        argument.fragment = transfer.getSrc().str();
        argument.result = transfer.getResult();
        argument.rule = !producer.isPerMicrobatch() ? cpu::SlotRule::StepValue
                        : fragment.isPerMicrobatch()
                            ? cpu::SlotRule::SameMicrobatch
                            : cpu::SlotRule::SumMicrobatches;
      }
      planned.arguments.push_back(argument);
    }
    for (unsigned i = 0; i < fragment.getNumResults(); ++i)
      planned.results.push_back(
          {tensorBytes(cast<RankedTensorType>(fragment.getResultTypes()[i])),
           fragment.getUpdateBinding(i) ||
               fragment.getOutputBinding(i).has_value()});
    rank.fragments.push_back(std::move(planned));
  }
  if (unit.list) {
    for (Operation &op : unit.list.getBodyBlock()) {
      cpu::PlanAction action;
      auto slotOf = [&](auto transfer, cpu::PlanActionKind kind) {
        action.kind = kind;
        action.fragment = transfer.getFragment().str();
        action.result = transfer.getResult();
        action.microbatch =
            transfer.getMicrobatch()
                ? static_cast<int64_t>(*transfer.getMicrobatch())
                : kStepSlot;
        action.bytes = tensorBytes(cast<RankedTensorType>(transfer.getType()));
      };
      if (auto run = dyn_cast<mpmd::RunOp>(op)) {
        action.kind = cpu::PlanActionKind::Run;
        action.fragment = run.getFragment().str();
        action.microbatch = run.getMicrobatch()
                                ? static_cast<int64_t>(*run.getMicrobatch())
                                : kStepSlot;
      } else if (auto send = dyn_cast<mpmd::SendOp>(op)) {
        slotOf(send, cpu::PlanActionKind::Send);
      } else if (auto recv = dyn_cast<mpmd::RecvOp>(op)) {
        slotOf(recv, cpu::PlanActionKind::Recv);
      } else if (auto reduce = dyn_cast<mpmd::AllReduceOp>(op)) {
        slotOf(reduce, cpu::PlanActionKind::Collective);
      } else if (auto broadcast = dyn_cast<mpmd::BroadcastOp>(op)) {
        slotOf(broadcast, cpu::PlanActionKind::Collective);
      } else {
        continue;
      }
      rank.actions.push_back(std::move(action));
    }
  }
  // An update the emitter can write over its parameter is written there
  // when, in this rank's action list, every run of another fragment binding
  // the parameter comes before the writer's run (they read the old value)
  // and nothing (no argument, send or collective) reads the result's slot.
  // Such a result needs no buffer.
  std::map<std::string, std::vector<int64_t>> runsOf;
  std::set<std::pair<std::string, int64_t>> readSlots;
  for (auto [i, action] : llvm::enumerate(rank.actions)) {
    if (action.kind == cpu::PlanActionKind::Run)
      runsOf[action.fragment].push_back(static_cast<int64_t>(i));
    else
      readSlots.insert({action.fragment, action.result});
  }
  // Per parameter, the fragments binding it.
  std::map<StringRef, std::vector<std::string>> bindersOf;
  for (auto [fragment, planned] : llvm::zip_equal(fragments, rank.fragments))
    for (auto [a, arg] : llvm::enumerate(planned.arguments)) {
      if (arg.isSlot)
        readSlots.insert({arg.fragment, arg.result});
      else if (FlatSymbolRefAttr param = fragment.getParamBinding(a))
        bindersOf[param.getValue()].push_back(planned.name);
    }
  for (const cpu::EmittedFunction &function : emitted.functions) {
    auto writer = table.lookup<mpmd::FragmentOp>(function.name);
    if (!writer || writer.isPerMicrobatch() ||
        runsOf[function.name].size() != 1)
      continue;
    int64_t at = runsOf[function.name].front();
    for (auto [result, argument] : function.inPlaceResults) {
      if (readSlots.count({function.name, result}))
        continue;
      StringRef param = writer.getUpdateBinding(result).getValue();
      bool readBefore =
          llvm::all_of(bindersOf[param], [&](const std::string &f) {
            auto runs = runsOf.find(f);
            return f == function.name ||
                   (runs != runsOf.end() && runs->second.back() < at);
          });
      if (readBefore)
        inPlace[function.name][result] = argument;
    }
  }
  for (cpu::PlanFragment &f : rank.fragments)
    for (auto [result, argument] : inPlace[f.name])
      f.results[result].inPlace = true;
  llvm::Expected<cpu::MemoryPlan> plan = cpu::planRankMemory(rank);
  if (!plan)
    return unit.program.emitError()
           << kPassName << ": rank " << unit.rank
           << ": memory plan: " << llvm::toString(plan.takeError());
  memory = std::move(*plan);
  return success();
}

void RankLowering::writeMemory(llvm::json::OStream &j) {
  namespace cpu = tandem::cpu;
  j.attributeObject("memory", [&] {
    j.attribute("alignment", static_cast<int64_t>(cpu::kArenaAlignment));
    j.attribute("arena_bytes", static_cast<int64_t>(memory.arenaBytes));
    j.attribute("naive_bytes", static_cast<int64_t>(memory.naiveBytes));
    j.attributeArray("buffers", [&] {
      for (const cpu::PlannedBuffer &buffer : memory.buffers) {
        writeCompact(j, [&](llvm::json::OStream &j) {
          j.object([&] {
            switch (buffer.kind) {
            case cpu::BufferKind::Slot:
              j.attribute("kind", "slot");
              j.attribute("fragment", buffer.fragment);
              j.attribute("result", buffer.result);
              if (buffer.microbatch != kStepSlot)
                j.attribute("microbatch", buffer.microbatch);
              break;
            case cpu::BufferKind::Accumulator:
              j.attribute("kind", "accumulator");
              j.attribute("action", buffer.action);
              j.attribute("argument", buffer.argument);
              break;
            case cpu::BufferKind::Scratch:
              j.attribute("kind", "scratch");
              j.attribute("action", buffer.action);
              break;
            }
            j.attribute("offset", static_cast<int64_t>(buffer.offset));
            j.attribute("bytes", static_cast<int64_t>(buffer.bytes));
            j.attribute("first", buffer.first);
            j.attribute("last", buffer.last);
          });
        });
      }
    });
  });
}

void RankLowering::writePrediction(llvm::json::OStream &j) {
  // mpmd-memory's prediction for this rank, so that the runtime can put
  // what it measures next to it (docs/runtime.md, "Memory"). The analysis
  // runs on the whole program, or on the rank's own after
  // mpmd-split-programs; a rank without an action list holds nothing.
  if (!unit.list)
    return;
  FailureOr<SmallVector<mpmd::RankMemory>> ranks =
      mpmd::analyzeMemory(unit.program);
  if (failed(ranks))
    return;
  for (const mpmd::RankMemory &m : *ranks) {
    if (m.rank != unit.rank)
      continue;
    j.attributeObject("predicted_memory", [&] {
      j.attribute("analysis", "mpmd-memory");
      j.attribute("peak_bytes", m.peak);
      j.attribute("parameters", m.parameters);
      j.attribute("parameter_copies", m.parameterCopies);
      j.attribute("optimizer_state", m.optimizerState);
      j.attribute("gradients", m.gradients);
      j.attribute("stash", m.stash);
      j.attribute("stash_per_microbatch", m.stashPerMicrobatch);
      j.attribute("peak_in_flight", m.peakInFlight);
      j.attribute("temporaries", m.temporaries);
    });
    return;
  }
}

void RankLowering::writeManifest(llvm::raw_ostream &os, StringRef library,
                                 StringRef source,
                                 const tandem::cpu::EmitResult &emitted) {
  mpmd::ProgramOp program = unit.program;
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attribute("format", tandem::cpu::kRankManifestFormat);
    j.attribute("program", program.getSymName());
    j.attribute("library", library);
    j.attribute("source", source);
    j.attributeObject("grid", [&] {
      j.attribute("stages", static_cast<int64_t>(program.getStages()));
      j.attribute("chunks", static_cast<int64_t>(program.getChunks()));
      j.attribute("replicas", static_cast<int64_t>(program.getReplicas()));
      j.attribute("microbatches",
                  static_cast<int64_t>(program.getMicrobatches()));
      j.attribute("rank", unit.rank);
      j.attribute("stage", program.getStageOfRank(unit.rank));
      j.attribute("replica", program.getReplicaOfRank(unit.rank));
    });

    j.attributeArray("parameters", [&] {
      for (nn::ParameterOp parameter : parameters) {
        writeCompact(j, [&](llvm::json::OStream &j) {
          j.object([&] {
            j.attribute("name", parameter.getSymName());
            writeTensor(j, parameter.getTensorType());
            nn::InitializerAttr init = parameter.getInit();
            j.attributeObject("init", [&] {
              j.attribute("kind", nn::stringifyInitKind(init.getKind()));
              j.attributeBegin("a");
              j.rawValue(doubleText(init.getAValue()));
              j.attributeEnd();
              j.attributeBegin("b");
              j.rawValue(doubleText(init.getBValue()));
              j.attributeEnd();
            });
            j.attribute("updated", updated.contains(parameter.getSymName()));
          });
        });
      }
    });

    int64_t m = program.getMicrobatches();
    j.attributeArray("inputs", [&] {
      for (auto [index, type] : inputs) {
        writeCompact(j, [&](llvm::json::OStream &j) {
          j.object([&] {
            j.attribute("index", index);
            j.attribute("dtype", typeString(type.getElementType()));
            writeShape(j, "microbatch_shape", type.getShape());
            SmallVector<int64_t> step(type.getShape());
            step[0] *= m;
            writeShape(j, "step_shape", step);
            j.attribute("microbatch_bytes",
                        static_cast<int64_t>(tensorBytes(type)));
            unsigned roles = inputRoles[index];
            j.attribute("role", roles == kTokensRole    ? "tokens"
                                : roles == kTargetsRole ? "targets"
                                : roles == 0            ? "other"
                                                        : "ambiguous");
            auto vocab = inputVocabularies.find(index);
            if (vocab != inputVocabularies.end())
              j.attribute("vocabulary", vocab->second);
          });
        });
      }
    });

    j.attributeArray("outputs", [&] {
      for (auto &[index, slot] : outputs) {
        writeCompact(j, [&](llvm::json::OStream &j) {
          j.object([&] {
            j.attribute("index", index);
            j.attribute("fragment", slot.first);
            j.attribute("result", slot.second);
          });
        });
      }
    });

    std::map<std::string, const tandem::cpu::EmittedFunction *> byName;
    for (const tandem::cpu::EmittedFunction &function : emitted.functions)
      byName[function.name] = &function;
    j.attributeArray("fragments", [&] {
      for (mpmd::FragmentOp fragment : fragments) {
        const tandem::cpu::EmittedFunction *function =
            byName.at(fragment.getSymName().str());
        j.object([&] {
          j.attribute("name", fragment.getSymName());
          j.attribute("symbol", function->symbol);
          j.attribute("scratch_symbol", function->symbol + "_scratch_bytes");
          j.attribute("kind", mpmd::stringifyFragmentKind(fragment.getKind()));
          j.attribute("per_microbatch", fragment.isPerMicrobatch());
          j.attribute("stage", static_cast<int64_t>(fragment.getStage()));
          j.attribute("chunk", static_cast<int64_t>(fragment.getChunk()));
          j.attribute("scratch_bytes",
                      static_cast<int64_t>(function->scratchBytes));
          j.attributeArray("arguments", [&] {
            for (unsigned arg = 0; arg < fragment.getNumArguments(); ++arg) {
              writeCompact(j, [&](llvm::json::OStream &j) {
                j.object([&] {
                  writeTensor(j, cast<RankedTensorType>(
                                     fragment.getArgumentTypes()[arg]));
                  if (FlatSymbolRefAttr param = fragment.getParamBinding(arg)) {
                    j.attribute("param", param.getValue());
                    return;
                  }
                  if (std::optional<int64_t> input =
                          fragment.getInputBinding(arg)) {
                    j.attribute("input", *input);
                    return;
                  }
                  mpmd::TransferOp transfer =
                      transferInto(fragment.getSymName(), arg);
                  auto producer =
                      table.lookup<mpmd::FragmentOp>(transfer.getSrc());
                  writeSlot(j, transfer.getSrc(), transfer.getResult(),
                            std::nullopt);
                  const char *rule = "step_value";
                  if (producer.isPerMicrobatch())
                    rule = fragment.isPerMicrobatch() ? "same_microbatch"
                                                      : "sum_microbatches";
                  j.attribute("rule", rule);
                  j.attribute("local",
                              producer.getStage() == fragment.getStage());
                });
              });
            }
          });
          j.attributeArray("results", [&] {
            for (unsigned i = 0; i < fragment.getNumResults(); ++i) {
              writeCompact(j, [&](llvm::json::OStream &j) {
                j.object([&] {
                  writeTensor(
                      j, cast<RankedTensorType>(fragment.getResultTypes()[i]));
                  if (FlatSymbolRefAttr param = fragment.getUpdateBinding(i))
                    j.attribute("update", param.getValue());
                  auto written = inPlace[fragment.getSymName().str()].find(i);
                  if (written != inPlace[fragment.getSymName().str()].end())
                    j.attribute("in_place_of",
                                static_cast<int64_t>(written->second));
                  if (std::optional<int64_t> output =
                          fragment.getOutputBinding(i))
                    j.attribute("output", *output);
                });
              });
            }
          });
        });
      }
    });

    j.attributeArray("actions", [&] {
      if (unit.list)
        for (Operation &action : unit.list.getBodyBlock())
          writeAction(j, action);
    });
    writeMemory(j);
    writePrediction(j);
  });
  os << "\n";
}

LogicalResult writeFile(Operation *anchor, StringRef path, StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (!ec) {
    os << text;
    os.close();
    ec = os.error();
  }
  if (ec)
    return anchor->emitError()
           << kPassName << ": cannot write '" << path << "': " << ec.message();
  return success();
}

} // namespace

FailureOr<std::vector<tandem::cpu::LoweredRank>>
tandem::cpu::lowerRanks(ModuleOp module, const LowerRanksOptions &options) {
  if (options.outputDir.empty())
    return module.emitError() << kPassName << ": no output directory given";
  FailureOr<SmallVector<RankUnit>> units = collectRanks(module);
  if (failed(units))
    return failure();
  if (std::error_code ec = llvm::sys::fs::create_directories(options.outputDir))
    return module.emitError() << kPassName << ": cannot create '"
                              << options.outputDir << "': " << ec.message();

  std::vector<LoweredRank> lowered;
  for (RankUnit unit : *units) {
    RankLowering rank(unit);
    if (failed(rank.analyze()))
      return failure();
    FailureOr<EmitResult> emitted = emitCpp(rank.fragmentOps());
    if (failed(emitted) || failed(rank.planMemory(*emitted)))
      return failure();

    std::string stem = "rank" + std::to_string(unit.rank);
    LoweredRank out;
    out.rank = unit.rank;
    auto pathOf = [&](StringRef extension) {
      llvm::SmallString<256> path(options.outputDir);
      llvm::sys::path::append(path, stem + extension);
      return std::string(path);
    };
    out.sourcePath = pathOf(".cpp");
    out.libraryPath = pathOf(".so");
    out.manifestPath = pathOf(".json");
    if (failed(writeFile(unit.program, out.sourcePath, emitted->source)))
      return failure();

    if (options.compileLibraries) {
      llvm::Expected<CompiledLibrary> library =
          compileSource(emitted->source, options.compile);
      if (!library)
        return unit.program.emitError()
               << kPassName << ": rank " << unit.rank << ": "
               << llvm::toString(library.takeError());
      out.cached = library->cached;
      if (std::error_code ec =
              llvm::sys::fs::copy_file(library->path, out.libraryPath))
        return unit.program.emitError()
               << kPassName << ": cannot copy '" << library->path << "' to '"
               << out.libraryPath << "': " << ec.message();
    }

    std::string manifest;
    llvm::raw_string_ostream os(manifest);
    rank.writeManifest(os, stem + ".so", stem + ".cpp", *emitted);
    if (failed(writeFile(unit.program, out.manifestPath, manifest)))
      return failure();
    lowered.push_back(std::move(out));
  }
  return lowered;
}
