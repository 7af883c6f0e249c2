//===- MemoryPlan.cpp - one arena per rank: plan and check ----------------===//
//
// Live intervals over a rank's action list, a best-fit interval allocator,
// and the check the manifest reader runs on a plan (docs/memory-plan.md).
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/MemoryPlan.h"

#include "tandem/Runtime/TransferWaits.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

using namespace tandem::runtime;

namespace {

/// `bytes` rounded up to `alignment` (a power of two), or nullopt when that
/// does not fit in 64 bits.
std::optional<uint64_t> roundUp(uint64_t bytes, uint64_t alignment) {
  uint64_t sum;
  if (__builtin_add_overflow(bytes, alignment - 1, &sum))
    return std::nullopt;
  return sum & ~(alignment - 1);
}

bool liveTogether(const BufferInterval &a, const BufferInterval &b) {
  return a.first <= b.last && b.first <= a.last;
}

std::string at(const char *list, size_t index) {
  return std::string(list) + "[" + std::to_string(index) + "]";
}

} // namespace

std::string tandem::runtime::bufferText(const PlanBufferInfo &buffer) {
  switch (buffer.kind) {
  case PlanBufferKind::Slot:
    return "slot " + slotText(buffer.slot);
  case PlanBufferKind::Accumulator:
    return "accumulator of argument " + std::to_string(buffer.argument) +
           " of actions[" + std::to_string(buffer.action) + "]";
  case PlanBufferKind::Scratch:
    return "scratch of actions[" + std::to_string(buffer.action) + "]";
  }
  return "?";
}

std::optional<ArenaAssignment>
tandem::runtime::assignOffsets(const std::vector<BufferInterval> &buffers,
                               std::string &error, uint64_t alignment) {
  ArenaAssignment out;
  out.offsets.assign(buffers.size(), 0);
  std::vector<uint64_t> sizes(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    std::optional<uint64_t> size = roundUp(buffers[i].bytes, alignment);
    if (!size ||
        __builtin_add_overflow(out.naiveBytes, *size, &out.naiveBytes)) {
      error = "buffer " + std::to_string(i) + " of " +
              std::to_string(buffers[i].bytes) +
              " bytes makes the plan exceed 2^64 bytes";
      return std::nullopt;
    }
    sizes[i] = *size;
  }
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first: the big buffers (stashed activations, gradients) settle
  // at the bottom and the small ones fill the gaps they leave, which packs
  // better than placing by start time (the classic greedy-by-size order of
  // TFLite's and XLA's planners). The tie-breaks make the order total, so
  // the plan depends only on the input.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes)
      return buffers[a].bytes > buffers[b].bytes;
    return std::make_pair(buffers[a].first, a) <
           std::make_pair(buffers[b].first, b);
  });

  std::vector<size_t> placed;
  for (size_t index : order) {
    const BufferInterval &buffer = buffers[index];
    uint64_t size = sizes[index];
    if (size == 0)
      continue; // Shares no byte with anything: offset 0.
    // The byte ranges taken by placed buffers live at the same time (their
    // ends fit: each is at most the arena so far, which fits).
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (size_t other : placed)
      if (liveTogether(buffer, buffers[other]))
        taken.push_back(
            {out.offsets[other], out.offsets[other] + sizes[other]});
    std::sort(taken.begin(), taken.end());
    std::optional<uint64_t> best;
    uint64_t bestGap = 0, cursor = 0;
    for (auto [begin, end] : taken) {
      if (begin > cursor) {
        uint64_t gap = begin - cursor;
        if (gap >= size && (!best || gap < bestGap)) {
          best = cursor;
          bestGap = gap;
        }
      }
      cursor = std::max(cursor, end);
    }
    uint64_t offset = best ? *best : cursor, top;
    if (__builtin_add_overflow(offset, size, &top)) {
      error = "the arena exceeds 2^64 bytes";
      return std::nullopt;
    }
    out.offsets[index] = offset;
    out.arenaBytes = std::max(out.arenaBytes, top);
    placed.push_back(index);
  }
  return out;
}

