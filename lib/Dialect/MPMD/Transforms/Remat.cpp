//===- Remat.cpp - mpmd-remat ---------------------------------------------===//
//
// For each (stage, chunk) of a scheduled program, the values the backward
// fragments (bwd, or bwd_input and bwd_weight) read from the fwd fragment
// through same-stage transfers, the stash, are either kept or recomputed.
// A recomputed value's ops are cloned, in forward order, at the start of
// each backward fragment that needs it; their inputs are kept values or the
// fwd fragment's own arguments, which the backward fragment binds the same
// way (the same parameter, step input, or transfer from the same producer:
// mpmd-lower-transfers sends a slot once per receiving rank, so a second
// reader of a received stage input costs no message). bwd_input and
// bwd_weight each recompute what they need: handing values from B to W
// would be a stash again, alive from B to W, which is what zb-h1 delays.
//
// Runs after mpmd-schedule, because the budget needs the schedule's
// in-flight microbatch counts, and before mpmd-lower-transfers, which
// names slots by result index. docs/mpmd.md, "mpmd-remat".
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/Transforms/Remat.h"
#include "tandem/Analysis/CostModel.h"
#include "tandem/Dialect/MPMD/Analysis/Memory.h"
#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"
#include "tandem/Dialect/NN/IR/NNDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDREMAT
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

using namespace mlir;
using namespace tandem::mpmd;
namespace remat = tandem::mpmd::remat;

namespace {

enum class Policy { None, Full, Selective, Budget, Annotated };

std::optional<Policy> parsePolicy(StringRef name) {
  if (name == "none")
    return Policy::None;
  if (name == "full")
    return Policy::Full;
  if (name == "selective")
    return Policy::Selective;
  if (name == "budget")
    return Policy::Budget;
  if (name == "annotated")
    return Policy::Annotated;
  return std::nullopt;
}

/// Ops whose results `selective` keeps: the matrix-unit work (every
/// matmul, among them attention's scores QKᵀ and its output PV; fused
/// attention) and the softmax that turns scores into probabilities, whose
/// exp per score is the costliest elementwise work. Everything else
/// (elementwise, normalizations, views) is recomputed.
bool isExpensive(Operation *op) {
  StringRef name = op->getName().getStringRef();
  return name == "nn.matmul" || name == "nn.softmax" || name == "nn.attention";
}

/// The backward fragments of one (stage, chunk) and the fwd fragment whose
/// values they stash.
struct Position {
  FragmentOp fwd;
  SmallVector<FragmentOp> consumers;
};

/// One (stage, chunk)'s forward ops as the solver sees them.
struct PositionGraph {
  Position position;
  remat::Graph graph;
  SmallVector<Operation *> ops;
  DenseMap<Operation *, int> nodeOf;
  int64_t stage = 0;
  /// Stash bytes per microbatch before the pass.
  int64_t bytesBefore = 0;
};

/// How many of the first `end` bits are set: the shift of an index after
/// erasing those positions.
unsigned countBelow(const llvm::BitVector &bits, uint64_t end) {
  unsigned n = 0;
  for (uint64_t i = 0; i < end && i < bits.size(); ++i)
    n += bits.test(i);
  return n;
}

bool isBackwardKind(FragmentKind kind) {
  return kind == FragmentKind::Bwd || kind == FragmentKind::BwdInput ||
         kind == FragmentKind::BwdWeight;
}

bool isStash(TransferOp transfer, Position position) {
  return transfer.getSrc() == position.fwd.getSymName() &&
         llvm::any_of(position.consumers, [&](FragmentOp c) {
           return transfer.getDst() == c.getSymName();
         });
}

Value yielded(FragmentOp fragment, int64_t result) {
  return fragment.getBody().front().getTerminator()->getOperand(result);
}

/// `priced`: each op's FLOPs are needed (a policy other than none, which
/// recomputes splits alone and reports nothing).
FailureOr<PositionGraph> buildGraph(ProgramOp program, Position position,
                                    bool priced = true) {
  PositionGraph pg;
  pg.position = position;
  pg.stage = position.fwd.getStage();
  Block &body = position.fwd.getBody().front();
  for (Operation &op : body.without_terminator()) {
    int n = pg.ops.size();
    pg.nodeOf[&op] = n;
    pg.ops.push_back(&op);
    remat::Node node;
    llvm::Expected<tandem::analysis::OpCost> cost =
        tandem::analysis::estimateOp(&op);
    if (cost)
      node.flops = cost->flops;
    else if (priced)
      return op.emitOpError() << "cannot price recomputation: "
                              << llvm::toString(cost.takeError());
    else
      llvm::consumeError(cost.takeError());
    for (Type type : op.getResultTypes())
      node.resultBytes.push_back(memoryBytesOf(type));
    for (Value operand : op.getOperands())
      if (auto result = dyn_cast<OpResult>(operand))
        node.operands.push_back(
            {pg.nodeOf.lookup(result.getOwner()), result.getResultNumber()});
    pg.graph.nodes.push_back(std::move(node));
  }
  pg.graph.needs.resize(position.consumers.size());
  llvm::DenseSet<Value> keptBefore;
  for (TransferOp transfer : program.getBodyBlock().getOps<TransferOp>()) {
    if (!isStash(transfer, position))
      continue;
    Value value = yielded(position.fwd, transfer.getResult());
    if (keptBefore.insert(value).second)
      pg.bytesBefore += memoryBytesOf(value.getType());
    auto result = dyn_cast<OpResult>(value);
    if (!result)
      continue;
    size_t c = llvm::find_if(position.consumers,
                             [&](FragmentOp f) {
                               return f.getSymName() == transfer.getDst();
                             }) -
               position.consumers.begin();
    pg.graph.needs[c].push_back(
        {pg.nodeOf.lookup(result.getOwner()), result.getResultNumber()});
  }
  return pg;
}

/// Rewrites one (stage, chunk) to follow `plan`.
class Rewriter {
public:
  Rewriter(ProgramOp program, PositionGraph &pg)
      : program(program), pg(pg), fwd(pg.position.fwd) {}

