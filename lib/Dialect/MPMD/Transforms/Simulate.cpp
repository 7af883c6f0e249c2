//===- Simulate.cpp - mpmd-simulate ---------------------------------------===//
//
// Reads every scheduled mpmd.program's rank action lists back into a
// TandemSchedule schedule (docs/schedules.md) and runs the library's
// discrete-event simulator on it: the inverse of mpmd-schedule. Schedule
// stage s = chunk * p + stage of the fragment; runs of fwd / bwd /
// bwd_input / bwd_weight fragments are F / B / BI / BW actions; sends and
// receives of a fwd slot to the next virtual stage's rank (or of a bwd /
// bwd_input slot to the previous one's) are SEND / RECV actions with that
// payload and peer. Everything else (once-per-step runs, transfers the
// library's model has no payload for, collectives) takes no time and does
// not block. The report (step time, bubble and peak in-flight microbatches
// per rank) is emitted as remarks on the program; svg= and trace= write the
// pictures. See docs/schedules.md, "From IR".
//
// With device=, durations come from the cost model instead of the f= / b= /
// w= options: each fragment's time is the sum of its ops' roofline times on
// the device, payloads are the bytes of the slots crossing each stage edge
// (at the wire type of their sends), links are the device's, and the report
// is in seconds, with stash bytes per rank and bytes per link
// (docs/cost-model.md).
//
// Each rank's remark ends with its peak memory from the per-rank memory
// analysis (tandem/Dialect/MPMD/Analysis/Memory.h, docs/mpmd.md, "Memory
// analysis"), which does not depend on the durations.
//
//===----------------------------------------------------------------------===//

#include "tandem/Analysis/CostModel.h"
#include "tandem/Analysis/Device.h"
#include "tandem/Dialect/MPMD/Analysis/Memory.h"
#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"
#include "tandem/Schedule/Schedule.h"
#include "tandem/Schedule/Simulator.h"
#include "tandem/Schedule/Writers.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDSIMULATE
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

using namespace mlir;
using namespace tandem::mpmd;
namespace sched = tandem::schedule;

namespace {

/// Integers print without a fraction, other values with 6 significant
/// digits (as tandemc schedule's report does).
std::string number(double x) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.6g", x);
  return s;
}

/// Parses "1" or "1,2,1.5" into non-negative durations; on failure returns
/// the message.
std::optional<std::string> parseDurations(llvm::StringRef name,
                                          llvm::StringRef text,
                                          std::vector<double> &out) {
  llvm::SmallVector<llvm::StringRef> parts;
  text.split(parts, ',');
  for (llvm::StringRef part : parts) {
    double value = 0;
    if (part.trim().getAsDouble(value) || !std::isfinite(value) || value < 0)
      return ("option " + name +
              " expects non-negative numbers separated by commas, got '" +
              text + "'")
          .str();
    out.push_back(value);
  }
  return std::nullopt;
}

/// A schedule read from a program, with the op behind each action.
struct ReadSchedule {
  sched::Schedule schedule;
  std::vector<std::vector<Operation *>> ops;
};

