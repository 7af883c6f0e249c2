//===- MemoryPlan.cpp - one arena per rank, reuse by liveness -------------===//
//
// Live intervals over a rank's action list and a best-fit interval
// allocator (docs/cpu-backend.md, "Memory plan").
//
//===----------------------------------------------------------------------===//

#include "tandem/Target/CPU/MemoryPlan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>

using namespace tandem::cpu;

namespace {

uint64_t roundUp(uint64_t bytes, uint64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

bool liveTogether(const BufferInterval &a, const BufferInterval &b) {
  return a.first <= b.last && b.first <= a.last;
}

llvm::Error planError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string slotText(const std::string &fragment, int64_t result,
                     int64_t microbatch) {
  std::string text = fragment + "[" + std::to_string(result) + "]";
  if (microbatch >= 0)
    text += " microbatch " + std::to_string(microbatch);
  return text;
}

} // namespace

ArenaAssignment
tandem::cpu::assignOffsets(const std::vector<BufferInterval> &buffers,
                           uint64_t alignment) {
  ArenaAssignment out;
  out.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first: the big buffers (stashed activations, gradients) settle
  // at the bottom and the small ones fill the gaps they leave, which packs
  // better than placing by start time (the classic greedy-by-size order of
  // TFLite's and XLA's planners). The tie-breaks make the order total, so
  // the plan depends only on the input.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_tuple(-static_cast<int64_t>(buffers[a].bytes),
                           buffers[a].first, a) <
           std::make_tuple(-static_cast<int64_t>(buffers[b].bytes),
                           buffers[b].first, b);
  });

  std::vector<size_t> placed;
  for (size_t index : order) {
    const BufferInterval &buffer = buffers[index];
    uint64_t size = roundUp(buffer.bytes, alignment);
    out.naiveBytes += size;
    if (size == 0)
      continue; // Shares no byte with anything: offset 0.
    // The byte ranges taken by placed buffers live at the same time.
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (size_t other : placed)
      if (liveTogether(buffer, buffers[other]))
        taken.push_back(
            {out.offsets[other],
             out.offsets[other] + roundUp(buffers[other].bytes, alignment)});
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
    uint64_t offset = best ? *best : cursor;
    out.offsets[index] = offset;
    out.arenaBytes = std::max(out.arenaBytes, offset + size);
    placed.push_back(index);
  }
  return out;
}

std::string
tandem::cpu::checkAssignment(const std::vector<BufferInterval> &buffers,
                             const ArenaAssignment &assignment,
                             uint64_t alignment) {
  if (assignment.offsets.size() != buffers.size())
    return "the assignment has " + std::to_string(assignment.offsets.size()) +
           " offsets for " + std::to_string(buffers.size()) + " buffers";
  std::vector<size_t> byOffset;
  for (size_t i = 0; i < buffers.size(); ++i) {
    uint64_t offset = assignment.offsets[i];
    if (offset % alignment != 0)
      return "buffer " + std::to_string(i) + " at offset " +
             std::to_string(offset) + " is not " + std::to_string(alignment) +
             "-byte aligned";
    if (buffers[i].bytes > assignment.arenaBytes ||
        offset > assignment.arenaBytes - buffers[i].bytes)
      return "buffer " + std::to_string(i) + " ends past the arena";
    if (buffers[i].bytes)
      byOffset.push_back(i);
  }
  // A sweep by offset: only buffers starting inside another's bytes can
  // collide with it.
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
        return "buffers " + std::to_string(std::min(a, b)) + " and " +
               std::to_string(std::max(a, b)) +
               " are live together and share bytes";
    }
  }
  return "";
}