  LogicalResult apply(const remat::Plan &plan) {
    for (auto [c, consumer] : llvm::enumerate(pg.position.consumers))
      if (failed(rewriteConsumer(consumer, plan.recompute[c], plan.stashed[c])))
        return failure();
    return dropUnusedResults();
  }

private:
  SmallVector<TransferOp> transfers() {
    return llvm::to_vector(program.getBodyBlock().getOps<TransferOp>());
  }

  /// The transfer into argument `arg` of `fragment`, or null.
  TransferOp transferInto(FragmentOp fragment, unsigned arg) {
    for (TransferOp t : transfers())
      if (t.getDst() == fragment.getSymName() && t.getArg() == arg)
        return t;
    return {};
  }

  Value addArgument(FragmentOp fragment, Type type, DictionaryAttr attrs) {
    unsigned index = fragment.getNumArguments();
    (void)fragment.insertArgument(index, type, attrs, fragment.getLoc());
    return fragment.getArgument(index);
  }

  /// An argument of `consumer` carrying slot `src[result]`, added with its
  /// transfer if the consumer does not receive that slot yet.
  Value receive(FragmentOp consumer, StringRef src, int64_t result, Type type) {
    for (TransferOp t : transfers())
      if (t.getDst() == consumer.getSymName() && t.getSrc() == src &&
          static_cast<int64_t>(t.getResult()) == result)
        return consumer.getArgument(t.getArg());
    Value arg = addArgument(consumer, type, DictionaryAttr());
    // Transfers sit before the rank lists, as mpmd-partition writes them.
    OpBuilder b(program.getContext());
    auto ranks = program.getBodyBlock().getOps<RankOp>();
    if (ranks.empty())
      b.setInsertionPointToEnd(&program.getBodyBlock());
    else
      b.setInsertionPoint(*ranks.begin());
    b.create<TransferOp>(
        fwd.getLoc(), FlatSymbolRefAttr::get(b.getContext(), src),
        b.getI64IntegerAttr(result),
        FlatSymbolRefAttr::get(b.getContext(), consumer.getSymName()),
        b.getI64IntegerAttr(cast<BlockArgument>(arg).getArgNumber()),
        TypeAttr::get(type));
    return arg;
  }

