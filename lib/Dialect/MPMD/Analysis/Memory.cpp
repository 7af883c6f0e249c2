//===- Memory.cpp - Per-rank memory of a scheduled mpmd program -----------===//
//
// Walks each rank's action list once, recording for every value slot the
// rank holds when it appears (its producing run, its receive, or, without
// an explicit receive, its first reader) and its last use. Each slot falls
// into one category (parameter copy, stash, gradient accumulation buffer,
// or other values in flight); persistent parameters and optimizer state are
// live for the whole step. The peak adds, at each action, every live slot,
// the persistent bytes and the running fragment's temporaries. The
// definitions are in docs/mpmd.md, "Memory analysis".
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/Analysis/Memory.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace mlir;
using namespace tandem::mpmd;

int64_t tandem::mpmd::memoryBytesOf(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  Type element = shaped ? shaped.getElementType() : type;
  if (shaped && !shaped.hasStaticShape())
    return 0;
  int64_t elements = shaped ? shaped.getNumElements() : 1;
  int64_t width;
  if (element.isIndex())
    width = 8;
  else if (element.isIntOrFloat())
    // Sub-byte types (i1, f4) take a byte each, as runtimes store them.
    width = std::max<int64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8);
  else if (auto complex = dyn_cast<ComplexType>(element))
    width = 2 * memoryBytesOf(complex.getElementType());
  else
    return 0;
  return elements * width;
}

int64_t tandem::mpmd::fragmentTemporaries(FragmentOp fragment) {
  if (fragment.isExternal())
    return 0;
  Block &block = fragment.getBody().front();
  // Position of every top-level op; a use inside a nested region counts at
  // its top-level ancestor.
  llvm::DenseMap<Operation *, int64_t> position;
  int64_t n = 0;
  for (Operation &op : block)
    position[&op] = n++;
  // Bytes entering / leaving the live set at each position.
  std::vector<int64_t> delta(n + 1, 0);
  for (Operation &op : block) {
    int64_t def = position[&op];
    for (Value result : op.getResults()) {
      int64_t last = def;
      bool yielded = false;
      for (OpOperand &use : result.getUses()) {
        Operation *user = block.findAncestorOpInBlock(*use.getOwner());
        if (!user)
          continue;
        if (isa<YieldOp>(user)) {
          yielded = true;
          break;
        }
        last = std::max(last, position[user]);
      }
      // A yielded value is the result slot the action list walk counts.
      if (yielded)
        continue;
      int64_t bytes = memoryBytesOf(result.getType());
      delta[def] += bytes;
      delta[last + 1] -= bytes;
    }
  }
  int64_t live = 0, peak = 0;
  for (int64_t i = 0; i < n; ++i) {
    live += delta[i];
    peak = std::max(peak, live);
  }
  return peak;
}

void tandem::mpmd::printRankMemory(const RankMemory &m, llvm::raw_ostream &os) {
  os << "rank " << m.rank << ": peak " << m.peak << " bytes; parameters "
     << m.parameters << ", copies " << m.parameterCopies << ", gradients "
     << m.gradients << ", optimizer state " << m.optimizerState << ", stash "
     << m.stash << " (" << m.peakInFlight << " x " << m.stashPerMicrobatch
     << " in flight), temporaries " << m.temporaries;
}

namespace {

bool isBackwardKind(FragmentKind kind) {
  return kind == FragmentKind::Bwd || kind == FragmentKind::BwdInput ||
         kind == FragmentKind::BwdWeight;
}

/// A value slot: a fragment result (of a microbatch, or -1 for a
/// once-per-step producer) or a microbatch's slice of a step input (empty
/// fragment name, `index` the input).
using SlotKey = std::tuple<llvm::StringRef, int64_t, int64_t>;

enum class SlotClass { Other, Copy, Stash };

struct Slot {
  int64_t bytes = 0;
  int64_t microbatch = -1;
  /// Action index of the production or reception, if the rank has one.
  int64_t produced = -1;
  int64_t firstUse = -1;
  int64_t lastUse = -1;
  SlotClass cls = SlotClass::Other;
  /// A step output (mpmd.output): held until the step ends.
  bool output = false;
};

/// One accumulation buffer: a per-microbatch result summed for a
/// once-per-step reader on this rank.
struct Accumulator {
  int64_t bytes = 0;
  int64_t lastRead = -1;
  int64_t firstRead = -1;
};

class RankWalker {
public:
  RankWalker(ProgramOp program,
             const std::map<std::pair<llvm::StringRef, int64_t>,
                            std::pair<llvm::StringRef, int64_t>> &incoming,
             llvm::DenseMap<Operation *, int64_t> &temporariesCache)
      : program(program), incoming(incoming),
        temporariesCache(temporariesCache) {}

