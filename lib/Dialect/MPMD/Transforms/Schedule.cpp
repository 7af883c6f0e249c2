//===- Schedule.cpp - mpmd-schedule ---------------------------------------===//
//
// Fills every mpmd.program's rank action lists from a pipeline schedule of
// the TandemSchedule library (docs/schedules.md): a built-in generator or a
// user table file. Schedule stage s is chunk s / p of rank s % p, which is
// the fragment placed on (stage s % p, chunk s / p) of the program. F runs
// the fwd fragment, B the bwd fragment (or bwd_input then bwd_weight when
// the program only has the split ones), BI the bwd_input and BW the
// bwd_weight fragment. Once-per-step fragments frame each rank's list:
// step_prologue first (program order), then the schedule, then optimizer
// and step_epilogue fragments in program order. See docs/mpmd.md.
//
//===----------------------------------------------------------------------===//

#include "tandem/Schedule/Schedule.h"
#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"
#include "tandem/Schedule/Generators.h"
#include "tandem/Schedule/Simulator.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>
#include <tuple>

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDSCHEDULE
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

using namespace mlir;
using namespace tandem::mpmd;
namespace sched = tandem::schedule;

namespace {

using FragmentKey = std::tuple<int64_t, int64_t, FragmentKind>;

/// Builds the schedule named by `spec` for `program`'s grid, or reports why
/// it cannot at the program op.
FailureOr<sched::Schedule> buildSchedule(ProgramOp program,
                                         llvm::StringRef spec) {
  int p = program.getStages(), v = program.getChunks(),
      m = program.getMicrobatches();
  if (std::optional<sched::ScheduleKind> kind =
          sched::parseScheduleKind(spec)) {
    sched::GenerateOptions options;
    options.ranks = p;
    options.chunks = v;
    options.microbatches = m;
    llvm::Expected<sched::Schedule> generated =
        sched::generateSchedule(*kind, options);
    if (!generated)
      return program.emitOpError()
             << "cannot use schedule '" << spec << "' for stages " << p
             << " chunks " << v << " microbatches " << m << ": "
             << llvm::toString(generated.takeError());
    return std::move(*generated);
  }

  // Not a built-in: a schedule table file.
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(spec);
  if (!buffer)
    return program.emitOpError()
           << "unknown schedule '" << spec
           << "': expected gpipe, 1f1b, interleaved-1f1b, zb-h1 or a "
              "schedule table file (cannot read it: "
           << buffer.getError().message() << ")";
  llvm::Expected<sched::Schedule> parsed =
      sched::parseSchedule((*buffer)->getBuffer(), spec);
  if (!parsed)
    return program.emitOpError() << "cannot read schedule table: "
                                 << llvm::toString(parsed.takeError());
  const sched::Shape &shape = parsed->shape;
  if (shape.ranks != p || shape.chunks != v || shape.microbatches != m)
    return program.emitOpError()
           << "schedule table '" << spec << "' has ranks=" << shape.ranks
           << " chunks=" << shape.chunks
           << " microbatches=" << shape.microbatches
           << ", expected the program's ranks=" << p << " chunks=" << v
           << " microbatches=" << m;
  if (parsed->hasExplicitTransfers())
    return program.emitOpError()
           << "schedule table '" << spec
           << "' has SEND/RECV actions; mpmd-schedule orders computation "
              "only (mpmd-lower-transfers places the communication)";
  return std::move(*parsed);
}

LogicalResult scheduleProgram(ProgramOp program, llvm::StringRef spec) {
  Block &body = program.getBodyBlock();
  if (!body.getOps<RankOp>().empty())
    return program.emitOpError()
           << "already has rank action lists; mpmd-schedule fills a "
              "program without them";

  // Fragments by (stage, chunk, kind); once-per-step ones per stage.
  std::map<FragmentKey, FragmentOp> fragments;
  // Work after the microbatches (optimizer, step_epilogue) keeps program
  // order: mpmd-partition orders it by data flow.
  llvm::DenseMap<int64_t, SmallVector<FragmentOp>> prologues, afterwards;
  for (FragmentOp fragment : body.getOps<FragmentOp>()) {
    int64_t stage = fragment.getStage();
    switch (fragment.getKind()) {
    case FragmentKind::StepPrologue:
      prologues[stage].push_back(fragment);
      continue;
    case FragmentKind::Optimizer:
    case FragmentKind::StepEpilogue:
      afterwards[stage].push_back(fragment);
      continue;
    default:
      break;
    }
    FragmentKey key{stage, fragment.getChunk(), fragment.getKind()};
    auto [it, inserted] = fragments.try_emplace(key, fragment);
    if (!inserted)
      return fragment.emitOpError()
             << "is a second " << stringifyFragmentKind(fragment.getKind())
             << " fragment on stage " << stage << " chunk "
             << fragment.getChunk() << " (first: @" << it->second.getSymName()
             << "); mpmd-schedule needs one per (stage, chunk, kind)";
  }

  FailureOr<sched::Schedule> schedule = buildSchedule(program, spec);
  if (failed(schedule))
    return failure();
  if (llvm::Error error = sched::validateSchedule(*schedule))
    return program.emitOpError() << "invalid schedule '" << spec
                                 << "': " << llvm::toString(std::move(error));

  int64_t p = program.getStages();
  // A table from a file can deadlock although every rank's list is valid on
  // its own: simulate it first, and name every rank in the wait cycle, the
  // action and fragment it waits at, what it waits for from which peer, and
  // the table's line (as `tandemc schedule` does), instead of failing later
  // at one rank's run deep in the model.
  if (!sched::parseScheduleKind(spec)) {
    sched::Schedule labeled = *schedule;
    labeled.labels.resize(labeled.actions.size());
    for (auto [rank, list] : llvm::enumerate(labeled.actions))
      for (const sched::Action &action : list) {
        int64_t stage = action.stage % p, chunk = action.stage / p;
        std::optional<FragmentKind> kind;
        if (action.kind == sched::ActionKind::F)
          kind = FragmentKind::Fwd;
        else if (action.kind == sched::ActionKind::B)
          kind = fragments.count({stage, chunk, FragmentKind::Bwd})
                     ? FragmentKind::Bwd
                     : FragmentKind::BwdInput;
        else if (action.kind == sched::ActionKind::BI)
          kind = FragmentKind::BwdInput;
        else if (action.kind == sched::ActionKind::BW)
          kind = FragmentKind::BwdWeight;
        auto it = kind ? fragments.find(FragmentKey{stage, chunk, *kind})
                       : fragments.end();
        labeled.labels[rank].push_back(
            it == fragments.end() ? std::string()
                                  : ("@" + it->second.getSymName()).str());
      }
    llvm::Expected<sched::SimulationReport> simulated =
        sched::simulate(labeled, sched::Costs());
    if (!simulated)
      return program.emitOpError()
             << "schedule table '" << spec
             << "': " << llvm::toString(simulated.takeError());
  }

  // The fragment of `kind` on schedule stage `virtualStage`, or null after
  // reporting that it is missing.
  auto lookup = [&](int64_t virtualStage, FragmentKind kind,
                    llvm::StringRef why) -> FragmentOp {
    int64_t stage = virtualStage % p, chunk = virtualStage / p;
    auto it = fragments.find(FragmentKey{stage, chunk, kind});
    if (it != fragments.end())
      return it->second;
    program.emitOpError() << "schedule '" << spec << "' needs a "
                          << stringifyFragmentKind(kind)
                          << " fragment on stage " << stage << " chunk "
                          << chunk << why << ", found none";
    return nullptr;
  };

  // Each rank's fragment executions, as (fragment, microbatch) pairs.
  using Run = std::pair<FragmentOp, std::optional<int64_t>>;
  SmallVector<SmallVector<Run>> lists(p);
  for (int64_t stage = 0; stage < p; ++stage)
    for (FragmentOp fragment : prologues.lookup(stage))
      lists[stage].push_back({fragment, std::nullopt});
  for (int64_t rank = 0; rank < p; ++rank) {
    for (const sched::Action &action : schedule->actions[rank]) {
      int64_t mb = action.microbatch;
      switch (action.kind) {
      case sched::ActionKind::F: {
        FragmentOp fwd = lookup(action.stage, FragmentKind::Fwd, "");
        if (!fwd)
          return failure();
        lists[rank].push_back({fwd, mb});
        break;
      }
      case sched::ActionKind::B: {
        int64_t stage = action.stage % p, chunk = action.stage / p;
        if (FragmentOp bwd = fragments.count({stage, chunk, FragmentKind::Bwd})
                                 ? fragments[{stage, chunk, FragmentKind::Bwd}]
                                 : FragmentOp()) {
          lists[rank].push_back({bwd, mb});
          break;
        }
        // Only split backward fragments: B is BI then BW.
        if (fragments.count({stage, chunk, FragmentKind::BwdInput}) &&
            fragments.count({stage, chunk, FragmentKind::BwdWeight})) {
          lists[rank].push_back(
              {fragments[{stage, chunk, FragmentKind::BwdInput}], mb});
          lists[rank].push_back(
              {fragments[{stage, chunk, FragmentKind::BwdWeight}], mb});
          break;
        }
        lookup(action.stage, FragmentKind::Bwd,
               " (or bwd_input and bwd_weight fragments)");
        return failure();
      }
      case sched::ActionKind::BI:
      case sched::ActionKind::BW: {
        bool input = action.kind == sched::ActionKind::BI;
        FragmentOp fragment =
            lookup(action.stage,
                   input ? FragmentKind::BwdInput : FragmentKind::BwdWeight,
                   " (its backward is split into BI and BW)");
        if (!fragment)
          return failure();
        lists[rank].push_back({fragment, mb});
        break;
      }
      case sched::ActionKind::Send:
      case sched::ActionKind::Recv:
        break; // rejected in buildSchedule
      }
    }
  }
  for (int64_t stage = 0; stage < p; ++stage)
    for (FragmentOp fragment : afterwards.lookup(stage))
      lists[stage].push_back({fragment, std::nullopt});

  // One list per rank: every replica runs its stage's list.
  OpBuilder builder = OpBuilder::atBlockEnd(&body);
  Location loc = program.getLoc();
  for (int64_t rank = 0, e = program.getNumRanks(); rank < e; ++rank) {
    auto rankOp = RankOp::create(builder, loc, rank);
    OpBuilder inner = OpBuilder::atBlockEnd(&rankOp.getBodyBlock());
    for (Run run : lists[program.getStageOfRank(rank)]) {
      IntegerAttr mb =
          run.second ? inner.getI64IntegerAttr(*run.second) : IntegerAttr();
      RunOp::create(inner, loc, run.first.getSymName(), mb);
    }
  }
  return success();
}

struct MPMDSchedulePass
    : tandem::mpmd::impl::MPMDScheduleBase<MPMDSchedulePass> {
  using MPMDScheduleBase::MPMDScheduleBase;
  void runOnOperation() override {
    bool failedAny = false;
    for (ProgramOp program : getOperation().getOps<ProgramOp>())
      if (failed(scheduleProgram(program, schedule)))
        failedAny = true;
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
