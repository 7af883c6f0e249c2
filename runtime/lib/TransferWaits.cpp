//===- TransferWaits.cpp - when a rank waits for its posted transfers -----===//

#include "tandem/Runtime/TransferWaits.h"

#include <map>
#include <set>
#include <string>

using namespace tandem::runtime;

std::vector<int64_t>
tandem::runtime::transferWaits(const RankDescription &rank) {
  const int64_t end = static_cast<int64_t>(rank.actions.size());
  std::vector<int64_t> waits(end, -1);
  auto isP2P = [&](int64_t i) {
    return rank.actions[i].kind == PlanActionKind::Send ||
           rank.actions[i].kind == PlanActionKind::Recv;
  };
  std::map<std::string, const PlanFragment *> fragments;
  for (const PlanFragment &f : rank.fragments)
    fragments[f.name] = &f;
  // Results some run adds up as a runtime sum (all their microbatches).
  std::set<std::pair<std::string, int64_t>> summed;
  for (const PlanAction &action : rank.actions) {
    auto found = fragments.find(action.fragment);
    if (action.kind != PlanActionKind::Run || found == fragments.end())
      continue;
    for (const PlanArgument &arg : found->second->arguments)
      if (arg.isSlot && arg.rule == SlotRule::SumMicrobatches &&
          arg.accumulatedBy == Accumulation::Runtime)
        summed.insert({arg.fragment, arg.result});
  }
  // Whether action j reads slot (fragment, result, microbatch).
  auto reads = [&](int64_t j, const PlanAction &slot) {
    const PlanAction &action = rank.actions[j];
    if (action.kind != PlanActionKind::Run)
      return action.fragment == slot.fragment && action.result == slot.result &&
             action.microbatch == slot.microbatch;
    auto found = fragments.find(action.fragment);
    if (found == fragments.end())
      return false;
    for (const PlanArgument &arg : found->second->arguments) {
      if (!arg.isSlot || arg.fragment != slot.fragment ||
          arg.result != slot.result)
        continue;
      int64_t mb = arg.rule == SlotRule::SameMicrobatch ? action.microbatch
                   : arg.rule == SlotRule::StepValue    ? -1
                                                        : slot.microbatch;
      if (mb == slot.microbatch)
        return true;
    }
    return false;
  };

  for (int64_t first = 0; first < end;) {
    if (!isP2P(first)) {
      ++first;
      continue;
    }
    int64_t last = first;
    while (last + 1 < end && isP2P(last + 1))
      ++last;
    // The next post (a group or a collective) and the next collective.
    int64_t next = last + 1;
    while (next < end && rank.actions[next].kind == PlanActionKind::Run)
      ++next;
    int64_t collective = next;
    while (collective < end &&
           rank.actions[collective].kind != PlanActionKind::Collective)
      ++collective;
    for (int64_t i = first; i <= last; ++i) {
      const PlanAction &op = rank.actions[i];
      if (op.kind == PlanActionKind::Send) {
        waits[i] = next - 1;
        continue;
      }
      if (summed.count({op.fragment, op.result})) {
        waits[i] = last;
        continue;
      }
      // The first reader, a reader inside a group counting at its start.
      int64_t wait = collective - 1, groupStart = -1;
      for (int64_t j = last + 1; j < collective; ++j) {
        if (!isP2P(j))
          groupStart = -1;
        else if (groupStart < 0)
          groupStart = j;
        if (reads(j, op)) {
          wait = (groupStart >= 0 ? groupStart : j) - 1;
          break;
        }
      }
      waits[i] = wait;
    }
    first = last + 1;
  }
  return waits;
}