/// Builds the schedule of `program`'s replica-0 ranks.
FailureOr<ReadSchedule> readProgram(ProgramOp program, bool explicitTransfers) {
  Block &body = program.getBodyBlock();
  int p = program.getStages();
  ReadSchedule result;
  sched::Schedule &schedule = result.schedule;
  schedule.name = program.getSymName().str();
  schedule.shape.ranks = p;
  schedule.shape.chunks = program.getChunks();
  schedule.shape.microbatches = program.getMicrobatches();
  schedule.actions.resize(p);
  result.ops.resize(p);
  int S = schedule.shape.stages();

  for (RankOp rankOp : body.getOps<RankOp>()) {
    int64_t rank = rankOp.getRank();
    if (rank >= p)
      continue; // other replicas run the same lists
    // (kind, payload, stage, microbatch) already taken on this rank: a
    // payload travels once per step in the model.
    std::set<std::tuple<int, int, int, int>> seen;
    for (Operation &op : rankOp.getBodyBlock()) {
      auto add = [&](const sched::Action &action) {
        schedule.actions[rank].push_back(action);
        result.ops[rank].push_back(&op);
      };
      if (auto run = dyn_cast<RunOp>(op)) {
        auto fragment = program.lookupSymbol<FragmentOp>(run.getFragment());
        if (!fragment || !run.getMicrobatch())
          continue; // once per step: no time, no dependencies
        sched::ActionKind kind;
        switch (fragment.getKind()) {
        case FragmentKind::Fwd:
          kind = sched::ActionKind::F;
          break;
        case FragmentKind::Bwd:
          kind = sched::ActionKind::B;
          break;
        case FragmentKind::BwdInput:
          kind = sched::ActionKind::BI;
          break;
        case FragmentKind::BwdWeight:
          kind = sched::ActionKind::BW;
          break;
        default:
          continue;
        }
        int stage = fragment.getChunk() * p + fragment.getStage();
        add(sched::Action::compute(kind, stage, *run.getMicrobatch()));
        continue;
      }
      if (!explicitTransfers)
        continue;
      bool isSend = isa<SendOp>(op);
      if (!isSend && !isa<RecvOp>(op))
        continue; // collectives are not modelled
      FlatSymbolRefAttr slot;
      std::optional<uint64_t> microbatch;
      int64_t peer;
      if (auto send = dyn_cast<SendOp>(op)) {
        slot = send.getFragmentAttr();
        microbatch = send.getMicrobatch();
        peer = send.getPeer();
      } else {
        auto recv = cast<RecvOp>(op);
        slot = recv.getFragmentAttr();
        microbatch = recv.getMicrobatch();
        peer = recv.getPeer();
      }
      auto producer = program.lookupSymbol<FragmentOp>(slot);
      if (!producer || !microbatch)
        continue;
      int stage = producer.getChunk() * p + producer.getStage();
      sched::ActionKind payload;
      int toStage;
      switch (producer.getKind()) {
      case FragmentKind::Fwd:
        payload = sched::ActionKind::F;
        toStage = stage + 1;
        break;
      case FragmentKind::Bwd:
      case FragmentKind::BwdInput:
        payload = sched::ActionKind::B;
        toStage = stage - 1;
        break;
      default:
        continue;
      }
      if (toStage < 0 || toStage >= S)
        continue;
      int from = stage % p, to = toStage % p;
      if (from == to ||
          (isSend ? rank != from || peer != to : rank != to || peer != from))
        continue; // not the model's edge (e.g. a skip connection)
      sched::ActionKind kind =
          isSend ? sched::ActionKind::Send : sched::ActionKind::Recv;
      if (!seen.insert({static_cast<int>(kind), static_cast<int>(payload),
                        stage, static_cast<int>(*microbatch)})
               .second)
        continue;
      add(sched::Action::transfer(kind, payload, stage, *microbatch, peer));
    }
  }
  return result;
}

/// The virtual stage of a fragment.
int virtualStage(ProgramOp program, FragmentOp fragment) {
  return fragment.getChunk() * program.getStages() + fragment.getStage();
}