std::string tandem::runtime::checkAssignment(
    const std::vector<BufferInterval> &buffers,
    const ArenaAssignment &assignment, uint64_t alignment,
    const std::function<std::string(size_t)> &name) {
  auto nameOf = [&](size_t i) {
    return name ? name(i) : "buffer " + std::to_string(i);
  };
  if (assignment.offsets.size() != buffers.size())
    return "the assignment has " + std::to_string(assignment.offsets.size()) +
           " offsets for " + std::to_string(buffers.size()) + " buffers";
  std::vector<size_t> byOffset;
  for (size_t i = 0; i < buffers.size(); ++i) {
    uint64_t offset = assignment.offsets[i];
    if (offset % alignment != 0)
      return nameOf(i) + ": offset " + std::to_string(offset) + " is not " +
             std::to_string(alignment) + "-byte aligned";
    if (buffers[i].bytes > assignment.arenaBytes ||
        offset > assignment.arenaBytes - buffers[i].bytes)
      return nameOf(i) + ": bytes [" + std::to_string(offset) + ", " +
             std::to_string(offset) + " + " + std::to_string(buffers[i].bytes) +
             ") do not fit the arena of " +
             std::to_string(assignment.arenaBytes) + " bytes";
    if (buffers[i].bytes)
      byOffset.push_back(i);
  }
  // A sweep by offset: only buffers starting inside another's bytes can
  // collide with it (every end fits: each buffer is inside the arena).
  std::sort(byOffset.begin(), byOffset.end(), [&](size_t a, size_t b) {
    return assignment.offsets[a] < assignment.offsets[b];
  });
  for (size_t i = 0; i < byOffset.size(); ++i) {
    size_t a = byOffset[i];
    uint64_t end = assignment.offsets[a] + buffers[a].bytes;
    for (size_t j = i + 1;
         j < byOffset.size() && assignment.offsets[byOffset[j]] < end; ++j) {
      size_t b = byOffset[j];
      if (liveTogether(buffers[a], buffers[b]))
        return nameOf(std::min(a, b)) + " and " + nameOf(std::max(a, b)) +
               " are live together but share bytes";
    }
  }
  return "";
}

RankDescription tandem::runtime::describeRank(const Manifest &m) {
  RankDescription rank;
  rank.microbatches = m.grid.microbatches;
  rank.alignment = m.memory.alignment;
  for (const FragmentInfo &f : m.fragments) {
    PlanFragment planned;
    planned.name = f.name;
    planned.perMicrobatch = f.perMicrobatch;
    planned.scratchBytes = f.scratchBytes;
    for (const ArgumentInfo &arg : f.arguments) {
      PlanArgument a;
      a.bytes = arg.bytes;
      if (arg.kind == BindingKind::Slot) {
        a.isSlot = true;
        a.fragment = arg.slot.fragment;
        a.result = arg.slot.result;
        a.rule = arg.rule;
        a.accumulatedBy = arg.accumulatedBy;
      }
      planned.arguments.push_back(std::move(a));
    }
    for (const ResultInfo &r : f.results)
      planned.results.push_back(
          {r.bytes, r.update || r.output, r.inPlaceOf.has_value()});
    rank.fragments.push_back(std::move(planned));
  }
  for (const ActionInfo &a : m.actions) {
    PlanAction action;
    switch (a.op) {
    case ActionKind::Run:
      action.kind = PlanActionKind::Run;
      action.fragment = a.fragment;
      action.microbatch = a.microbatch;
      break;
    case ActionKind::Send:
    case ActionKind::Recv:
    case ActionKind::AllReduce:
    case ActionKind::Broadcast:
      action.kind = a.op == ActionKind::Send   ? PlanActionKind::Send
                    : a.op == ActionKind::Recv ? PlanActionKind::Recv
                                               : PlanActionKind::Collective;
      action.fragment = a.slot.fragment;
      action.result = a.slot.result;
      action.microbatch = a.slot.microbatch;
      action.bytes = a.bytes;
      break;
    }
    rank.actions.push_back(std::move(action));
  }
  return rank;
}

