//===- TransferOrder.cpp - one order per rank pair, for NCCL --------------===//

#include "tandem/Runtime/TransferOrder.h"

#include <map>

using namespace tandem::runtime;

namespace {

/// "the 3rd".
std::string ordinal(size_t index) {
  size_t n = index + 1;
  const char *suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1)
      suffix = "st";
    else if (n % 10 == 2)
      suffix = "nd";
    else if (n % 10 == 3)
      suffix = "rd";
  }
  return "the " + std::to_string(n) + suffix;
}

bool collective(const ActionInfo &action) {
  return action.op == ActionKind::AllReduce ||
         action.op == ActionKind::Broadcast;
}

std::string message(const ActionInfo *action) {
  if (!action)
    return "nothing";
  if (collective(*action)) {
    std::string group;
    for (int64_t member : action->group)
      group += (group.empty() ? "" : ", ") + std::to_string(member);
    return std::string(action->op == ActionKind::AllReduce ? "the all_reduce"
                                                           : "the broadcast") +
           " of " + slotText(action->slot) + " (collective " +
           std::to_string(action->sequence) + " over ranks {" + group + "})";
  }
  return slotText(action->slot) + " (channel " +
         std::to_string(action->channel) + ", message " +
         std::to_string(action->sequence) + ")";
}

/// Whether the sender's and the receiver's entries name one message: the
/// same channel and number, or the same collective (kind and number; the
/// members compare the rest when it runs).
bool same(const ActionInfo &s, const ActionInfo &r) {
  if (collective(s) || collective(r))
    return s.op == r.op && s.sequence == r.sequence && s.group == r.group;
  return s.channel == r.channel && s.sequence == r.sequence;
}

} // namespace

bool tandem::runtime::transferOrdersAgree(const std::vector<Manifest> &ranks,
                                          std::string &error) {
  // (from, to) -> the transfers in action order, as the sender and as the
  // receiver list them.
  using Pair = std::pair<int64_t, int64_t>;
  std::map<Pair, std::vector<const ActionInfo *>> sends, receives;
  for (size_t r = 0; r < ranks.size(); ++r) {
    int64_t self = static_cast<int64_t>(r);
    for (const ActionInfo &action : ranks[r].actions) {
      if (action.op == ActionKind::Send)
        sends[{self, action.peer}].push_back(&action);
      else if (action.op == ActionKind::Recv)
        receives[{action.peer, self}].push_back(&action);
      else if (collective(action))
        // Carried as point-to-point messages in the pairs' order too: an
        // all-reduce's members send to and receive from each other, a
        // broadcast's root sends to the others.
        for (int64_t member : action.group) {
          if (member == self)
            continue;
          bool broadcast = action.op == ActionKind::Broadcast;
          if (!broadcast || action.root == self)
            sends[{self, member}].push_back(&action);
          if (!broadcast || action.root == member)
            receives[{member, self}].push_back(&action);
        }
    }
  }
  std::map<Pair, bool> pairs;
  for (const auto &[pair, list] : sends)
    pairs[pair] = true;
  for (const auto &[pair, list] : receives)
    pairs[pair] = true;
  for (const auto &[pair, unused] : pairs) {
    const auto &sent = sends[pair];
    const auto &received = receives[pair];
    for (size_t k = 0; k < std::max(sent.size(), received.size()); ++k) {
      const ActionInfo *s = k < sent.size() ? sent[k] : nullptr;
      const ActionInfo *r = k < received.size() ? received[k] : nullptr;
      if (s && r && same(*s, *r))
        continue;
      std::string from = std::to_string(pair.first),
                  to = std::to_string(pair.second);
      error = "rank " + from + "'s and rank " + to +
              "'s programs order their transfers differently: " + ordinal(k) +
              " message from rank " + from + " to rank " + to + " is " +
              message(s) + " on rank " + from + " but " + message(r) +
              " on rank " + to +
              " (NCCL pairs the messages between two ranks in issue order, "
              "not by channel)";
      return false;
    }
  }
  return true;
}