/// Fills `costs` for `program` from the cost model on `device`: per
/// virtual stage the F, BI and BW durations (a bwd fragment's whole time is
/// BI, with BW 0, since the simulator's B takes BI + BW), the payloads
/// crossing each stage edge, and the stash kept from F to the backward.
/// Reports an op without a rule (or a fragment without a body) at its
/// location. Every costed fragment gets a remark with its FLOPs, bytes and
/// time.
LogicalResult costProgram(ProgramOp program,
                          const tandem::analysis::Device &device,
                          sched::Costs &costs) {
  int p = program.getStages();
  size_t S = p * program.getChunks();
  costs.forward.assign(S, 0.0);
  costs.inputGrad.assign(S, 0.0);
  costs.weightGrad.assign(S, 0.0);
  costs.activationBytes.assign(S, 0.0);
  costs.gradientBytes.assign(S, 0.0);
  costs.stashBytes.assign(S, 0.0);
  costs.latency = device.linkLatency;
  costs.bandwidth = device.linkBandwidth;
  costs.bytesPerMicrobatch = 0.0;

  for (FragmentOp fragment : program.getBodyBlock().getOps<FragmentOp>()) {
    if (fragment.isExternal())
      return fragment.emitOpError()
             << "has no body for mpmd-simulate's cost model (device="
             << device.name << "); simulate before mpmd-split-programs";
    double flops = 0, bytes = 0, seconds = 0;
    WalkResult walk = fragment.getBody().walk([&](Operation *op) {
      if (op->hasTrait<OpTrait::IsTerminator>())
        return WalkResult::advance();
      llvm::Expected<tandem::analysis::OpCost> cost =
          tandem::analysis::estimateOp(op);
      llvm::Expected<double> time =
          cost ? tandem::analysis::timeOn(*cost, device)
               : llvm::Expected<double>(cost.takeError());
      if (!time) {
        op->emitError() << "mpmd-simulate: "
                        << llvm::toString(time.takeError());
        return WalkResult::interrupt();
      }
      flops += cost->flops;
      bytes += cost->bytes;
      seconds += *time;
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    fragment.emitRemark() << "costs " << number(flops) << " FLOPs, "
                          << number(bytes) << " bytes, " << number(seconds)
                          << " s on " << device.name;
    size_t s = virtualStage(program, fragment);
    switch (fragment.getKind()) {
    case FragmentKind::Fwd:
      costs.forward[s] += seconds;
      break;
    case FragmentKind::Bwd:
    case FragmentKind::BwdInput:
      costs.inputGrad[s] += seconds;
      break;
    case FragmentKind::BwdWeight:
      costs.weightGrad[s] += seconds;
      break;
    default:
      break; // once per step: not in the simulator's timeline
    }
  }

  // The wire type each slot is sent as (the first send of it decides).
  std::map<std::pair<llvm::StringRef, int64_t>, Type> wire;
  program.walk([&](SendOp send) {
    wire.try_emplace({send.getFragment(), send.getResult()}, send.getWire());
  });
  auto wireBytes = [&](llvm::StringRef fragment, int64_t result,
                       RankedTensorType type) {
    auto it = wire.find({fragment, result});
    if (it == wire.end())
      return tandem::analysis::bytesOf(type);
    return tandem::analysis::bytesOf(type.clone(it->second));
  };

  // A slot counts once per edge however many fragments read it.
  std::set<std::tuple<int, llvm::StringRef, int64_t>> activation, gradient,
      stash;
  for (TransferOp transfer : program.getBodyBlock().getOps<TransferOp>()) {
    auto src = program.lookupSymbol<FragmentOp>(transfer.getSrc());
    auto dst = program.lookupSymbol<FragmentOp>(transfer.getDst());
    if (!src || !dst || !src.isPerMicrobatch() || !dst.isPerMicrobatch())
      continue;
    int from = virtualStage(program, src), to = virtualStage(program, dst);
    auto type = cast<RankedTensorType>(transfer.getType());
    std::tuple<int, llvm::StringRef, int64_t> key(from, src.getSymName(),
                                                  transfer.getResult());
    bool crosses = from % p != to % p;
    bool srcForward = src.getKind() == FragmentKind::Fwd;
    bool srcInputGrad = src.getKind() == FragmentKind::Bwd ||
                        src.getKind() == FragmentKind::BwdInput;
    if (crosses && srcForward && to == from + 1 &&
        activation.insert(key).second)
      costs.activationBytes[from] +=
          wireBytes(src.getSymName(), transfer.getResult(), type);
    if (crosses && srcInputGrad && to == from - 1 &&
        gradient.insert(key).second)
      costs.gradientBytes[from] +=
          wireBytes(src.getSymName(), transfer.getResult(), type);
    // A forward value a backward of `to` reads: kept from F to B on that
    // stage, at its own type (what arrives is converted back).
    if (srcForward && dst.getKind() != FragmentKind::Fwd &&
        stash.insert({to, src.getSymName(), transfer.getResult()}).second)
      costs.stashBytes[to] += tandem::analysis::bytesOf(type);
  }
  return success();
}

/// ", peak memory N bytes" for rank `rank` (replica 0 ranks come first in
/// the analysis, as in the simulator's report).
std::string peakMemory(llvm::ArrayRef<RankMemory> memory, size_t rank) {
  if (rank >= memory.size())
    return "";
  return ", peak memory " + std::to_string(memory[rank].peak) + " bytes";
}

/// `path` for the only program, else `stem.<program>.ext`.
std::string outputPath(llvm::StringRef path, ProgramOp program, bool several) {
  if (!several)
    return path.str();
  llvm::SmallString<128> result(path);
  std::string ext = llvm::sys::path::extension(path).str();
  llvm::sys::path::replace_extension(result,
                                     "." + program.getSymName().str() + ext);
  return std::string(result);
}

LogicalResult writeFile(ProgramOp program, llvm::StringRef path,
                        llvm::function_ref<void(llvm::raw_ostream &)> write) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return program.emitError()
           << "mpmd-simulate cannot write '" << path << "': " << ec.message();
  write(out.os());
  out.keep();
  return success();
}

struct MPMDSimulatePass
    : tandem::mpmd::impl::MPMDSimulateBase<MPMDSimulatePass> {
  using MPMDSimulateBase::MPMDSimulateBase;

  /// Reads the options into `costs`, or reports the first bad one.
  LogicalResult readCosts(sched::Costs &costs) {
    ModuleOp module = getOperation();
    if (!device.empty()) {
      for (auto [name, given] :
           {std::make_pair("f", forward.hasValue()),
            std::make_pair("b", inputGrad.hasValue()),
            std::make_pair("w", weightGrad.hasValue()),
            std::make_pair("latency", latency.hasValue()),
            std::make_pair("bandwidth", bandwidth.hasValue()),
            std::make_pair("bytes", bytes.hasValue())})
        if (given)
          return module.emitError()
                 << "mpmd-simulate: option " << name
                 << " cannot be combined with device=: the cost model gives "
                    "durations, payloads and links";
      llvm::Expected<tandem::analysis::Device> loaded =
          tandem::analysis::loadDevice(device);
      if (!loaded)
        return module.emitError()
               << "mpmd-simulate: " << llvm::toString(loaded.takeError());
      deviceDescription = std::move(*loaded);
    }
    costs.forward.clear();
    costs.inputGrad.clear();
    costs.weightGrad.clear();
    for (auto [name, text, out] :
         {std::make_tuple("f", &forward, &costs.forward),
          std::make_tuple("b", &inputGrad, &costs.inputGrad),
          std::make_tuple("w", &weightGrad, &costs.weightGrad)})
      if (std::optional<std::string> error =
              parseDurations(name, text->getValue(), *out))
        return module.emitError() << "mpmd-simulate: " << *error;
    for (auto [name, value] :
         {std::make_pair("latency", latency.getValue()),
          std::make_pair("bandwidth", bandwidth.getValue()),
          std::make_pair("bytes", bytes.getValue())})
      if (!std::isfinite(value) || value < 0)
        return module.emitError()
               << "mpmd-simulate: option " << name
               << " must be a non-negative number, got " << number(value);
    if (transfers != "explicit" && transfers != "implicit")
      return module.emitError()
             << "mpmd-simulate: option transfers must be 'explicit' or "
                "'implicit', got '"
             << transfers << "'";
    costs.latency = latency;
    costs.bandwidth = bandwidth;
    costs.bytesPerMicrobatch = bytes;
    return success();
  }

  LogicalResult simulateProgram(ProgramOp program, sched::Costs costs,
                                bool several) {
    if (program.getBodyBlock().getOps<RankOp>().empty())
      return program.emitOpError()
             << "has no rank action lists to simulate; run mpmd-schedule "
                "first";
    if (deviceDescription &&
        failed(costProgram(program, *deviceDescription, costs)))
      return failure();
    int S = program.getStages() * program.getChunks();
    for (auto [name, values] : {std::make_pair("f", &costs.forward),
                                std::make_pair("b", &costs.inputGrad),
                                std::make_pair("w", &costs.weightGrad)})
      if (values->size() != 1 && values->size() != static_cast<size_t>(S))
        return program.emitOpError()
               << "mpmd-simulate option " << name << " has " << values->size()
               << " durations; expected 1 or one per "
               << "virtual stage (" << S << ")";

    FailureOr<ReadSchedule> read =
        readProgram(program, transfers == "explicit");
    if (failed(read))
      return failure();
    const sched::Schedule &schedule = read->schedule;
    sched::ValidateOptions validate;
    validate.accumulationOrder = false; // timing does not depend on it
    if (llvm::Error error = sched::validateSchedule(schedule, validate))
      return program.emitOpError()
             << "action lists are not a schedule the simulator can run: "
             << llvm::toString(std::move(error));

    llvm::Expected<sched::SimulationReport> report =
        sched::simulate(schedule, costs);
    if (!report)
      return reportFailure(program, *read, llvm::toString(report.takeError()));

    double busy = 0;
    for (const sched::RankReport &rank : report->ranks)
      busy += rank.busy;
    double total = report->stepTime * report->ranks.size();
    FailureOr<SmallVector<RankMemory>> memory = analyzeMemory(program);
    if (failed(memory))
      return failure();
    if (deviceDescription)
      emitDeviceReport(program, schedule, *report, total, busy, *memory);
    else
      program.emitRemark() << "simulated step time " << number(report->stepTime)
                           << " (" << schedule.shape.ranks << " ranks, "
                           << schedule.shape.chunks << " chunks per rank, "
                           << schedule.shape.microbatches
                           << " microbatches), mean bubble "
                           << number(total > 0 ? (total - busy) / total : 0.0);
    if (!deviceDescription)
      for (auto [r, rank] : llvm::enumerate(report->ranks))
        program.emitRemark()
            << "rank " << r << ": busy " << number(rank.busy) << ", idle "
            << number(rank.idle) << ", bubble " << number(rank.bubble)
            << ", peak in-flight microbatches " << rank.peakInFlight
            << peakMemory(*memory, r);

    if (!svg.empty() &&
        failed(writeFile(program, outputPath(svg, program, several),
                         [&](llvm::raw_ostream &os) {
                           sched::writeSVG(schedule, *report, os);
                         })))
      return failure();
    if (!trace.empty() &&
        failed(writeFile(program, outputPath(trace, program, several),
                         [&](llvm::raw_ostream &os) {
                           sched::writeTrace(schedule, *report, os);
                         })))
      return failure();
    return success();
  }

  /// The report in seconds: step time, per rank busy / idle / bubble /
  /// peak in-flight microbatches and their stash bytes, bytes per link.
  void emitDeviceReport(ProgramOp program, const sched::Schedule &schedule,
                        const sched::SimulationReport &report, double total,
                        double busy, llvm::ArrayRef<RankMemory> memory) {
    program.emitRemark() << "simulated step time " << number(report.stepTime)
                         << " s on " << deviceDescription->name << " ("
                         << schedule.shape.ranks << " ranks, "
                         << schedule.shape.chunks << " chunks per rank, "
                         << schedule.shape.microbatches
                         << " microbatches), mean bubble "
                         << number(total > 0 ? (total - busy) / total : 0.0);
    for (auto [r, rank] : llvm::enumerate(report.ranks))
      program.emitRemark() << "rank " << r << ": busy " << number(rank.busy)
                           << " s, idle " << number(rank.idle) << " s, bubble "
                           << number(rank.bubble)
                           << ", peak in-flight microbatches "
                           << rank.peakInFlight << " ("
                           << number(rank.peakInFlightBytes) << " bytes)"
                           << peakMemory(memory, r);
    for (const sched::LinkReport &link : report.links)
      program.emitRemark() << "link " << link.from << " -> " << link.to << ": "
                           << link.transfers << " transfers, "
                           << number(link.bytes) << " bytes";
  }

  /// Reports a simulator error; a deadlock names the stuck ranks, with a
  /// note on the op each one waits at.
  LogicalResult reportFailure(ProgramOp program, const ReadSchedule &read,
                              llvm::StringRef message) {
    if (!message.starts_with("deadlock"))
      return program.emitOpError() << "cannot be simulated: " << message;
    llvm::SmallVector<llvm::StringRef> lines;
    message.split(lines, '\n');
    // Lines after the first: "  rank R waits at action N (TOK) for ...".
    llvm::SmallVector<std::pair<unsigned, unsigned>> stuck;
    llvm::SmallVector<llvm::StringRef> reasons;
    for (llvm::StringRef line : llvm::drop_begin(lines)) {
      llvm::StringRef rest = line.trim();
      unsigned rank, index;
      if (!rest.consume_front("rank ") || rest.consumeInteger(10, rank) ||
          !rest.consume_front(" waits at action ") ||
          rest.consumeInteger(10, index))
        continue;
      stuck.push_back({rank, index});
      reasons.push_back(line.trim());
    }
    std::string ranks;
    for (auto [i, s] : llvm::enumerate(stuck))
      ranks += (i ? ", " : "") + std::to_string(s.first);
    InFlightDiagnostic diag =
        program.emitOpError()
        << "deadlocks in simulation (rendezvous send/recv): ranks " << ranks
        << " can never progress";
    for (auto [s, reason] : llvm::zip(stuck, reasons)) {
      auto [rank, index] = s;
      if (rank < read.ops.size() && index < read.ops[rank].size())
        diag.attachNote(read.ops[rank][index]->getLoc()) << reason;
      else
        diag.attachNote() << reason;
    }
    return failure();
  }

  void runOnOperation() override {
    sched::Costs costs;
    if (failed(readCosts(costs)))
      return signalPassFailure();
    auto programs = llvm::to_vector(getOperation().getOps<ProgramOp>());
    bool several = programs.size() > 1;
    bool failedAny = false;
    for (ProgramOp program : programs)
      if (failed(simulateProgram(program, costs, several)))
        failedAny = true;
    if (failedAny)
      signalPassFailure();
  }

  /// The device= description, loaded by readCosts.
  std::optional<tandem::analysis::Device> deviceDescription;
};

} // namespace