llvm::Expected<MemoryPlan>
tandem::cpu::computeLiveness(const RankDescription &rank) {
  const int64_t end = static_cast<int64_t>(rank.actions.size());
  std::map<std::string, size_t> fragmentIndex;
  for (size_t i = 0; i < rank.fragments.size(); ++i)
    fragmentIndex[rank.fragments[i].name] = i;

  // The group of each send/recv: the maximal run of consecutive ones.
  std::vector<int64_t> groupFirst(end, 0), groupLast(end, 0);
  for (int64_t i = 0; i < end;) {
    PlanActionKind kind = rank.actions[i].kind;
    if (kind != PlanActionKind::Send && kind != PlanActionKind::Recv) {
      groupFirst[i] = groupLast[i] = i;
      ++i;
      continue;
    }
    int64_t j = i;
    while (j < end && (rank.actions[j].kind == PlanActionKind::Send ||
                       rank.actions[j].kind == PlanActionKind::Recv))
      ++j;
    for (int64_t k = i; k < j; ++k) {
      groupFirst[k] = i;
      groupLast[k] = j - 1;
    }
    i = j;
  }

  MemoryPlan plan;
  std::map<std::tuple<std::string, int64_t, int64_t>, size_t> slots;
  // Per slot buffer: the action after which its value is there (a run, or
  // the last action of a receive's group).
  std::map<size_t, int64_t> ready;
  auto define = [&](const std::string &fragment, int64_t result,
                    int64_t microbatch, uint64_t bytes, int64_t first,
                    int64_t last, int64_t readyAt) -> llvm::Error {
    auto [it, inserted] =
        slots.insert({{fragment, result, microbatch}, plan.buffers.size()});
    if (!inserted)
      return planError("action " + llvm::Twine(first) + " defines slot " +
                       slotText(fragment, result, microbatch) +
                       " a second time");
    ready[plan.buffers.size()] = readyAt;
    PlannedBuffer buffer;
    buffer.kind = BufferKind::Slot;
    buffer.fragment = fragment;
    buffer.result = result;
    buffer.microbatch = microbatch;
    buffer.bytes = bytes;
    buffer.first = first;
    buffer.last = last;
    plan.buffers.push_back(buffer);
    return llvm::Error::success();
  };
  auto use = [&](const std::string &fragment, int64_t result,
                 int64_t microbatch, int64_t action,
                 int64_t time) -> llvm::Error {
    auto it = slots.find({fragment, result, microbatch});
    if (it == slots.end())
      return planError("action " + llvm::Twine(action) + " reads slot " +
                       slotText(fragment, result, microbatch) +
                       ", which no earlier action defines");
    PlannedBuffer &buffer = plan.buffers[it->second];
    buffer.last = std::max(buffer.last, time);
    return llvm::Error::success();
  };
  auto local = [&](BufferKind kind, int64_t action, int64_t argument,
                   uint64_t bytes) {
    PlannedBuffer buffer;
    buffer.kind = kind;
    buffer.action = action;
    buffer.argument = argument;
    buffer.bytes = bytes;
    buffer.first = buffer.last = action;
    plan.buffers.push_back(buffer);
  };

  for (int64_t i = 0; i < end; ++i) {
    const PlanAction &action = rank.actions[i];
    switch (action.kind) {
    case PlanActionKind::Run: {
      auto found = fragmentIndex.find(action.fragment);
      if (found == fragmentIndex.end())
        return planError("action " + llvm::Twine(i) +
                         " runs unknown fragment '" + action.fragment + "'");
      const PlanFragment &fragment = rank.fragments[found->second];
      int64_t mb = action.microbatch;
      if (fragment.perMicrobatch != (mb >= 0))
        return planError("action " + llvm::Twine(i) + " runs '" +
                         fragment.name + "' " + (mb >= 0 ? "with" : "without") +
                         " a microbatch, but the fragment is " +
                         (fragment.perMicrobatch ? "" : "not ") +
                         "per-microbatch");
      for (size_t a = 0; a < fragment.arguments.size(); ++a) {
        const PlanArgument &arg = fragment.arguments[a];
        if (!arg.isSlot)
          continue;
        switch (arg.rule) {
        case SlotRule::SameMicrobatch:
          if (llvm::Error error = use(arg.fragment, arg.result, mb, i, i))
            return std::move(error);
          break;
        case SlotRule::StepValue:
          if (llvm::Error error = use(arg.fragment, arg.result, -1, i, i))
            return std::move(error);
          break;
        case SlotRule::SumMicrobatches: {
          // Summed as the slots appear, in microbatch order (the runtime's
          // order, so the same bits): slot k is added right after the
          // action at which both it and slot k - 1's sum are there, and
          // lives until then; the sum lives from slot 0 to the run.
          size_t sum = plan.buffers.size();
          local(BufferKind::Accumulator, i, static_cast<int64_t>(a), arg.bytes);
          int64_t fold = -1;
          for (int64_t k = 0; k < rank.microbatches; ++k) {
            auto it = slots.find({arg.fragment, arg.result, k});
            if (it == slots.end())
              return planError("action " + llvm::Twine(i) + " reads slot " +
                               slotText(arg.fragment, arg.result, k) +
                               ", which no earlier action defines");
            fold = std::max(fold, ready[it->second]);
            if (k == 0)
              plan.buffers[sum].first = fold;
            if (llvm::Error error = use(arg.fragment, arg.result, k, i, fold))
              return std::move(error);
          }
          break;
        }
        }
      }
      if (fragment.scratchBytes)
        local(BufferKind::Scratch, i, -1, fragment.scratchBytes);
      for (size_t r = 0; r < fragment.results.size(); ++r) {
        if (fragment.results[r].inPlace)
          continue; // Written over its parameter.
        if (llvm::Error error =
                define(fragment.name, static_cast<int64_t>(r), mb,
                       fragment.results[r].bytes, i,
                       fragment.results[r].livesToEnd ? end : i, i))
          return std::move(error);
      }
      break;
    }
    case PlanActionKind::Send:
      if (llvm::Error error = use(action.fragment, action.result,
                                  action.microbatch, i, groupLast[i]))
        return std::move(error);
      break;
    case PlanActionKind::Recv:
      // Written while the whole group is in flight.
      if (llvm::Error error =
              define(action.fragment, action.result, action.microbatch,
                     action.bytes, groupFirst[i], groupLast[i], groupLast[i]))
        return std::move(error);
      break;
    case PlanActionKind::Collective:
      // In place on a held slot; a broadcast's receivers define it.
      if (auto it =
              slots.find({action.fragment, action.result, action.microbatch});
          it != slots.end()) {
        if (llvm::Error error =
                use(action.fragment, action.result, action.microbatch, i, i))
          return std::move(error);
        ready[it->second] = i;
      } else if (llvm::Error error =
                     define(action.fragment, action.result, action.microbatch,
                            action.bytes, i, i, i)) {
        return std::move(error);
      }
      break;
    }
  }
  return plan;
}

llvm::Expected<MemoryPlan>
tandem::cpu::planRankMemory(const RankDescription &rank) {
  llvm::Expected<MemoryPlan> plan = computeLiveness(rank);
  if (!plan)
    return plan.takeError();
  std::vector<BufferInterval> intervals;
  for (const PlannedBuffer &buffer : plan->buffers)
    intervals.push_back({buffer.bytes, buffer.first, buffer.last});
  ArenaAssignment assignment = assignOffsets(intervals);
  // The allocator's invariant, checked rather than trusted: a broken plan
  // would corrupt memory silently at run time.
  std::string violation = checkAssignment(intervals, assignment);
  if (!violation.empty())
    return planError("internal error in the memory plan: " + violation);
  for (size_t i = 0; i < intervals.size(); ++i)
    plan->buffers[i].offset = assignment.offsets[i];
  plan->arenaBytes = assignment.arenaBytes;
  plan->naiveBytes = assignment.naiveBytes;
  return plan;
}