std::optional<MemoryPlanInfo>
tandem::runtime::computeLiveness(const RankDescription &rank,
                                 std::string &error) {
  const int64_t end = static_cast<int64_t>(rank.actions.size());
  std::map<std::string, size_t> fragmentIndex;
  for (size_t i = 0; i < rank.fragments.size(); ++i)
    fragmentIndex[rank.fragments[i].name] = i;
  auto isP2P = [&](int64_t i) {
    PlanActionKind kind = rank.actions[i].kind;
    return kind == PlanActionKind::Send || kind == PlanActionKind::Recv;
  };

  // The group of each send/recv (the maximal run of consecutive ones)
  // starts where it is posted.
  std::vector<int64_t> groupFirst(end, 0);
  const std::vector<int64_t> waits = transferWaits(rank);
  for (int64_t i = 0; i < end; ++i)
    groupFirst[i] = i > 0 && isP2P(i) && isP2P(i - 1) ? groupFirst[i - 1] : i;

  MemoryPlanInfo plan;
  plan.alignment = rank.alignment;
  std::map<std::tuple<std::string, int64_t, int64_t>, size_t> slots;
  // Per slot buffer: the action after which its value is there (a run, or
  // the last action of a receive's group).
  std::map<size_t, int64_t> ready;
  auto slotName = [](const std::string &fragment, int64_t result,
                     int64_t microbatch) {
    return slotText({fragment, result, microbatch});
  };
  auto define = [&](const std::string &fragment, int64_t result,
                    int64_t microbatch, uint64_t bytes, int64_t first,
                    int64_t last, int64_t readyAt) {
    auto [it, inserted] =
        slots.insert({{fragment, result, microbatch}, plan.buffers.size()});
    if (!inserted) {
      error = "action " + std::to_string(first) + " defines slot " +
              slotName(fragment, result, microbatch) + " a second time";
      return false;
    }
    ready[plan.buffers.size()] = readyAt;
    PlanBufferInfo buffer;
    buffer.kind = PlanBufferKind::Slot;
    buffer.slot = {fragment, result, microbatch};
    buffer.bytes = bytes;
    buffer.first = first;
    buffer.last = last;
    plan.buffers.push_back(buffer);
    return true;
  };
  auto use = [&](const std::string &fragment, int64_t result,
                 int64_t microbatch, int64_t action, int64_t time) {
    auto it = slots.find({fragment, result, microbatch});
    if (it == slots.end()) {
      error = "action " + std::to_string(action) + " reads slot " +
              slotName(fragment, result, microbatch) +
              ", which no earlier action defines";
      return false;
    }
    PlanBufferInfo &buffer = plan.buffers[it->second];
    buffer.last = std::max(buffer.last, time);
    return true;
  };
  auto local = [&](PlanBufferKind kind, int64_t action, int64_t argument,
                   uint64_t bytes) {
    PlanBufferInfo buffer;
    buffer.kind = kind;
    buffer.action = action;
    buffer.argument = argument;
    buffer.bytes = bytes;
    buffer.first = buffer.last = action;
    plan.buffers.push_back(buffer);
  };

  // Results the producing fragment accumulates itself: their sum's run
  // and argument. The sum's buffer is the result of every producer run.
  std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>>
      accumulatedInto;
  std::map<std::pair<int64_t, int64_t>, size_t> fragmentSums;
  for (int64_t i = 0; i < end; ++i) {
    const PlanAction &action = rank.actions[i];
    auto found = fragmentIndex.find(action.fragment);
    if (action.kind != PlanActionKind::Run || found == fragmentIndex.end())
      continue;
    const PlanFragment &fragment = rank.fragments[found->second];
    for (size_t a = 0; a < fragment.arguments.size(); ++a) {
      const PlanArgument &arg = fragment.arguments[a];
      if (!arg.isSlot || arg.rule != SlotRule::SumMicrobatches ||
          arg.accumulatedBy != Accumulation::Fragment)
        continue;
      if (!accumulatedInto
               .insert(
                   {{arg.fragment, arg.result}, {i, static_cast<int64_t>(a)}})
               .second) {
        error = "action " + std::to_string(i) + " sums " + arg.fragment + "[" +
                std::to_string(arg.result) +
                "], which another sum accumulates already";
        return std::nullopt;
      }
    }
  }

  for (int64_t i = 0; i < end; ++i) {
    const PlanAction &action = rank.actions[i];
    switch (action.kind) {
    case PlanActionKind::Run: {
      auto found = fragmentIndex.find(action.fragment);
      if (found == fragmentIndex.end()) {
        error = "action " + std::to_string(i) + " runs unknown fragment '" +
                action.fragment + "'";
        return std::nullopt;
      }
      const PlanFragment &fragment = rank.fragments[found->second];
      int64_t mb = action.microbatch;
      if (fragment.perMicrobatch != (mb >= 0)) {
        error = "action " + std::to_string(i) + " runs '" + fragment.name +
                "' " + (mb >= 0 ? "with" : "without") +
                " a microbatch, but the fragment is " +
                (fragment.perMicrobatch ? "" : "not ") + "per-microbatch";
        return std::nullopt;
      }
      for (size_t a = 0; a < fragment.arguments.size(); ++a) {
        const PlanArgument &arg = fragment.arguments[a];
        if (!arg.isSlot)
          continue;
        switch (arg.rule) {
        case SlotRule::SameMicrobatch:
          if (!use(arg.fragment, arg.result, mb, i, i))
            return std::nullopt;
          break;
        case SlotRule::StepValue:
          if (!use(arg.fragment, arg.result, -1, i, i))
            return std::nullopt;
          break;
        case SlotRule::SumMicrobatches: {
          if (arg.accumulatedBy == Accumulation::Fragment) {
            // The producer's runs wrote the sum; it lives until this run.
            auto sum = fragmentSums.find({i, static_cast<int64_t>(a)});
            if (sum == fragmentSums.end()) {
              error = "action " + std::to_string(i) + " reads the sum of " +
                      arg.fragment + "[" + std::to_string(arg.result) +
                      "], which no earlier action accumulates";
              return std::nullopt;
            }
            plan.buffers[sum->second].last = i;
            break;
          }
          // Summed as the slots appear, in microbatch order (the runtime's
          // order, so the same bits): slot k is added right after the
          // action at which both it and slot k - 1's sum are there, and
          // lives until then; the sum lives from slot 0 to the run.
          size_t sum = plan.buffers.size();
          local(PlanBufferKind::Accumulator, i, static_cast<int64_t>(a),
                arg.bytes);
          int64_t fold = -1;
          for (int64_t k = 0; k < rank.microbatches; ++k) {
            auto it = slots.find({arg.fragment, arg.result, k});
            if (it == slots.end()) {
              error = "action " + std::to_string(i) + " reads slot " +
                      slotName(arg.fragment, arg.result, k) +
                      ", which no earlier action defines";
              return std::nullopt;
            }
            fold = std::max(fold, ready[it->second]);
            if (k == 0)
              plan.buffers[sum].first = fold;
            if (!use(arg.fragment, arg.result, k, i, fold))
              return std::nullopt;
          }
          break;
        }
        }
      }
      if (fragment.scratchBytes)
        local(PlanBufferKind::Scratch, i, -1, fragment.scratchBytes);
      for (size_t r = 0; r < fragment.results.size(); ++r) {
        if (fragment.results[r].inPlace)
          continue; // Written over its parameter.
        auto into =
            accumulatedInto.find({fragment.name, static_cast<int64_t>(r)});
        if (into != accumulatedInto.end()) {
          // Written into its sum, which lives from the first such run.
          auto [sum, first] =
              fragmentSums.insert({into->second, plan.buffers.size()});
          if (first)
            local(PlanBufferKind::Accumulator, i, into->second.second,
                  fragment.results[r].bytes);
          PlanBufferInfo &buffer = plan.buffers[sum->second];
          buffer.action = into->second.first;
          buffer.last = std::max(buffer.last, i);
          continue;
        }
        if (!define(fragment.name, static_cast<int64_t>(r), mb,
                    fragment.results[r].bytes, i,
                    fragment.results[r].livesToEnd ? end : i, i))
          return std::nullopt;
      }
      break;
    }
    case PlanActionKind::Send:
      // Read until the rank waits for the send (transferWaits).
      if (!use(action.fragment, action.result, action.microbatch, i, waits[i]))
        return std::nullopt;
      break;
    case PlanActionKind::Recv:
      // Written from the group's post until the rank waits for it.
      if (!define(action.fragment, action.result, action.microbatch,
                  action.bytes, groupFirst[i], waits[i], waits[i]))
        return std::nullopt;
      break;
    case PlanActionKind::Collective:
      // In place on a held slot; a broadcast's receivers define it.
      if (auto it =
              slots.find({action.fragment, action.result, action.microbatch});
          it != slots.end()) {
        if (!use(action.fragment, action.result, action.microbatch, i, i))
          return std::nullopt;
        ready[it->second] = i;
      } else if (!define(action.fragment, action.result, action.microbatch,
                         action.bytes, i, i, i)) {
        return std::nullopt;
      }
      break;
    }
  }
  return plan;
}