  /// `consumer`'s binding of the fwd fragment's argument `arg`.
  FailureOr<Value> bindArgument(FragmentOp consumer, unsigned arg) {
    Type type = fwd.getArgument(arg).getType();
    if (FlatSymbolRefAttr param = fwd.getParamBinding(arg)) {
      for (unsigned i = 0, e = consumer.getNumArguments(); i < e; ++i)
        if (consumer.getParamBinding(i) == param)
          return Value(consumer.getArgument(i));
      return addArgument(
          consumer, type,
          DictionaryAttr::get(
              fwd.getContext(),
              {NamedAttribute(MPMDDialect::kParamAttrName, param)}));
    }
    if (std::optional<int64_t> input = fwd.getInputBinding(arg)) {
      for (unsigned i = 0, e = consumer.getNumArguments(); i < e; ++i)
        if (consumer.getInputBinding(i) == input)
          return Value(consumer.getArgument(i));
      OpBuilder b(fwd.getContext());
      return addArgument(
          consumer, type,
          b.getDictionaryAttr(b.getNamedAttr(MPMDDialect::kInputAttrName,
                                             b.getI64IntegerAttr(*input))));
    }
    if (TransferOp in = transferInto(fwd, arg))
      return receive(consumer, in.getSrc(), in.getResult(), type);
    return fwd.emitOpError() << "argument " << arg
                             << " is bound by nothing; mpmd-remat cannot "
                                "bind it in a backward fragment";
  }

  /// Result index of `fwd` yielding `value`, appended if there is none.
  int64_t resultFor(Value value) {
    Operation *yield = fwd.getBody().front().getTerminator();
    for (OpOperand &operand : yield->getOpOperands())
      if (operand.get() == value)
        return operand.getOperandNumber();
    int64_t index = fwd.getNumResults();
    (void)fwd.insertResult(index, value.getType(), DictionaryAttr());
    yield->insertOperands(yield->getNumOperands(), value);
    return index;
  }

  LogicalResult rewriteConsumer(FragmentOp consumer, ArrayRef<int> recompute,
                                ArrayRef<remat::ValueRef> stashed) {
    IRMapping map;
    unsigned originalArgs = consumer.getNumArguments();
    auto valueOf = [&](remat::ValueRef v) {
      return pg.ops[v.first]->getResult(v.second);
    };
    // Kept values: through the existing transfer when there is one.
    for (remat::ValueRef v : stashed) {
      Value value = valueOf(v);
      map.map(value, receive(consumer, fwd.getSymName(), resultFor(value),
                             value.getType()));
    }
    // The fwd arguments that recomputation reads, or that were stashed
    // as they are.
    auto bind = [&](Value value) -> LogicalResult {
      auto arg = dyn_cast<BlockArgument>(value);
      if (!arg || map.contains(value))
        return success();
      FailureOr<Value> bound = bindArgument(consumer, arg.getArgNumber());
      if (failed(bound))
        return failure();
      map.map(value, *bound);
      return success();
    };
    for (int n : recompute)
      for (Value operand : pg.ops[n]->getOperands())
        if (failed(bind(operand)))
          return failure();
    SmallVector<TransferOp> stashEdges;
    for (TransferOp t : transfers())
      if (t.getSrc() == fwd.getSymName() &&
          t.getDst() == consumer.getSymName() && t.getArg() < originalArgs) {
        stashEdges.push_back(t);
        if (failed(bind(yielded(fwd, t.getResult()))))
          return failure();
      }

    OpBuilder b(consumer.getContext());
    b.setInsertionPointToStart(&consumer.getBody().front());
    for (int n : recompute) {
      Operation *clone = b.clone(*pg.ops[n], map);
      clone->setAttr("mpmd.remat", b.getUnitAttr());
    }

    // Every stash edge now reads its replacement; an edge whose value is
    // still received through it stays.
    llvm::BitVector erase(consumer.getNumArguments());
    for (TransferOp t : stashEdges) {
      BlockArgument old = consumer.getArgument(t.getArg());
      Value replacement = map.lookup(yielded(fwd, t.getResult()));
      if (replacement == old)
        continue;
      old.replaceAllUsesWith(replacement);
      erase.set(t.getArg());
      t.erase();
    }
    if (failed(consumer.eraseArguments(erase)))
      return consumer.emitOpError() << "cannot drop rematerialized arguments";
    for (TransferOp t : transfers())
      if (t.getDst() == consumer.getSymName())
        t.setArg(t.getArg() - countBelow(erase, t.getArg()));
    return success();
  }