  FailureOr<RankMemory> walk(int64_t rank, RankOp rankOp);

private:
  Slot &slot(const SlotKey &key, int64_t bytes) {
    auto [it, inserted] = slots.try_emplace(key);
    if (inserted) {
      it->second.bytes = bytes;
      it->second.microbatch = std::get<2>(key);
    }
    return it->second;
  }
  void use(const SlotKey &key, int64_t bytes, int64_t at) {
    Slot &s = slot(key, bytes);
    if (s.firstUse < 0)
      s.firstUse = at;
    s.lastUse = std::max(s.lastUse, at);
  }
  void produce(const SlotKey &key, int64_t bytes, int64_t at) {
    Slot &s = slot(key, bytes);
    if (s.produced < 0)
      s.produced = at;
  }
  int64_t resultBytes(llvm::StringRef fragment, int64_t result, Type fallback) {
    if (auto f = program.lookupSymbol<FragmentOp>(fragment))
      if (result >= 0 && result < f.getNumResults())
        return memoryBytesOf(f.getResultTypes()[result]);
    return memoryBytesOf(fallback);
  }
  LogicalResult run(RunOp run, int64_t at);

  ProgramOp program;
  const std::map<std::pair<llvm::StringRef, int64_t>,
                 std::pair<llvm::StringRef, int64_t>> &incoming;
  llvm::DenseMap<Operation *, int64_t> &temporariesCache;