std::optional<MemoryPlanInfo>
tandem::runtime::planRankMemory(const RankDescription &rank,
                                std::string &error) {
  std::optional<MemoryPlanInfo> plan = computeLiveness(rank, error);
  if (!plan)
    return std::nullopt;
  std::vector<BufferInterval> intervals;
  for (const PlanBufferInfo &buffer : plan->buffers)
    intervals.push_back({buffer.bytes, buffer.first, buffer.last});
  std::optional<ArenaAssignment> assignment =
      assignOffsets(intervals, error, plan->alignment);
  if (!assignment)
    return std::nullopt;
  // The allocator's invariant, checked rather than trusted: a broken plan
  // would corrupt memory silently at run time.
  std::string violation =
      checkAssignment(intervals, *assignment, plan->alignment);
  if (!violation.empty()) {
    error = "internal error in the memory plan: " + violation;
    return std::nullopt;
  }
  for (size_t i = 0; i < intervals.size(); ++i)
    plan->buffers[i].offset = assignment->offsets[i];
  plan->arenaBytes = assignment->arenaBytes;
  plan->naiveBytes = assignment->naiveBytes;
  return plan;
}

namespace {

struct PlanViolation {
  std::string message;
};

} // namespace

std::string tandem::runtime::checkMemoryPlan(Manifest &m) {
  MemoryPlanInfo &plan = m.memory;
  const int64_t end = static_cast<int64_t>(m.actions.size());
  auto fail = [](const std::string &where, const std::string &message) {
    throw PlanViolation{"memory" + (where.empty() ? "" : ": " + where) + ": " +
                        message};
  };
  try {
    std::map<std::tuple<std::string, int64_t, int64_t>, size_t> slots;
    std::map<std::pair<int64_t, int64_t>, size_t> accumulators;
    std::map<int64_t, size_t> scratches;
    std::vector<BufferInterval> intervals;
    ArenaAssignment assignment;
    assignment.arenaBytes = plan.arenaBytes;
    for (size_t i = 0; i < plan.buffers.size(); ++i) {
      const PlanBufferInfo &b = plan.buffers[i];
      std::string where = at("buffers", i);
      bool inserted = true;
      switch (b.kind) {
      case PlanBufferKind::Slot:
        inserted =
            slots
                .insert(
                    {{b.slot.fragment, b.slot.result, b.slot.microbatch}, i})
                .second;
        break;
      case PlanBufferKind::Accumulator:
      case PlanBufferKind::Scratch:
        if (b.action < 0 || b.action >= end ||
            m.actions[b.action].op != ActionKind::Run)
          fail(where, "field 'action' names no run");
        inserted =
            b.kind == PlanBufferKind::Scratch
                ? scratches.insert({b.action, i}).second
                : accumulators.insert({{b.action, b.argument}, i}).second;
        break;
      }
      if (!inserted)
        fail(where, "a second buffer for the " + bufferText(b));
      if (b.first < 0 || b.first > b.last || b.last > end)
        fail(where, "live interval [" + std::to_string(b.first) + ", " +
                        std::to_string(b.last) +
                        "] is not inside the action list [0, " +
                        std::to_string(end) + "]");
      intervals.push_back({b.bytes, b.first, b.last});
      assignment.offsets.push_back(b.offset);
    }
    // Placement: aligned, inside the arena, no shared bytes while live.
    std::string placement =
        checkAssignment(intervals, assignment, plan.alignment, [&](size_t i) {
          return at("buffers", i) + " (" + bufferText(plan.buffers[i]) + ")";
        });
    if (!placement.empty())
      fail("", placement);

    // Every buffer the list touches is planned with the right size and is
    // live whenever it is touched: this walk is the reader's own, not the
    // planner's computeLiveness, so the two check each other. Sends read
    // from their action, and receives write from their group's post (the
    // consecutive sends and receives posted together), until the rank
    // waits for them (transferWaits); update/output results are read
    // at the end of the step; summed slots are read as they appear.
    // Sends are read, and receives written, until the rank waits for them.
    const std::vector<int64_t> waits = transferWaits(describeRank(m));
    std::vector<char> touched(plan.buffers.size(), 0);
    auto touch = [&](size_t index, uint64_t bytes, bool atLeast, int64_t from,
                     int64_t to, size_t action) {
      PlanBufferInfo &buffer = plan.buffers[index];
      buffer.usedFirst =
          touched[index] ? std::min(buffer.usedFirst, from) : from;
      buffer.usedLast = touched[index] ? std::max(buffer.usedLast, to) : to;
      std::string where = at("buffers", index);
      if (atLeast ? buffer.bytes < bytes : buffer.bytes != bytes)
        fail(where, "the " + bufferText(buffer) + " has " +
                        std::to_string(buffer.bytes) + " bytes, " +
                        at("actions", action) + " needs " +
                        std::to_string(bytes));
      if (from < buffer.first || to > buffer.last)
        fail(where, "the " + bufferText(buffer) + " is live over actions [" +
                        std::to_string(buffer.first) + ", " +
                        std::to_string(buffer.last) + "], but " +
                        at("actions", action) + " uses it over [" +
                        std::to_string(from) + ", " + std::to_string(to) + "]");
      touched[index] = 1;
    };
    auto missing = [&](const std::string &what, size_t action) {
      fail("",
           "no buffer for the " + what + " (" + at("actions", action) + ")");
    };
    // Per slot buffer: the action after which its value is there (its run,
    // or the last action of its receive's group).
    std::map<int64_t, int64_t> ready;
    auto slotIndex = [&](const SlotRef &slot) -> int64_t {
      auto it = slots.find({slot.fragment, slot.result, slot.microbatch});
      return it == slots.end() ? -1 : static_cast<int64_t>(it->second);
    };
    auto isP2P = [&](int64_t i) {
      return m.actions[i].op == ActionKind::Send ||
             m.actions[i].op == ActionKind::Recv;
    };
    // Results their fragment accumulates into a sum: the sum's run and
    // argument (its buffer is every producer run's result).
    std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>>
        accumulatedInto;
    for (int64_t i = 0; i < end; ++i) {
      if (m.actions[i].op != ActionKind::Run)
        continue;
      const FragmentInfo &f =
          m.fragments[m.findFragment(m.actions[i].fragment)];
      for (size_t a = 0; a < f.arguments.size(); ++a) {
        const ArgumentInfo &arg = f.arguments[a];
        if (arg.kind != BindingKind::Slot ||
            arg.rule != SlotRule::SumMicrobatches ||
            arg.accumulatedBy != Accumulation::Fragment)
          continue;
        int64_t producer = m.findFragment(arg.slot.fragment);
        if (producer < 0 || !m.fragments[producer].perMicrobatch ||
            arg.slot.result < 0 ||
            arg.slot.result >=
                static_cast<int64_t>(m.fragments[producer].results.size()))
          fail(at("actions", i),
               "argument " + std::to_string(a) + " of " + f.name +
                   " is accumulated by a fragment, but " + arg.slot.fragment +
                   "[" + std::to_string(arg.slot.result) +
                   "] is no result of a per-microbatch fragment");
        if (!accumulatedInto
                 .insert({{arg.slot.fragment, arg.slot.result},
                          {i, static_cast<int64_t>(a)}})
                 .second)
          fail(at("actions", i), arg.slot.fragment + "[" +
                                     std::to_string(arg.slot.result) +
                                     "] is accumulated into a second sum");
      }
    }
    for (int64_t i = 0; i < end;) {
      const ActionInfo &action = m.actions[i];
      if (action.op == ActionKind::AllReduce ||
          action.op == ActionKind::Broadcast) {
        // In place on the slot (a broadcast's receivers get it here).
        int64_t index = slotIndex(action.slot);
        if (index < 0)
          missing("slot " + slotText(action.slot), i);
        touch(index, action.bytes, false, i, i, i);
        ready[index] = i;
        ++i;
        continue;
      }
      if (action.op == ActionKind::Run) {
        const FragmentInfo &f = m.fragments[m.findFragment(action.fragment)];
        for (size_t a = 0; a < f.arguments.size(); ++a) {
          const ArgumentInfo &arg = f.arguments[a];
          if (arg.kind != BindingKind::Slot)
            continue;
          // A slot nobody defines is reported by the step ("not held").
          if (arg.rule != SlotRule::SumMicrobatches) {
            SlotRef slot = arg.slot;
            slot.microbatch =
                arg.rule == SlotRule::SameMicrobatch ? action.microbatch : -1;
            int64_t index = slotIndex(slot);
            if (index >= 0)
              touch(index, arg.bytes, false, i, i, i);
            continue;
          }
          // Summed as the slots appear, in microbatch order: slot k is
          // added right after the action at which both it and the sum of
          // slots 0..k-1 are there (RankProgram::runStep), so it lives
          // until then and the sum from slot 0's action to the run.
          auto it = accumulators.find({i, static_cast<int64_t>(a)});
          if (it == accumulators.end())
            missing("sum of argument " + std::to_string(a) + " of " + f.name,
                    i);
          if (arg.accumulatedBy == Accumulation::Fragment) {
            // Written by the producer's runs (touched there).
            touch(it->second, arg.bytes, false, i, i, i);
            continue;
          }
          int64_t fold = -1, sumFirst = i;
          for (int64_t k = 0; k < m.grid.microbatches; ++k) {
            SlotRef slot = arg.slot;
            slot.microbatch = k;
            int64_t index = slotIndex(slot);
            if (index < 0)
              continue;
            auto found = ready.find(index);
            fold = std::max(fold, found == ready.end() ? i : found->second);
            if (k == 0)
              sumFirst = fold;
            touch(index, arg.bytes, false, fold, fold, i);
          }
          touch(it->second, arg.bytes, false, sumFirst, i, i);
        }
        if (f.scratchBytes) {
          auto it = scratches.find(i);
          if (it == scratches.end())
            missing("scratch of " + f.name, i);
          touch(it->second, f.scratchBytes, true, i, i, i);
        } else if (scratches.count(i)) {
          // More scratch than needed is harmless.
          PlanBufferInfo &extra = plan.buffers[scratches[i]];
          extra.usedFirst = extra.usedLast = i;
          touched[scratches[i]] = 1;
        }
        for (size_t k = 0; k < f.results.size(); ++k) {
          if (f.results[k].inPlaceOf)
            continue; // Written over its parameter: no slot buffer.
          auto into = accumulatedInto.find({f.name, static_cast<int64_t>(k)});
          if (into != accumulatedInto.end()) {
            auto it = accumulators.find(into->second);
            if (it == accumulators.end())
              missing("sum " + f.name + "[" + std::to_string(k) +
                          "] accumulates into",
                      i);
            touch(it->second, f.results[k].bytes, false, i, i, i);
            continue;
          }
          SlotRef slot{f.name, static_cast<int64_t>(k), action.microbatch};
          int64_t index = slotIndex(slot);
          if (index < 0)
            missing("result slot " + slotText(slot), i);
          const ResultInfo &res = f.results[k];
          touch(index, res.bytes, false, i, res.update || res.output ? end : i,
                i);
          ready[index] = i;
        }
        ++i;
        continue;
      }
      int64_t last = i;
      while (last + 1 < end && isP2P(last + 1))
        ++last;
      for (int64_t k = i; k <= last; ++k) {
        const ActionInfo &a = m.actions[k];
        int64_t index = slotIndex(a.slot);
        if (a.op == ActionKind::Recv) {
          if (index < 0)
            missing("received slot " + slotText(a.slot), k);
          touch(index, a.bytes, false, i, waits[k], k);
          ready[index] = waits[k];
        } else if (index >= 0) {
          touch(index, a.bytes, false, k, waits[k], k);
        }
      }
      i = last + 1;
    }
    for (size_t i = 0; i < plan.buffers.size(); ++i)
      if (!touched[i])
        fail(at("buffers", i),
             "the " + bufferText(plan.buffers[i]) + " is used by no action");
  } catch (const PlanViolation &violation) {
    return violation.message;
  }
  return "";
}