  /// Drops the fwd results nothing reads any more, then the ops that only
  /// fed them.
  LogicalResult dropUnusedResults() {
    llvm::BitVector used(fwd.getNumResults());
    for (TransferOp t : transfers())
      if (t.getSrc() == fwd.getSymName())
        used.set(t.getResult());
    llvm::BitVector erase = used;
    erase.flip();
    for (unsigned i = 0, e = fwd.getNumResults(); i < e; ++i)
      if (fwd.getUpdateBinding(i) || fwd.getOutputBinding(i))
        erase.reset(i);
    Operation *yield = fwd.getBody().front().getTerminator();
    for (int i = static_cast<int>(erase.size()) - 1; i >= 0; --i)
      if (erase.test(i))
        yield->eraseOperand(i);
    if (failed(fwd.eraseResults(erase)))
      return fwd.emitOpError() << "cannot drop rematerialized results";
    for (TransferOp t : transfers())
      if (t.getSrc() == fwd.getSymName())
        t.setResult(t.getResult() - countBelow(erase, t.getResult()));
    // Backward, each op's predecessor taken before the op may go: a
    // std::reverse_iterator over the block (llvm::reverse of
    // without_terminator()) holds the erased op's successor position and
    // reads the freed op (found by the pipeline fuzzer).
    for (Operation *op = yield->getPrevNode(); op;) {
      Operation *previous = op->getPrevNode();
      if (op->use_empty() && isMemoryEffectFree(op))
        op->erase();
      op = previous;
    }
    return success();
  }

  ProgramOp program;
  PositionGraph &pg;
  FragmentOp fwd;
};

std::string formatFlops(double flops) {
  return llvm::formatv("{0:F0}", flops).str();
}

struct MPMDRematPass : public tandem::mpmd::impl::MPMDRematBase<MPMDRematPass> {
  using MPMDRematBase::MPMDRematBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<Policy> parsed = parsePolicy(policy);
    if (!parsed) {
      module.emitError() << "unknown remat policy '" << policy
                         << "': expected none, full, selective, budget or "
                            "annotated";
      return signalPassFailure();
    }
    if (*parsed == Policy::Budget && budget < 0) {
      module.emitError() << "policy=budget needs budget=<bytes>, the peak "
                            "bytes each rank may hold";
      return signalPassFailure();
    }
    if (*parsed != Policy::Budget && budget >= 0) {
      module.emitError() << "budget=" << static_cast<int64_t>(budget)
                         << " is only read by policy=budget (policy is '"
                         << policy << "')";
      return signalPassFailure();
    }
    if (*parsed == Policy::Budget && recomputeSplits) {
      module.emitError() << "recompute-splits is not read by policy=budget "
                            "(its search chooses every op)";
      return signalPassFailure();
    }
    if (*parsed == Policy::None && !recomputeSplits)
      return;
    auto programs = llvm::to_vector(module.getOps<ProgramOp>());
    if (programs.empty()) {
      module.emitError() << "mpmd-remat found no mpmd.program: run "
                            "mpmd-partition and mpmd-schedule first";
      return signalPassFailure();
    }
    for (ProgramOp program : programs)
      if (failed(rematProgram(program, *parsed)))
        return signalPassFailure();
  }

  LogicalResult checkProgram(ProgramOp program) {
    Block &body = program.getBodyBlock();
    if (body.getOps<RankOp>().empty())
      return program.emitOpError()
             << "is not scheduled: mpmd-remat runs after mpmd-schedule "
                "(the budget depends on the schedule's in-flight "
                "microbatches)";
    for (RankOp rank : body.getOps<RankOp>())
      for (Operation &action : rank.getBody().front())
        if (isa<SendOp, RecvOp>(action))
          return action.emitOpError()
                 << "is already lowered: mpmd-remat runs before "
                    "mpmd-lower-transfers, whose sends and receives name "
                    "results the pass renumbers";
    for (FragmentOp fragment : body.getOps<FragmentOp>())
      if (fragment.isExternal())
        return fragment.emitOpError()
               << "is a declaration: mpmd-remat runs on the whole program, "
                  "before mpmd-split-programs";
    return success();
  }

  /// Positions with a fwd fragment and at least one backward fragment.
  SmallVector<Position> positions(ProgramOp program) {
    std::map<std::pair<int64_t, int64_t>, Position> byPlace;
    for (FragmentOp f : program.getBodyBlock().getOps<FragmentOp>()) {
      Position &p = byPlace[{f.getStage(), f.getChunk()}];
      if (f.getKind() == FragmentKind::Fwd)
        p.fwd = f;
      else if (isBackwardKind(f.getKind()))
        p.consumers.push_back(f);
    }
    SmallVector<Position> result;
    for (auto &[place, p] : byPlace)
      if (p.fwd && !p.consumers.empty())
        result.push_back(p);
    return result;
  }