  std::map<SlotKey, Slot> slots;
  /// Per-microbatch slots some once-per-step run of this rank sums.
  std::map<std::pair<llvm::StringRef, int64_t>, Accumulator> accumulators;
  /// Parameter -> (bytes, read by a fragment other than an optimizer).
  llvm::StringMap<std::pair<int64_t, bool>> params;
  /// First per-microbatch run of each microbatch on this rank.
  std::map<int64_t, int64_t> firstRun;
  /// Temporaries of the fragment run at each action (0 for communication).
  std::vector<int64_t> temporaries;
};

LogicalResult RankWalker::run(RunOp runOp, int64_t at) {
  auto fragment = program.lookupSymbol<FragmentOp>(runOp.getFragmentAttr());
  if (!fragment)
    return runOp.emitOpError() << "runs @" << runOp.getFragment()
                               << ", which is not a fragment of the program";
  if (fragment.isExternal())
    return runOp.emitOpError()
           << "runs @" << runOp.getFragment()
           << ", a declaration: the memory analysis needs its body";
  bool perMicrobatch = fragment.isPerMicrobatch();
  int64_t mb = perMicrobatch && runOp.getMicrobatch()
                   ? static_cast<int64_t>(*runOp.getMicrobatch())
                   : -1;
  if (mb >= 0)
    firstRun.try_emplace(mb, at);
  FragmentKind kind = fragment.getKind();
  bool backward = isBackwardKind(kind);

  auto [cached, inserted] = temporariesCache.try_emplace(fragment, 0);
  if (inserted)
    cached->second = fragmentTemporaries(fragment);
  temporaries[at] = cached->second;

  for (unsigned j = 0, e = fragment.getNumArguments(); j < e; ++j) {
    Type type = fragment.getArgumentTypes()[j];
    int64_t bytes = memoryBytesOf(type);
    if (FlatSymbolRefAttr param = fragment.getParamBinding(j)) {
      auto &entry = params[param.getValue()];
      entry.first = bytes;
      entry.second |= kind != FragmentKind::Optimizer;
      continue;
    }
    if (std::optional<int64_t> input = fragment.getInputBinding(j)) {
      SlotKey key{llvm::StringRef(), *input, mb};
      use(key, bytes, at);
      // An input slice a backward run reads again is kept from the
      // microbatch's forward run: part of its stash.
      if (backward)
        slots[key].cls = SlotClass::Stash;
      continue;
    }
    auto it = incoming.find({fragment.getSymName(), j});
    if (it == incoming.end())
      continue; // unbound: the verifier reports it
    auto [srcName, result] = it->second;
    auto src = program.lookupSymbol<FragmentOp>(srcName);
    if (!src)
      continue;
    bool srcPerMicrobatch = src.isPerMicrobatch();
    if (srcPerMicrobatch && !perMicrobatch) {
      // Gradient accumulation: each microbatch's value is added to one
      // buffer as it arrives, so the m values are never held at once.
      Accumulator &acc = accumulators[{srcName, result}];
      acc.bytes = bytes;
      if (acc.firstRead < 0)
        acc.firstRead = at;
      acc.lastRead = std::max(acc.lastRead, at);
      continue;
    }
    SlotKey key{srcName, result, srcPerMicrobatch ? mb : -1};
    use(key, bytes, at);
    if (backward && srcPerMicrobatch &&
        (src.getKind() == FragmentKind::Fwd ||
         (src.getKind() == FragmentKind::BwdInput &&
          kind == FragmentKind::BwdWeight)))
      slots[key].cls = SlotClass::Stash;
  }

  for (unsigned j = 0, e = fragment.getNumResults(); j < e; ++j) {
    // The new value of a parameter overwrites it in place.
    if (fragment.getUpdateBinding(j))
      continue;
    SlotKey key{fragment.getSymName(), j, mb};
    produce(key, memoryBytesOf(fragment.getResultTypes()[j]), at);
    if (fragment.getOutputBinding(j))
      slots[key].output = true;
  }
  return success();
}

FailureOr<RankMemory> RankWalker::walk(int64_t rank, RankOp rankOp) {
  RankMemory memory;
  memory.rank = rank;
  if (!rankOp)
    return memory;
  llvm::SmallVector<Operation *> actions;
  for (Operation &op : rankOp.getBodyBlock())
    actions.push_back(&op);
  int64_t n = actions.size();
  temporaries.assign(n, 0);

  auto optionalMicrobatch = [](std::optional<uint64_t> mb) -> int64_t {
    return mb ? static_cast<int64_t>(*mb) : -1;
  };
  // A send is waited for before the rank's next post (a send, receive or
  // collective after its group: the runtime's transferWaits), so its slot
  // stays held until then.
  auto isTransfer = [](Operation *op) {
    return isa<SendOp, RecvOp, AllReduceOp, BroadcastOp>(op);
  };
  std::vector<int64_t> sendWait(n, n - 1);
  for (int64_t first = 0; first < n;) {
    if (!isa<SendOp, RecvOp>(actions[first])) {
      ++first;
      continue;
    }
    int64_t last = first;
    while (last + 1 < n && isa<SendOp, RecvOp>(actions[last + 1]))
      ++last;
    int64_t next = last + 1;
    while (next < n && !isTransfer(actions[next]))
      ++next;
    for (int64_t at = first; at <= last; ++at)
      sendWait[at] = next - 1;
    first = last + 1;
  }
  for (int64_t at = 0; at < n; ++at) {
    Operation *op = actions[at];
    if (auto runOp = dyn_cast<RunOp>(op)) {
      if (failed(run(runOp, at)))
        return failure();
    } else if (auto send = dyn_cast<SendOp>(op)) {
      SlotKey key{send.getFragment(), send.getResult(),
                  optionalMicrobatch(send.getMicrobatch())};
      use(key,
          resultBytes(send.getFragment(), send.getResult(), send.getType()),
          at);
      use(key,
          resultBytes(send.getFragment(), send.getResult(), send.getType()),
          sendWait[at]);
    } else if (auto recv = dyn_cast<RecvOp>(op)) {
      SlotKey key{recv.getFragment(), recv.getResult(),
                  optionalMicrobatch(recv.getMicrobatch())};
      produce(key,
              resultBytes(recv.getFragment(), recv.getResult(), recv.getType()),
              at);
    } else if (auto reduce = dyn_cast<AllReduceOp>(op)) {
      // Reduced in place: the contribution's slot holds the result.
      SlotKey key{reduce.getFragment(), reduce.getResult(),
                  optionalMicrobatch(reduce.getMicrobatch())};
      use(key,
          resultBytes(reduce.getFragment(), reduce.getResult(),
                      reduce.getType()),
          at);
    } else if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      SlotKey key{broadcast.getFragment(), broadcast.getResult(),
                  optionalMicrobatch(broadcast.getMicrobatch())};
      int64_t bytes = resultBytes(broadcast.getFragment(),
                                  broadcast.getResult(), broadcast.getType());
      if (static_cast<int64_t>(broadcast.getRoot()) == rank)
        use(key, bytes, at);
      else
        produce(key, bytes, at);
    }
  }

  // Persistent state: live for the whole step.
  for (auto &entry : params) {
    if (entry.second.second)
      memory.parameters += entry.second.first;
    else
      memory.optimizerState += entry.second.first;
  }
  int64_t persistent = memory.parameters + memory.optimizerState;

  // live[i]: bytes of slots and buffers held at action i.
  std::vector<int64_t> live(n + 1, 0), stashLive(n + 1, 0), inFlight(n + 1, 0);
  auto hold = [&](std::vector<int64_t> &v, int64_t from, int64_t to,
                  int64_t bytes) {
    v[from] += bytes;
    v[to + 1] -= bytes;
  };

  // The first action at which a per-microbatch slot of an accumulated
  // result exists on this rank starts its buffer.
  std::map<std::pair<llvm::StringRef, int64_t>, int64_t> accumulatorStart;
  // Per microbatch: stash bytes and the window some stash slot is live.
  std::map<int64_t, std::tuple<int64_t, int64_t, int64_t>> stashOf;

