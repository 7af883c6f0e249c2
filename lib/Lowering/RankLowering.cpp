//===- RankLowering.cpp - per-rank sources, libraries, manifests ----------===//
//
// For each rank of a scheduled, lowered program: the source of the fragments
// it runs and its library (through the TargetBackend), and a manifest of
// everything else the runtime needs: target, grid, parameters and their
// initializers, step inputs, fragment argument and result bindings, the
// action list and the memory plan (docs/manifest.md). Target-neutral: no
// target is named here.
//
//===----------------------------------------------------------------------===//

#include "tandem/Lowering/RankLowering.h"

#include "tandem/Lowering/Kernels.h"

#include "tandem/Dialect/MPMD/Analysis/Memory.h"
#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Eval/InitSpec.h"
#include "tandem/Eval/Inputs.h"
#include "tandem/Runtime/Manifest.h"
#include "tandem/Runtime/MemoryPlan.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <set>
#include <tuple>

using namespace mlir;
namespace mpmd = tandem::mpmd;
namespace nn = tandem::nn;
namespace rt = tandem::runtime;
namespace lowering = tandem::lowering;
namespace rng = tandem::rng;

namespace {

constexpr llvm::StringLiteral kSplitRankAttrName = "mpmd.split_rank";
/// What starts every message: the caller's name (LowerRanksOptions::
/// diagnosticPrefix). One lowering runs at a time per thread.
thread_local std::string toolName;
/// The microbatch of a once-per-step slot.
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

/// The manifest element type of `type` (MLIR's spelling is the manifest's).
std::optional<rt::ElementType> elementTypeOf(Type type) {
  return rt::parseElementType(typeString(type));
}

/// Bytes of a tensor whose type checkTensorType accepted.
uint64_t tensorBytes(RankedTensorType type) {
  uint64_t bytes = rt::elementTypeSize(*elementTypeOf(type.getElementType()));
  for (int64_t size : type.getShape())
    bytes *= static_cast<uint64_t>(size);
  return bytes;
}

// The verifiers' limit (nn::verifyTensorSize) is the manifest reader's.
static_assert(nn::kMaxTensorBytes == rt::kMaxBytes,
              "the compiler and the runtime must refuse the same sizes");

/// A tensor the manifest can describe: static shape, an element type it
/// knows, at most 2^48 bytes (the verifiers' check, in checked arithmetic).
/// Errors name `what` at `anchor`.
LogicalResult checkTensorType(Operation *anchor, Type type,
                              const llvm::Twine &what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return anchor->emitError() << toolName << ": " << what << " has type "
                               << type << " (expected a static tensor)";
  std::optional<rt::ElementType> element =
      elementTypeOf(tensor.getElementType());
  if (!element)
    return anchor->emitError()
           << toolName << ": " << what << " has element type "
           << tensor.getElementType()
           << ", which the runtime does not support (f32, f64, bf16, f16, "
              "f8E4M3FN, f8E5M2, i64, i32, i8)";
  return nn::verifyTensorSize(anchor, type, what);
}

/// The value type (and wire type) of a send, receive or collective.
LogicalResult checkTransfer(Operation &action) {
  auto p2p = [&](auto op) -> LogicalResult {
    if (failed(checkTensorType(op, op.getType(), "the value sent")))
      return failure();
    if (!elementTypeOf(op.getWire()))
      return op.emitError() << toolName << ": wire type " << op.getWire()
                            << " is not supported";
    return success();
  };
  if (auto send = dyn_cast<mpmd::SendOp>(action))
    return p2p(send);
  if (auto recv = dyn_cast<mpmd::RecvOp>(action))
    return p2p(recv);
  if (auto reduce = dyn_cast<mpmd::AllReduceOp>(action))
    return checkTensorType(reduce, reduce.getType(), "the value reduced");
  if (auto broadcast = dyn_cast<mpmd::BroadcastOp>(action))
    return checkTensorType(broadcast, broadcast.getType(),
                           "the value broadcast");
  return success();
}

std::vector<int64_t> shapeOf(RankedTensorType type) {
  return std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
}

rt::SlotRef slotOf(StringRef fragment, int64_t result,
                   std::optional<uint64_t> microbatch) {
  return {fragment.str(), result,
          microbatch ? static_cast<int64_t>(*microbatch) : kStepSlot};
}

std::string lowerFirstAdvice() {
  return "expected a scheduled, lowered program: run mpmd-schedule, "
         "mpmd-lower-transfers and mpmd-verify before " +
         toolName;
}

/// Checks that `program` was scheduled and its transfers lowered.
LogicalResult checkLowered(mpmd::ProgramOp program) {
  auto ranks = program.getBodyBlock().getOps<mpmd::RankOp>();
  if (ranks.empty())
    return program.emitError()
           << toolName << ": program @" << program.getSymName()
           << " has no mpmd.rank action lists (" << lowerFirstAdvice() << ")";
  for (mpmd::RankOp rank : ranks)
    for (Operation &action : rank.getBodyBlock())
      // A broadcast delivers a transfer as a send/recv pair does.
      if (isa<mpmd::SendOp, mpmd::RecvOp, mpmd::BroadcastOp>(action))
        return success();
  SymbolTable table(program);
  for (auto transfer : program.getBodyBlock().getOps<mpmd::TransferOp>()) {
    auto src = table.lookup<mpmd::FragmentOp>(transfer.getSrc());
    auto dst = table.lookup<mpmd::FragmentOp>(transfer.getDst());
    if (src && dst && src.getStage() != dst.getStage())
      return transfer.emitError()
             << toolName << ": transfer crosses from stage " << src.getStage()
             << " to stage " << dst.getStage()
             << ", but no rank has an mpmd.send, mpmd.recv or mpmd.broadcast ("
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
    return module.emitError() << toolName << ": no mpmd.program in the module ("
                              << lowerFirstAdvice() << ")";
  if (top.size() > 1 || (!top.empty() && !split.empty()))
    return module.emitError()
           << toolName << ": expected one mpmd.program (or the per-rank "
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
      return program.emitError() << toolName << ": '" << kSplitRankAttrName
                                 << "' must be an integer";
    int64_t rank = rankAttr.getInt();
    if (!seen.insert(rank).second)
      return program.emitError()
             << toolName << ": a second program for rank " << rank;
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
  /// With `accumulation` Fragment, chooses the results of per-microbatch
  /// fragments that add themselves into their microbatch sum, and records
  /// them in the fragments (lowering::recordAccumulated).
  void decideAccumulation(rt::Accumulation accumulation);
  /// The rank's manifest, all but its memory plan.
  rt::Manifest buildManifest(StringRef library, StringRef source,
                             const lowering::EmittedSource &emitted,
                             const rt::TargetInfo &target,
                             rt::MemorySpace space,
                             rt::Accumulation accumulation);
  /// Decides the in-place updates and plans the rank's memory
  /// (docs/memory-plan.md) into `manifest`.
  LogicalResult planMemory(rt::Manifest &manifest,
                           const lowering::EmittedSource &emitted);

  /// Every fragment the rank runs has an entry point in `emitted`.
  LogicalResult checkEmitted(const lowering::EmittedSource &emitted) {
    for (mpmd::FragmentOp fragment : fragments)
      if (llvm::none_of(emitted.fragments,
                        [&](const lowering::EmittedFragment &f) {
                          return f.name == fragment.getSymName();
                        }))
        return fragment.emitError()
               << toolName << ": the target emitted no entry point for @"
               << fragment.getSymName();
    return success();
  }

  SmallVector<Operation *> fragmentOps() {
    SmallVector<Operation *> ops;
    for (mpmd::FragmentOp fragment : fragments)
      ops.push_back(fragment);
    return ops;
  }

private:
  /// The transfer that binds argument `arg` of `fragment`, or null.
  mpmd::TransferOp transferInto(StringRef fragment, int64_t arg) {
    auto it = transfers.find(std::make_pair(fragment.str(), arg));
    return it == transfers.end() ? nullptr : it->second;
  }
  LogicalResult checkRun(mpmd::RunOp run, const std::set<SlotKey> &held);
  /// Records what step input `input`, bound to `argument`, feeds.
  void noteInputUses(BlockArgument argument, int64_t input);
  rt::FragmentInfo fragmentInfo(mpmd::FragmentOp fragment,
                                const lowering::EmittedFragment &function,
                                rt::Accumulation accumulation);
  std::optional<rt::ActionInfo> actionInfo(Operation &action);
  std::optional<rt::PredictedMemoryInfo> prediction();

  RankUnit unit;
  SymbolTable table;
  /// The fragments the rank runs, in program order.
  SmallVector<mpmd::FragmentOp> fragments;
  std::map<std::pair<std::string, int64_t>, mpmd::TransferOp> transfers;
  /// (fragment, result) pairs the fragment accumulates itself.
  std::set<std::pair<std::string, int64_t>> accumulated;
  /// Parameters bound or updated, in the scope module's order.
  SmallVector<nn::ParameterOp> parameters;
  llvm::StringSet<> updated;
  std::map<int64_t, RankedTensorType> inputs;
  /// What each step input feeds (a bit set of InputRole) and the smallest
  /// vocabulary it indexes (eval::indexUsesOf).
  std::map<int64_t, unsigned> inputRoles;
  std::map<int64_t, int64_t> inputVocabularies;
  std::map<int64_t, std::pair<std::string, int64_t>> outputs;
  /// Sequence numbers of point-to-point messages per (direction, peer,
  /// channel) and of collectives per member set.
  std::map<std::tuple<bool, int64_t, int64_t>, int64_t> p2pCount;
  std::map<std::vector<int64_t>, int64_t> collectiveCount;
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
          run.emitError() << toolName << ": rank " << unit.rank << " runs @"
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
  tandem::eval::IndexUses uses = tandem::eval::indexUsesOf(argument);
  roles |= (uses.tokens ? kTokensRole : 0) | (uses.targets ? kTargetsRole : 0);
  if (uses.vocabulary) {
    auto [it, inserted] = inputVocabularies.insert({input, *uses.vocabulary});
    if (!inserted)
      it->second = std::min(it->second, *uses.vocabulary);
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
  // Every tensor the manifest describes, before any size is computed.
  for (mpmd::FragmentOp fragment : fragments) {
    for (auto [i, type] : llvm::enumerate(fragment.getArgumentTypes()))
      if (failed(checkTensorType(fragment, type,
                                 "argument " + llvm::Twine(i) + " of @" +
                                     fragment.getSymName())))
        return failure();
    for (auto [i, type] : llvm::enumerate(fragment.getResultTypes()))
      if (failed(checkTensorType(fragment, type,
                                 "result " + llvm::Twine(i) + " of @" +
                                     fragment.getSymName())))
        return failure();
  }
  if (unit.list)
    for (Operation &action : unit.list.getBodyBlock())
      if (failed(checkTransfer(action)))
        return failure();

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
                 << toolName << ": argument " << arg << " reads step input "
                 << *input << " as " << type << ", another fragment as "
                 << it->second;
        noteInputUses(fragment.getArgument(arg), *input);
      } else if (!transferInto(fragment.getSymName(), arg)) {
        return fragment.emitError()
               << toolName << ": argument " << arg
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
    if (bound.contains(parameter.getSymName())) {
      if (failed(checkTensorType(parameter, parameter.getTensorType(),
                                 "parameter @" + parameter.getSymName())))
        return failure();
      parameters.push_back(parameter);
    }
  if (parameters.size() != bound.size()) {
    for (const auto &name : bound.keys())
      if (!llvm::any_of(parameters, [&](nn::ParameterOp p) {
            return p.getSymName() == name;
          }))
        return program.emitError() << toolName << ": no nn.parameter @" << name
                                   << " next to the program";
  }
  return success();
}

rt::FragmentInfo
RankLowering::fragmentInfo(mpmd::FragmentOp fragment,
                           const lowering::EmittedFragment &function,
                           rt::Accumulation accumulation) {
  rt::FragmentInfo info;
  info.name = fragment.getSymName().str();
  info.symbol = function.symbol;
  info.scratchSymbol = function.symbol + "_scratch_bytes";
  info.kind = mpmd::stringifyFragmentKind(fragment.getKind()).str();
  info.perMicrobatch = fragment.isPerMicrobatch();
  info.stage = fragment.getStage();
  info.chunk = fragment.getChunk();
  info.scratchBytes = function.scratchBytes;
  for (unsigned arg = 0; arg < fragment.getNumArguments(); ++arg) {
    auto type = cast<RankedTensorType>(fragment.getArgumentTypes()[arg]);
    rt::ArgumentInfo a;
    a.dtype = *elementTypeOf(type.getElementType());
    a.shape = shapeOf(type);
    a.bytes = tensorBytes(type);
    if (FlatSymbolRefAttr param = fragment.getParamBinding(arg)) {
      a.kind = rt::BindingKind::Param;
      a.param = param.getValue().str();
    } else if (std::optional<int64_t> input = fragment.getInputBinding(arg)) {
      a.kind = rt::BindingKind::Input;
      a.input = *input;
    } else {
      mpmd::TransferOp transfer = transferInto(fragment.getSymName(), arg);
      auto producer = table.lookup<mpmd::FragmentOp>(transfer.getSrc());
      a.kind = rt::BindingKind::Slot;
      a.slot = slotOf(transfer.getSrc(), transfer.getResult(), std::nullopt);
      a.rule = !producer.isPerMicrobatch()  ? rt::SlotRule::StepValue
               : fragment.isPerMicrobatch() ? rt::SlotRule::SameMicrobatch
                                            : rt::SlotRule::SumMicrobatches;
      a.local = producer.getStage() == fragment.getStage();
      a.accumulatedBy =
          a.rule == rt::SlotRule::SumMicrobatches &&
                  accumulated.count(
                      {transfer.getSrc().str(),
                       static_cast<int64_t>(transfer.getResult())})
              ? rt::Accumulation::Fragment
              : rt::Accumulation::Runtime;
    }
    info.arguments.push_back(std::move(a));
  }
  for (unsigned i = 0; i < fragment.getNumResults(); ++i) {
    auto type = cast<RankedTensorType>(fragment.getResultTypes()[i]);
    rt::ResultInfo r;
    r.dtype = *elementTypeOf(type.getElementType());
    r.shape = shapeOf(type);
    r.bytes = tensorBytes(type);
    if (FlatSymbolRefAttr param = fragment.getUpdateBinding(i))
      r.update = param.getValue().str();
    r.output = fragment.getOutputBinding(i);
    info.results.push_back(std::move(r));
  }
  return info;
}

void RankLowering::decideAccumulation(rt::Accumulation accumulation) {
  accumulated.clear();
  if (accumulation != rt::Accumulation::Fragment || !unit.list)
    return;
  // Every transfer out of each result.
  std::map<std::pair<std::string, int64_t>, SmallVector<mpmd::TransferOp>> out;
  for (auto &[key, transfer] : transfers)
    out[{transfer.getSrc().str(), static_cast<int64_t>(transfer.getResult())}]
        .push_back(transfer);
  // This rank's runs: per fragment, its microbatches in list order, and
  // the position of its first run.
  std::map<std::string, SmallVector<int64_t>> runs;
  std::map<std::string, int64_t> firstRun, lastRun;
  int64_t position = 0;
  for (auto run : unit.list.getBodyBlock().getOps<mpmd::RunOp>()) {
    std::string name = run.getFragment().str();
    runs[name].push_back(run.getMicrobatch() ? *run.getMicrobatch() : -1);
    firstRun.insert({name, position});
    lastRun[name] = position;
    ++position;
  }
  int64_t m = unit.program.getMicrobatches();
  // A result is summed by its fragment when its one transfer feeds a
  // once-per-step fragment of the same stage that this rank runs once,
  // after running the producer for microbatches 0, 1, ..., m - 1 in that
  // order (so the additions come in the order the runtime's own sums use).
  // Anything else keeps the runtime's sum.
  for (mpmd::FragmentOp producer : fragments) {
    if (!producer.isPerMicrobatch())
      continue;
    std::string name = producer.getSymName().str();
    const SmallVector<int64_t> &order = runs[name];
    if (!llvm::equal(order, llvm::seq<int64_t>(0, m)))
      continue;
    SmallVector<int64_t> results;
    for (unsigned r = 0; r < producer.getNumResults(); ++r) {
      auto readers = out.find({name, static_cast<int64_t>(r)});
      // f32 only: the runtime's own sums take f32 and f64, and a target
      // accumulating in f32 rounds as they do.
      auto type = cast<RankedTensorType>(producer.getResultTypes()[r]);
      if (readers == out.end() || readers->second.size() != 1 ||
          producer.getUpdateBinding(r) || producer.getOutputBinding(r) ||
          !type.getElementType().isF32())
        continue;
      auto consumer =
          table.lookup<mpmd::FragmentOp>(readers->second[0].getDst());
      if (!consumer || consumer.isPerMicrobatch() ||
          consumer.getStage() != producer.getStage())
        continue;
      std::string consumerName = consumer.getSymName().str();
      auto consumerRuns = runs.find(consumerName);
      if (consumerRuns == runs.end() || consumerRuns->second.size() != 1)
        continue;
      // The producer's runs all come before the sum's run.
      if (lastRun[name] > firstRun[consumerName])
        continue;
      accumulated.insert({name, static_cast<int64_t>(r)});
      results.push_back(r);
    }
    lowering::recordAccumulated(producer, results);
  }
}

std::optional<rt::ActionInfo> RankLowering::actionInfo(Operation &action) {
  rt::ActionInfo a;
  if (auto run = dyn_cast<mpmd::RunOp>(action)) {
    a.op = rt::ActionKind::Run;
    a.fragment = run.getFragment().str();
    if (run.getMicrobatch())
      a.microbatch = static_cast<int64_t>(*run.getMicrobatch());
    return a;
  }
  auto tensor = [&](auto op) {
    auto type = cast<RankedTensorType>(op.getType());
    a.slot = slotOf(op.getFragment(), op.getResult(), op.getMicrobatch());
    a.dtype = *elementTypeOf(type.getElementType());
    a.shape = shapeOf(type);
    a.bytes = tensorBytes(type);
  };
  auto p2p = [&](auto op, bool isSend) {
    a.op = isSend ? rt::ActionKind::Send : rt::ActionKind::Recv;
    tensor(op);
    a.peer = op.getPeer();
    a.channel = op.getChannel();
    a.sequence = p2pCount[{isSend, op.getPeer(), op.getChannel()}]++;
    a.wire = *elementTypeOf(op.getWire());
  };
  auto collective = [&](auto op) {
    tensor(op);
    a.group.assign(op.getGroup().begin(), op.getGroup().end());
    std::vector<int64_t> members = a.group;
    llvm::sort(members);
    a.sequence = collectiveCount[members]++;
  };
  if (auto send = dyn_cast<mpmd::SendOp>(action)) {
    p2p(send, true);
  } else if (auto recv = dyn_cast<mpmd::RecvOp>(action)) {
    p2p(recv, false);
  } else if (auto reduce = dyn_cast<mpmd::AllReduceOp>(action)) {
    a.op = rt::ActionKind::AllReduce;
    a.reduction = mpmd::stringifyReduceKind(reduce.getReduction()).str();
    collective(reduce);
  } else if (auto broadcast = dyn_cast<mpmd::BroadcastOp>(action)) {
    a.op = rt::ActionKind::Broadcast;
    a.root = broadcast.getRoot();
    collective(broadcast);
  } else {
    return std::nullopt;
  }
  return a;
}

std::optional<rt::PredictedMemoryInfo> RankLowering::prediction() {
  // mpmd-memory's prediction for this rank, so that the runtime can put
  // what it measures next to it (docs/runtime.md, "Memory"). The analysis
  // runs on the whole program, or on the rank's own after
  // mpmd-split-programs; a rank without an action list holds nothing.
  if (!unit.list)
    return std::nullopt;
  FailureOr<SmallVector<mpmd::RankMemory>> ranks =
      mpmd::analyzeMemory(unit.program);
  if (failed(ranks))
    return std::nullopt;
  for (const mpmd::RankMemory &m : *ranks) {
    if (m.rank != unit.rank)
      continue;
    rt::PredictedMemoryInfo p;
    p.analysis = "mpmd-memory";
    p.peakBytes = m.peak;
    p.parameters = m.parameters;
    p.parameterCopies = m.parameterCopies;
    p.optimizerState = m.optimizerState;
    p.gradients = m.gradients;
    p.stash = m.stash;
    p.stashPerMicrobatch = m.stashPerMicrobatch;
    p.peakInFlight = m.peakInFlight;
    p.temporaries = m.temporaries;
    return p;
  }
  return std::nullopt;
}

rt::Manifest RankLowering::buildManifest(StringRef library, StringRef source,
                                         const lowering::EmittedSource &emitted,
                                         const rt::TargetInfo &target,
                                         rt::MemorySpace space,
                                         rt::Accumulation accumulation) {
  mpmd::ProgramOp program = unit.program;
  rt::Manifest m;
  m.program = program.getSymName().str();
  m.library = library.str();
  m.source = source.str();
  m.target = target;
  m.grid.stages = program.getStages();
  m.grid.chunks = program.getChunks();
  m.grid.replicas = program.getReplicas();
  m.grid.microbatches = program.getMicrobatches();
  m.grid.rank = unit.rank;
  m.grid.stage = program.getStageOfRank(unit.rank);
  m.grid.replica = program.getReplicaOfRank(unit.rank);

  for (nn::ParameterOp parameter : parameters) {
    RankedTensorType type = parameter.getTensorType();
    rt::ParameterInfo p;
    p.name = parameter.getSymName().str();
    p.dtype = *elementTypeOf(type.getElementType());
    p.shape = shapeOf(type);
    p.bytes = tensorBytes(type);
    p.init = tandem::eval::initSpecOf(parameter);
    if (auto logical = parameter.getLogicalShapeAttr())
      p.logicalShape.assign(logical.asArrayRef().begin(),
                            logical.asArrayRef().end());
    p.updated = updated.contains(parameter.getSymName());
    p.space = space;
    m.parameters.push_back(std::move(p));
  }

  for (auto [index, type] : inputs) {
    rt::InputInfo in;
    in.index = index;
    in.dtype = *elementTypeOf(type.getElementType());
    in.microbatchShape = shapeOf(type);
    in.stepShape = in.microbatchShape;
    in.stepShape[0] *= m.grid.microbatches;
    in.microbatchBytes = tensorBytes(type);
    unsigned roles = inputRoles[index];
    in.role = roles == kTokensRole    ? rt::InputRole::Tokens
              : roles == kTargetsRole ? rt::InputRole::Targets
              : roles == 0            ? rt::InputRole::Other
                                      : rt::InputRole::Ambiguous;
    auto vocab = inputVocabularies.find(index);
    if (vocab != inputVocabularies.end())
      in.vocabulary = vocab->second;
    in.space = space;
    m.inputs.push_back(std::move(in));
  }
  for (auto &[index, slot] : outputs)
    m.outputs.push_back({index, slot.first, slot.second});

  std::map<std::string, const lowering::EmittedFragment *> byName;
  for (const lowering::EmittedFragment &function : emitted.fragments)
    byName[function.name] = &function;
  for (mpmd::FragmentOp fragment : fragments)
    m.fragments.push_back(fragmentInfo(
        fragment, *byName.at(fragment.getSymName().str()), accumulation));
  if (unit.list)
    for (Operation &action : unit.list.getBodyBlock())
      if (std::optional<rt::ActionInfo> a = actionInfo(action))
        m.actions.push_back(std::move(*a));
  m.indexChecks = emitted.indexChecks;
  m.memory.space = space;
  m.memory.alignment = std::max(rt::kArenaAlignment, target.alignment);
  m.predictedMemory = prediction();
  return m;
}

LogicalResult RankLowering::planMemory(rt::Manifest &m,
                                       const lowering::EmittedSource &emitted) {
  // An update the emitter can write over its parameter is written there
  // when, in this rank's action list, every run of another fragment binding
  // the parameter comes before the writer's run (they read the old value)
  // and nothing (no argument, send or collective) reads the result's slot.
  // Such a result needs no buffer.
  std::map<std::string, std::vector<int64_t>> runsOf;
  std::set<std::pair<std::string, int64_t>> readSlots;
  for (auto [i, action] : llvm::enumerate(m.actions)) {
    if (action.op == rt::ActionKind::Run)
      runsOf[action.fragment].push_back(static_cast<int64_t>(i));
    else
      readSlots.insert({action.slot.fragment, action.slot.result});
  }
  // Per parameter, the fragments binding it.
  std::map<std::string, std::vector<std::string>> bindersOf;
  for (const rt::FragmentInfo &f : m.fragments)
    for (const rt::ArgumentInfo &arg : f.arguments) {
      if (arg.kind == rt::BindingKind::Slot)
        readSlots.insert({arg.slot.fragment, arg.slot.result});
      else if (arg.kind == rt::BindingKind::Param)
        bindersOf[arg.param].push_back(f.name);
    }
  for (const lowering::EmittedFragment &function : emitted.fragments) {
    int64_t index = m.findFragment(function.name);
    if (index < 0)
      continue;
    rt::FragmentInfo &writer = m.fragments[index];
    if (writer.perMicrobatch || runsOf[function.name].size() != 1)
      continue;
    int64_t at = runsOf[function.name].front();
    for (auto [result, argument] : function.inPlaceResults) {
      if (readSlots.count({function.name, result}))
        continue;
      const std::string &param = *writer.results[result].update;
      bool readBefore =
          llvm::all_of(bindersOf[param], [&](const std::string &f) {
            auto runs = runsOf.find(f);
            return f == function.name ||
                   (runs != runsOf.end() && runs->second.back() < at);
          });
      if (readBefore)
        writer.results[result].inPlaceOf = argument;
    }
  }
  std::string error;
  std::optional<rt::MemoryPlanInfo> plan =
      rt::planRankMemory(rt::describeRank(m), error);
  if (!plan)
    return unit.program.emitError()
           << toolName << ": rank " << unit.rank << ": memory plan: " << error;
  plan->space = m.memory.space;
  m.memory = std::move(*plan);
  // The runtime's check of the plan, run here too: a plan it would refuse
  // is the compiler's error, reported when compiling.
  rt::Manifest checked = m;
  std::string violation = rt::checkMemoryPlan(checked);
  if (!violation.empty())
    return unit.program.emitError()
           << toolName << ": rank " << unit.rank
           << ": internal error: the memory plan fails the runtime's check: "
           << violation;
  return success();
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
           << toolName << ": cannot write '" << path << "': " << ec.message();
  return success();
}

} // namespace

FailureOr<std::vector<lowering::LoweredRank>>
lowering::lowerRanks(ModuleOp module, TargetBackend &backend,
                     const LowerRanksOptions &options) {
  toolName = options.diagnosticPrefix;
  if (options.outputDir.empty())
    return module.emitError() << toolName << ": no output directory given";
  FailureOr<SmallVector<RankUnit>> units = collectRanks(module);
  if (failed(units))
    return failure();
  if (std::error_code ec = llvm::sys::fs::create_directories(options.outputDir))
    return module.emitError() << toolName << ": cannot create '"
                              << options.outputDir << "': " << ec.message();

  rt::TargetInfo target = backend.targetInfo();
  std::vector<LoweredRank> lowered;
  for (RankUnit unit : *units) {
    RankLowering rank(unit);
    if (failed(rank.analyze()))
      return failure();
    rank.decideAccumulation(backend.accumulation());
    // What fuses is decided here, in the IR, with the target's policy
    // (Kernels.h); the backend prints what is recorded.
    for (Operation *fragment : rank.fragmentOps())
      recordKernels(fragment, formKernels(fragment, backend.fusionPolicy()));
    FailureOr<EmittedSource> emitted = backend.emit(rank.fragmentOps());
    if (failed(emitted) || failed(rank.checkEmitted(*emitted)))
      return failure();
    std::string stem = "rank" + std::to_string(unit.rank);
    std::string sourceName = stem + backend.sourceExtension().str();
    std::string libraryName = stem + backend.libraryExtension().str();
    rt::Manifest manifest =
        rank.buildManifest(libraryName, sourceName, *emitted, target,
                           backend.memorySpace(), backend.accumulation());
    if (failed(rank.planMemory(manifest, *emitted)))
      return failure();

    LoweredRank out;
    out.rank = unit.rank;
    auto pathOf = [&](StringRef name) {
      llvm::SmallString<256> path(options.outputDir);
      llvm::sys::path::append(path, name);
      return std::string(path);
    };
    out.sourcePath = pathOf(sourceName);
    out.libraryPath = pathOf(libraryName);
    out.manifestPath = pathOf(stem + ".json");
    if (failed(writeFile(unit.program, out.sourcePath, emitted->text)))
      return failure();

    if (options.compileLibraries) {
      llvm::Expected<CompiledLibrary> library = backend.compile(emitted->text);
      if (!library)
        return unit.program.emitError()
               << toolName << ": rank " << unit.rank << ": "
               << llvm::toString(library.takeError());
      out.cached = library->cached;
      if (std::error_code ec =
              llvm::sys::fs::copy_file(library->path, out.libraryPath))
        return unit.program.emitError()
               << toolName << ": cannot copy '" << library->path << "' to '"
               << out.libraryPath << "': " << ec.message();
    }

    if (failed(writeFile(unit.program, out.manifestPath,
                         rt::writeManifest(manifest))))
      return failure();
    lowered.push_back(std::move(out));
  }
  return lowered;
}