  /// Per forward op, whether its needed results are kept: none (full),
  /// the expensive ones (selective), or all but those marked
  /// `nn.recompute` (annotated: the model's own choice, e.g. the ops of a
  /// jax.checkpoint region).
  SmallVector<bool> policyChoice(const PositionGraph &pg, Policy p) {
    SmallVector<bool> stash(pg.ops.size(), p == Policy::None);
    for (auto [n, op] : llvm::enumerate(pg.ops)) {
      if (p == Policy::Selective)
        stash[n] = isExpensive(op);
      else if (p == Policy::Annotated)
        stash[n] = !op->hasAttr(tandem::nn::kRecomputeAttrName);
      if (recomputeSplits && isSplitReadWhole(pg, n))
        stash[n] = false;
    }
    return stash;
  }

  /// Whether node `n` is an nn.split of which every backward fragment that
  /// reads one result reads all: recomputing it from its operand then
  /// stashes no more bytes than keeping its results.
  static bool isSplitReadWhole(const PositionGraph &pg, int n) {
    if (pg.ops[n]->getName().getStringRef() != "nn.split")
      return false;
    unsigned results = pg.ops[n]->getNumResults();
    bool read = false;
    for (const auto &needs : pg.graph.needs) {
      llvm::BitVector readHere(results);
      for (remat::ValueRef v : needs)
        if (v.first == n)
          readHere.set(v.second);
      if (readHere.any() && !readHere.all())
        return false;
      read |= readHere.any();
    }
    return read;
  }

  LogicalResult rematProgram(ProgramOp program, Policy p) {
    if (failed(checkProgram(program)))
      return failure();
    std::vector<PositionGraph> graphs;
    for (const Position &position : positions(program)) {
      FailureOr<PositionGraph> pg =
          buildGraph(program, position, p != Policy::None);
      if (failed(pg))
        return failure();
      graphs.push_back(std::move(*pg));
    }
    SmallVector<remat::Plan> plans;
    if (p == Policy::Budget) {
      FailureOr<SmallVector<remat::Plan>> chosen = budgetPlans(program, graphs);
      if (failed(chosen))
        return failure();
      plans = std::move(*chosen);
    } else {
      for (PositionGraph &pg : graphs)
        plans.push_back(remat::evaluate(pg.graph, policyChoice(pg, p)));
    }
    for (auto [index, pg] : llvm::enumerate(graphs)) {
      const remat::Plan &plan = plans[index];
      // policy=none recomputes splits alone, which a target asked for
      // (tandemc --target cuda): nothing to report.
      if (p != Policy::None)
        report(pg, plan, index);
      if (failed(Rewriter(program, pg).apply(plan)))
        return failure();
    }
    return success();
  }

  void report(PositionGraph &pg, const remat::Plan &plan, size_t index) {
    // On the location, not the op, so the remark does not print the
    // fragment after it.
    InFlightDiagnostic remark = mlir::emitRemark(pg.position.fwd.getLoc());
    remark << "mpmd-remat policy=" << policy << ": stash " << plan.stashBytes
           << " bytes per microbatch (was " << pg.bytesBefore
           << ") besides the stage inputs; recompute "
           << formatFlops(plan.flops) << " FLOPs per microbatch";
    for (auto [c, consumer] : llvm::enumerate(pg.position.consumers)) {
      FragmentOp f = consumer;
      remark << "; @" << f.getSymName() << " keeps [";
      llvm::interleaveComma(plan.stashed[c], remark, [&](remat::ValueRef v) {
        remark << pg.ops[v.first]->getName().getStringRef();
      });
      remark << "] recomputes " << plan.recompute[c].size() << " ops";
    }
    if (!predicted.empty()) {
      remark << "; predicted peak of stage " << pg.stage << ": "
             << predicted[pg.stage] << " bytes (budget "
             << static_cast<int64_t>(budget) << ")";
      if (searchStopped[index])
        remark << "; search stopped at its limit, FLOPs may not be minimal";
    }
  }

  /// Peak bytes per stage (the most over its replicas' ranks) of `program`
  /// rewritten with `plans`, from the memory analysis of a rewritten copy.
  FailureOr<SmallVector<int64_t>> peaksWith(ProgramOp program,
                                            ArrayRef<remat::Plan> plans) {
    OwningOpRef<ModuleOp> scratch = ModuleOp::create(program.getLoc());
    auto copy = cast<ProgramOp>(program->clone());
    scratch->push_back(copy);
    SmallVector<Position> places = positions(copy);
    for (auto [place, plan] : llvm::zip(places, plans)) {
      FailureOr<PositionGraph> pg = buildGraph(copy, place);
      if (failed(pg) || failed(Rewriter(copy, *pg).apply(plan)))
        return failure();
    }
    FailureOr<SmallVector<RankMemory>> memory = analyzeMemory(copy);
    if (failed(memory))
      return failure();
    SmallVector<int64_t> peaks(program.getStages(), 0);
    for (const RankMemory &m : *memory) {
      int64_t stage = program.getStageOfRank(m.rank);
      peaks[stage] = std::max(peaks[stage], m.peak);
    }
    return peaks;
  }