  for (auto &[key, s] : slots) {
    auto [fragmentName, index, mb] = key;
    auto acc = accumulators.find({fragmentName, index});
    bool accumulated = mb >= 0 && acc != accumulators.end();
    // The value exists from its production or reception; without either
    // (no explicit receives) it arrives at its first reader.
    int64_t start = s.produced >= 0 ? s.produced : s.firstUse;
    // Never held on its own here (e.g. only summed into a buffer).
    if (start < 0)
      continue;
    int64_t end = std::max(start, s.lastUse);
    if (s.output)
      end = n - 1;
    if (accumulated) {
      // Added to the buffer on arrival; the buffer starts then.
      auto [it, inserted] =
          accumulatorStart.try_emplace({fragmentName, index}, start);
      if (!inserted)
        it->second = std::min(it->second, start);
    }
    if (auto producer = program.lookupSymbol<FragmentOp>(fragmentName);
        producer && !fragmentName.empty() &&
        producer.getKind() == FragmentKind::StepPrologue) {
      s.cls = SlotClass::Copy;
      memory.parameterCopies += s.bytes;
    }
    hold(live, start, end, s.bytes);
    if (s.cls != SlotClass::Stash)
      continue;
    // A stashed value belongs to its microbatch's stash from the
    // microbatch's first run here; a received activation waiting for that
    // run is a value in flight.
    auto first = firstRun.find(mb);
    int64_t stashStart =
        first == firstRun.end() ? start : std::max(start, first->second);
    if (stashStart > end)
      continue;
    hold(stashLive, stashStart, end, s.bytes);
    auto [it, inserted] =
        stashOf.try_emplace(mb, std::make_tuple(s.bytes, stashStart, end));
    if (!inserted) {
      auto &[bytes, from, to] = it->second;
      bytes += s.bytes;
      from = std::min(from, stashStart);
      to = std::max(to, end);
    }
  }
  for (auto &[key, acc] : accumulators) {
    auto it = accumulatorStart.find(key);
    int64_t start = it == accumulatorStart.end()
                        ? acc.firstRead
                        : std::min(it->second, acc.firstRead);
    hold(live, start, std::max(start, acc.lastRead), acc.bytes);
    memory.gradients += acc.bytes;
  }
  for (auto &[mb, entry] : stashOf) {
    auto &[bytes, from, to] = entry;
    memory.stashPerMicrobatch = std::max(memory.stashPerMicrobatch, bytes);
    hold(inFlight, from, to, 1);
  }

  int64_t liveBytes = 0, stashBytes = 0, microbatches = 0;
  memory.peak = persistent;
  for (int64_t i = 0; i < n; ++i) {
    liveBytes += live[i];
    stashBytes += stashLive[i];
    microbatches += inFlight[i];
    memory.temporaries = std::max(memory.temporaries, temporaries[i]);
    memory.stash = std::max(memory.stash, stashBytes);
    memory.peakInFlight = std::max(memory.peakInFlight, microbatches);
    memory.peak =
        std::max(memory.peak, persistent + liveBytes + temporaries[i]);
  }
  return memory;
}

} // namespace

FailureOr<SmallVector<RankMemory>>
tandem::mpmd::analyzeMemory(ProgramOp program) {
  Block &body = program.getBodyBlock();
  llvm::DenseMap<int64_t, RankOp> lists;
  for (RankOp rankOp : body.getOps<RankOp>())
    lists.try_emplace(rankOp.getRank(), rankOp);
  if (lists.empty())
    return program.emitOpError()
           << "has no mpmd.rank action lists; the memory analysis needs a "
              "scheduled program (run mpmd-schedule first)";

  // Argument (fragment, index) -> the result (fragment, index) bound to it.
  std::map<std::pair<llvm::StringRef, int64_t>,
           std::pair<llvm::StringRef, int64_t>>
      incoming;
  for (TransferOp transfer : body.getOps<TransferOp>())
    incoming[{transfer.getDst(), static_cast<int64_t>(transfer.getArg())}] = {
        transfer.getSrc(), static_cast<int64_t>(transfer.getResult())};

  // Which ranks to report: every rank of the grid, or for a per-rank
  // program of mpmd-split-programs only the lists it holds.
  SmallVector<int64_t> ranks;
  if (program->hasAttr("mpmd.split_rank")) {
    for (RankOp rankOp : body.getOps<RankOp>())
      ranks.push_back(rankOp.getRank());
    llvm::sort(ranks);
  } else {
    for (int64_t r = 0, e = program.getNumRanks(); r < e; ++r)
      ranks.push_back(r);
  }

  llvm::DenseMap<Operation *, int64_t> temporariesCache;
  SmallVector<RankMemory> result;
  for (int64_t rank : ranks) {
    RankWalker walker(program, incoming, temporariesCache);
    FailureOr<RankMemory> memory = walker.walk(rank, lists.lookup(rank));
    if (failed(memory))
      return failure();
    result.push_back(*memory);
  }
  return result;
}
