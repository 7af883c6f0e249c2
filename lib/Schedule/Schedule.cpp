//===- Schedule.cpp - Schedule text format and validation -----------------===//

#include "tandem/Schedule/Schedule.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <tuple>

using namespace llvm;
using namespace tandem::schedule;

StringRef tandem::schedule::kindName(ActionKind kind) {
  switch (kind) {
  case ActionKind::F:
    return "F";
  case ActionKind::B:
    return "B";
  case ActionKind::BI:
    return "BI";
  case ActionKind::BW:
    return "BW";
  case ActionKind::Send:
    return "SEND";
  case ActionKind::Recv:
    return "RECV";
  }
  return "?";
}

std::string tandem::schedule::formatAction(const Action &action) {
  if (isCompute(action.kind))
    return formatv("{0}{1}.{2}", kindName(action.kind), action.stage,
                   action.microbatch)
        .str();
  return formatv("{0}_{1}{2}.{3}@{4}", kindName(action.kind),
                 kindName(action.payload), action.stage, action.microbatch,
                 action.peer)
      .str();
}

bool Schedule::hasExplicitTransfers() const {
  for (const auto &list : actions)
    for (const Action &a : list)
      if (!isCompute(a.kind))
        return true;
  return false;
}

void tandem::schedule::printSchedule(const Schedule &schedule,
                                     raw_ostream &os) {
  os << "# " << (schedule.name.empty() ? "user" : schedule.name)
     << " schedule\n";
  os << "shape ranks=" << schedule.shape.ranks
     << " chunks=" << schedule.shape.chunks
     << " microbatches=" << schedule.shape.microbatches << "\n";
  for (auto [r, list] : enumerate(schedule.actions)) {
    os << "rank " << r << ":";
    for (const Action &a : list)
      os << " " << formatAction(a);
    os << "\n";
  }
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {
struct Parser {
  StringRef bufferName;
  unsigned line = 0;

  Error error(size_t column, const Twine &message) const {
    return createStringError(
        inconvertibleErrorCode(),
        formatv("{0}:{1}:{2}: error: ", bufferName, line, column + 1).str() +
            message.str());
  }

  /// Parses a non-negative decimal number at the front of `s`.
  static std::optional<int> takeNumber(StringRef &s) {
    size_t n = 0;
    while (n < s.size() && isDigit(s[n]))
      ++n;
    if (n == 0 || n > 9)
      return std::nullopt;
    int value = 0;
    s.substr(0, n).getAsInteger(10, value);
    s = s.drop_front(n);
    return value;
  }

  Expected<Action> parseToken(StringRef tok, size_t column) const {
    Action a;
    StringRef rest = tok;
    bool transfer = false;
    if (rest.consume_front("SEND_")) {
      a.kind = ActionKind::Send;
      transfer = true;
    } else if (rest.consume_front("RECV_")) {
      a.kind = ActionKind::Recv;
      transfer = true;
    }
    ActionKind compute;
    if (rest.consume_front("BI"))
      compute = ActionKind::BI;
    else if (rest.consume_front("BW"))
      compute = ActionKind::BW;
    else if (rest.consume_front("B"))
      compute = ActionKind::B;
    else if (rest.consume_front("F"))
      compute = ActionKind::F;
    else
      return error(column,
                   "unknown action '" + tok +
                       "': expected F, B, BI, BW, SEND_<F|B> or RECV_<F|B> "
                       "followed by <stage>.<microbatch>");
    if (transfer) {
      if (compute != ActionKind::F && compute != ActionKind::B)
        return error(column, "transfer '" + tok +
                                 "' must carry F or B (the output of F, or of "
                                 "B/BI)");
      a.payload = compute;
    } else {
      a.kind = compute;
    }
    auto stage = takeNumber(rest);
    if (!stage || !rest.consume_front("."))
      return error(column, "expected <stage>.<microbatch> in '" + tok + "'");
    auto mb = takeNumber(rest);
    if (!mb)
      return error(column, "expected <stage>.<microbatch> in '" + tok + "'");
    a.stage = *stage;
    a.microbatch = *mb;
    if (transfer) {
      if (!rest.consume_front("@"))
        return error(column, "transfer '" + tok + "' needs '@<peer rank>'");
      auto peer = takeNumber(rest);
      if (!peer)
        return error(column, "expected a peer rank after '@' in '" + tok + "'");
      a.peer = *peer;
    }
    if (!rest.empty())
      return error(column + (tok.size() - rest.size()),
                   "unexpected '" + rest + "' in '" + tok + "'");
    return a;
  }
};
} // namespace

Expected<Schedule> tandem::schedule::parseSchedule(StringRef text,
                                                   StringRef bufferName) {
  Parser p{bufferName};
  Schedule s;
  s.name = "user";
  std::optional<Shape> declared;
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (StringRef raw : lines) {
    ++p.line;
    StringRef content = raw;
    content = content.split('#').first.rtrim();
    size_t indent = content.size() - content.ltrim().size();
    content = content.ltrim();
    if (content.empty())
      continue;
    if (content.consume_front("shape") &&
        (content.empty() || isSpace(content.front()))) {
      if (declared || !s.actions.empty())
        return p.error(indent, "'shape' must come once, before the ranks");
      Shape shape;
      bool seen[3] = {false, false, false};
      while (true) {
        content = content.ltrim();
        size_t col = content.data() - raw.data();
        if (content.empty())
          break;
        auto [field, tail] = content.split(' ');
        auto [key, value] = field.split('=');
        int v = 0;
        int *dst = nullptr;
        int idx = 0;
        if (key == "ranks")
          dst = &shape.ranks, idx = 0;
        else if (key == "chunks")
          dst = &shape.chunks, idx = 1;
        else if (key == "microbatches")
          dst = &shape.microbatches, idx = 2;
        else
          return p.error(col, "unknown shape field '" + key +
                                  "': expected ranks, chunks or microbatches");
        if (value.getAsInteger(10, v) || v < 1)
          return p.error(col,
                         "shape field '" + key + "' needs a positive integer");
        *dst = v;
        seen[idx] = true;
        content = tail;
      }
      if (!seen[0] || !seen[2])
        return p.error(indent, "'shape' needs ranks= and microbatches=");
      declared = shape;
      continue;
    }
    if (!content.consume_front("rank"))
      return p.error(indent, "expected 'rank <r>:', 'shape ...' or a comment");
    StringRef afterRank = content.ltrim();
    size_t col = indent + 4 + (content.size() - afterRank.size());
    auto rank = Parser::takeNumber(afterRank);
    if (!rank)
      return p.error(col, "expected a rank number after 'rank'");
    if (*rank != static_cast<int>(s.actions.size()))
      return p.error(col, formatv("expected rank {0} here, found rank {1} "
                                  "(ranks are listed in order from 0)",
                                  s.actions.size(), *rank));
    StringRef body = afterRank.ltrim();
    if (!body.consume_front(":"))
      return p.error(col, "expected ':' after the rank number");
    std::vector<Action> list;
    size_t bodyStart =
        raw.size() - raw.ltrim().size() + (raw.ltrim().size() - body.size());
    size_t pos = 0;
    while (pos < body.size()) {
      while (pos < body.size() && isSpace(body[pos]))
        ++pos;
      if (pos >= body.size())
        break;
      size_t end = pos;
      while (end < body.size() && !isSpace(body[end]))
        ++end;
      auto action = p.parseToken(body.slice(pos, end), bodyStart + pos);
      if (!action)
        return action.takeError();
      list.push_back(*action);
      pos = end;
    }
    s.actions.push_back(std::move(list));
    s.rankLines.push_back(p.line);
  }
  s.source = bufferName.str();
  if (s.actions.empty())
    return createStringError(inconvertibleErrorCode(),
                             bufferName + ": error: no 'rank <r>:' lines");
  int maxStage = 0, maxMb = 0;
  for (const auto &list : s.actions)
    for (const Action &a : list) {
      maxStage = std::max(maxStage, a.stage);
      maxMb = std::max(maxMb, a.microbatch);
    }
  if (declared) {
    if (declared->ranks != static_cast<int>(s.actions.size()))
      return createStringError(
          inconvertibleErrorCode(),
          formatv("{0}: error: shape says {1} ranks but {2} rank lines follow",
                  bufferName, declared->ranks, s.actions.size())
              .str());
    s.shape = *declared;
  } else {
    s.shape.ranks = s.actions.size();
    int stages = maxStage + 1;
    if (stages % s.shape.ranks != 0)
      return createStringError(
          inconvertibleErrorCode(),
          formatv("{0}: error: {1} stages do not divide into {2} ranks; add "
                  "a 'shape' line",
                  bufferName, stages, s.shape.ranks)
              .str());
    s.shape.chunks = std::max(1, stages / s.shape.ranks);
    s.shape.microbatches = maxMb + 1;
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Validation
//===----------------------------------------------------------------------===//

static Error fail(int rank, size_t index, const Action &a, const Twine &msg) {
  return createStringError(
      inconvertibleErrorCode(),
      formatv("rank {0}: action {1} ({2}): ", rank, index, formatAction(a))
              .str() +
          msg.str());
}

static Error failGlobal(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg.str());
}

Error tandem::schedule::validateSchedule(const Schedule &schedule,
                                         const ValidateOptions &options) {
  const Shape &shape = schedule.shape;
  if (shape.ranks < 1 || shape.chunks < 1 || shape.microbatches < 1)
    return failGlobal("schedule shape needs at least 1 rank, 1 chunk and 1 "
                      "microbatch");
  if (static_cast<int>(schedule.actions.size()) != shape.ranks)
    return failGlobal(formatv("schedule has {0} rank lists for {1} ranks",
                              schedule.actions.size(), shape.ranks));
  int S = shape.stages(), M = shape.microbatches;
  // Position of each compute action: (kind, stage, mb) -> (rank, index).
  using Key = std::tuple<int, int, int>;
  std::map<Key, std::pair<int, size_t>> where;
  auto key = [](ActionKind k, int s, int i) {
    return Key{static_cast<int>(k), s, i};
  };
  bool explicitTransfers = schedule.hasExplicitTransfers();
  for (int r = 0; r < shape.ranks; ++r) {
    for (auto [idx, a] : enumerate(schedule.actions[r])) {
      if (a.stage < 0 || a.stage >= S)
        return fail(r, idx, a,
                    formatv("stage {0} is out of range: the schedule has {1} "
                            "stages ({2} ranks x {3} chunks)",
                            a.stage, S, shape.ranks, shape.chunks));
      if (a.microbatch < 0 || a.microbatch >= M)
        return fail(r, idx, a,
                    formatv("microbatch {0} is out of range: the schedule has "
                            "{1} microbatches",
                            a.microbatch, M));
      if (!isCompute(a.kind))
        continue;
      if (shape.rankOf(a.stage) != r)
        return fail(r, idx, a,
                    formatv("stage {0} belongs to rank {1}", a.stage,
                            shape.rankOf(a.stage)));
      auto [it, inserted] =
          where.try_emplace(key(a.kind, a.stage, a.microbatch), r, idx);
      if (!inserted)
        return fail(
            r, idx, a,
            formatv("runs twice (first as action {0})", it->second.second));
    }
  }
  auto find = [&](ActionKind k, int s, int i) -> std::optional<size_t> {
    auto it = where.find(key(k, s, i));
    if (it == where.end())
      return std::nullopt;
    return it->second.second;
  };
  // Exactly once: F and a backward for every (stage, microbatch).
  for (int s = 0; s < S; ++s)
    for (int i = 0; i < M; ++i) {
      int r = shape.rankOf(s);
      bool hasB = find(ActionKind::B, s, i).has_value();
      bool hasBI = find(ActionKind::BI, s, i).has_value();
      bool hasBW = find(ActionKind::BW, s, i).has_value();
      std::string what = formatv("stage {0} microbatch {1}", s, i).str();
      if (!find(ActionKind::F, s, i))
        return failGlobal(formatv("rank {0}: F{1}.{2} is missing: {3} has no "
                                  "forward",
                                  r, s, i, what));
      if (hasB && (hasBI || hasBW))
        return failGlobal(formatv("rank {0}: {1} has both a full backward "
                                  "B{2}.{3} and a split one (BI/BW)",
                                  r, what, s, i));
      if (!hasB && !hasBI && !hasBW)
        return failGlobal(formatv("rank {0}: B{1}.{2} is missing: {3} has no "
                                  "backward",
                                  r, s, i, what));
      if (hasBI != hasBW)
        return failGlobal(formatv("rank {0}: {1}{2}.{3} is missing: {4} has "
                                  "{5} but not {1}",
                                  r, hasBI ? "BW" : "BI", s, i, what,
                                  hasBI ? "BI" : "BW"));
    }
  // Dependencies within a rank and the accumulation order.
  for (int r = 0; r < shape.ranks; ++r) {
    std::vector<int> lastAccumulated(S, -1);
    for (auto [idx, a] : enumerate(schedule.actions[r])) {
      if (!isCompute(a.kind))
        continue;
      auto need = [&](ActionKind k, int s, int i) -> Error {
        if (shape.rankOf(s) != r)
          return Error::success();
        size_t at = 0;
        if (k == ActionKind::B) {
          // The input gradient of stage s comes from B or BI.
          auto b = find(ActionKind::B, s, i);
          at = b ? *b : *find(ActionKind::BI, s, i);
          k = b ? ActionKind::B : ActionKind::BI;
        } else {
          at = *find(k, s, i);
        }
        if (at > idx)
          return fail(r, idx, a,
                      formatv("runs before {0}, which it depends on (action "
                              "{1})",
                              formatAction(Action::compute(k, s, i)), at));
        return Error::success();
      };
      int s = a.stage, i = a.microbatch;
      switch (a.kind) {
      case ActionKind::F:
        if (s > 0)
          if (Error e = need(ActionKind::F, s - 1, i))
            return e;
        break;
      case ActionKind::B:
      case ActionKind::BI:
        if (Error e = need(ActionKind::F, s, i))
          return e;
        if (s + 1 < S)
          if (Error e = need(ActionKind::B, s + 1, i))
            return e;
        break;
      case ActionKind::BW:
        if (Error e = need(ActionKind::BI, s, i))
          return e;
        break;
      default:
        break;
      }
      if (options.accumulationOrder &&
          (a.kind == ActionKind::B || a.kind == ActionKind::BW)) {
        if (i != lastAccumulated[s] + 1)
          return fail(r, idx, a,
                      formatv("accumulates stage {0}'s weight gradient out of "
                              "microbatch order: expected microbatch {1}",
                              s, lastAccumulated[s] + 1));
        lastAccumulated[s] = i;
      }
    }
  }
  if (!explicitTransfers)
    return Error::success();
  // Explicit transfers: every cross-rank edge has one SEND on the producer's
  // rank after the producer, and one RECV on the consumer's rank before the
  // consumer.
  std::map<Key, std::pair<int, size_t>> sends, recvs;
  for (int r = 0; r < shape.ranks; ++r)
    for (auto [idx, a] : enumerate(schedule.actions[r])) {
      if (isCompute(a.kind))
        continue;
      int from = shape.rankOf(a.stage);
      int toStage = a.payload == ActionKind::F ? a.stage + 1 : a.stage - 1;
      if (toStage < 0 || toStage >= S)
        return fail(r, idx, a,
                    formatv("stage {0} has no {1} neighbour to receive its "
                            "output",
                            a.stage,
                            a.payload == ActionKind::F ? "next" : "previous"));
      int to = shape.rankOf(toStage);
      if (from == to)
        return fail(r, idx, a,
                    formatv("stages {0} and {1} are both on rank {2}: no "
                            "transfer is needed",
                            a.stage, toStage, from));
      bool isSend = a.kind == ActionKind::Send;
      int self = isSend ? from : to, peer = isSend ? to : from;
      if (r != self)
        return fail(r, idx, a,
                    formatv("must run on rank {0}, which {1} this payload",
                            self, isSend ? "produces" : "consumes"));
      if (a.peer != peer)
        return fail(r, idx, a,
                    formatv("peer must be rank {0}, not {1}", peer, a.peer));
      auto &table = isSend ? sends : recvs;
      auto [it, inserted] =
          table.try_emplace(key(a.payload, a.stage, a.microbatch), r, idx);
      if (!inserted)
        return fail(r, idx, a,
                    formatv("duplicates action {0}", it->second.second));
      if (isSend) {
        auto producer =
            a.payload == ActionKind::F
                ? find(ActionKind::F, a.stage, a.microbatch)
                : (find(ActionKind::B, a.stage, a.microbatch)
                       ? find(ActionKind::B, a.stage, a.microbatch)
                       : find(ActionKind::BI, a.stage, a.microbatch));
        if (producer && *producer > idx)
          return fail(r, idx, a,
                      formatv("sends before its payload is computed (action "
                              "{0})",
                              *producer));
      }
    }
  for (auto &[k, pos] : sends)
    if (!recvs.count(k)) {
      const Action &a = schedule.actions[pos.first][pos.second];
      return fail(pos.first, pos.second, a,
                  formatv("has no matching RECV on rank {0}", a.peer));
    }
  for (auto &[k, pos] : recvs)
    if (!sends.count(k)) {
      const Action &a = schedule.actions[pos.first][pos.second];
      return fail(pos.first, pos.second, a,
                  formatv("has no matching SEND on rank {0}", a.peer));
    }
  // Each consumer of a remote input needs its RECV earlier on its rank.
  for (int r = 0; r < shape.ranks; ++r)
    for (auto [idx, a] : enumerate(schedule.actions[r])) {
      if (!isCompute(a.kind) || a.kind == ActionKind::BW)
        continue;
      int src = a.kind == ActionKind::F ? a.stage - 1 : a.stage + 1;
      if (src < 0 || src >= S || shape.rankOf(src) == r)
        continue;
      ActionKind payload =
          a.kind == ActionKind::F ? ActionKind::F : ActionKind::B;
      auto it = recvs.find(key(payload, src, a.microbatch));
      Action expected = Action::transfer(ActionKind::Recv, payload, src,
                                         a.microbatch, shape.rankOf(src));
      if (it == recvs.end())
        return fail(r, idx, a,
                    "needs " + formatAction(expected) +
                        " earlier on this rank (the schedule has explicit "
                        "transfers)");
      if (it->second.second > idx)
        return fail(r, idx, a,
                    formatv("runs before {0} (action {1}), which delivers "
                            "its input",
                            formatAction(expected), it->second.second));
    }
  return Error::success();
}