  /// Per position, the plan with the fewest FLOPs whose stash fits its
  /// stage's cap, split evenly among the stage's chunks.
  SmallVector<remat::Plan> plansFor(ProgramOp program,
                                    ArrayRef<PositionGraph> graphs,
                                    ArrayRef<int64_t> caps) {
    SmallVector<int64_t> chunksOf(program.getStages(), 0);
    for (const PositionGraph &pg : graphs)
      ++chunksOf[pg.stage];
    SmallVector<remat::Plan> plans;
    searchStopped.clear();
    for (const PositionGraph &pg : graphs) {
      std::optional<remat::Solution> solution = remat::solve(
          pg.graph, caps[pg.stage] / chunksOf[pg.stage], kSearchLimit);
      searchStopped.push_back(!solution->optimal);
      plans.push_back(std::move(solution->plan));
    }
    return plans;
  }

  /// The budget policy. Ranks of different stages hold disjoint fragments,
  /// so each stage's stash cap is searched on its own, all at once: the
  /// largest cap (in bytes of one microbatch's stash) whose best plan keeps
  /// the stage's peak within the budget, by bisection between recomputing
  /// everything (cap 0, which must fit) and keeping everything. The peak
  /// is the memory analysis's, of the program rewritten with the plans, so
  /// it accounts for in-flight microbatches and for the larger backward
  /// temporaries recomputation brings. A cap is only kept once such a
  /// rewrite fits; bisection assumes the peak grows with the cap and, where
  /// it does not, stays at a smaller cap that was checked.
  FailureOr<SmallVector<remat::Plan>>
  budgetPlans(ProgramOp program, ArrayRef<PositionGraph> graphs) {
    int64_t stages = program.getStages();
    SmallVector<int64_t> lo(stages, 0), hi(stages, 0);
    for (const PositionGraph &pg : graphs) {
      SmallVector<bool> keepAll(pg.graph.nodes.size(), true);
      hi[pg.stage] += remat::evaluate(pg.graph, keepAll).stashBytes;
    }
    SmallVector<remat::Plan> plans = plansFor(program, graphs, lo);
    FailureOr<SmallVector<int64_t>> peaks = peaksWith(program, plans);
    if (failed(peaks))
      return failure();
    int64_t minimum = *llvm::max_element(*peaks);
    if (minimum > budget) {
      int64_t stage = llvm::max_element(*peaks) - peaks->begin();
      return program.emitOpError()
             << "budget=" << static_cast<int64_t>(budget)
             << " bytes per rank is below what recomputing everything "
                "reaches: the minimum achievable peak is "
             << minimum << " bytes (stage " << stage << ")";
    }
    SmallVector<int64_t> best = *peaks;
    while (true) {
      SmallVector<int64_t> mid(stages);
      bool open = false;
      for (int64_t s = 0; s < stages; ++s) {
        mid[s] = lo[s] + (hi[s] - lo[s] + 1) / 2;
        open |= lo[s] < hi[s];
      }
      if (!open)
        break;
      FailureOr<SmallVector<int64_t>> trial =
          peaksWith(program, plansFor(program, graphs, mid));
      if (failed(trial))
        return failure();
      for (int64_t s = 0; s < stages; ++s) {
        if (lo[s] == hi[s])
          continue;
        if ((*trial)[s] <= budget) {
          lo[s] = mid[s];
          best[s] = (*trial)[s];
        } else {
          hi[s] = mid[s] - 1;
        }
      }
    }
    predicted = best;
    return plansFor(program, graphs, lo);
  }

  /// Branches one solve may take: exhaustive for a stage of a few layers;
  /// beyond it the best plan found is used and the remark says so.
  static constexpr int64_t kSearchLimit = int64_t(1) << 20;
  /// Per position, whether the last search for it stopped at the limit.
  SmallVector<bool> searchStopped;
  /// The budget policy's predicted peak per stage.
  SmallVector<int64_t> predicted;
};

} // namespace
