//===- Generators.cpp - Built-in pipeline schedules -----------------------===//

#include "tandem/Schedule/Generators.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;
using namespace tandem::schedule;

StringRef tandem::schedule::scheduleKindName(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::GPipe:
    return "gpipe";
  case ScheduleKind::OneFOneB:
    return "1f1b";
  case ScheduleKind::Interleaved1F1B:
    return "interleaved-1f1b";
  case ScheduleKind::ZBH1:
    return "zb-h1";
  }
  return "?";
}

std::optional<ScheduleKind>
tandem::schedule::parseScheduleKind(StringRef name) {
  return StringSwitch<std::optional<ScheduleKind>>(name)
      .Case("gpipe", ScheduleKind::GPipe)
      .Case("1f1b", ScheduleKind::OneFOneB)
      .Case("interleaved-1f1b", ScheduleKind::Interleaved1F1B)
      .Case("zb-h1", ScheduleKind::ZBH1)
      .Default(std::nullopt);
}

static Error err(const Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg.str());
}

/// Checks what every schedule needs and starts an empty schedule.
static Expected<Schedule> start(StringRef name, const GenerateOptions &o) {
  if (o.ranks < 1)
    return err(formatv("{0}: needs at least 1 rank, got {1}", name, o.ranks));
  if (o.microbatches < 1)
    return err(formatv("{0}: needs at least 1 microbatch, got {1}", name,
                       o.microbatches));
  if (o.chunks < 1)
    return err(formatv("{0}: needs at least 1 chunk per rank, got {1}", name,
                       o.chunks));
  if (o.layers > 0 && o.layers < o.ranks * o.chunks)
    return err(formatv("{0}: {1} ranks x {2} chunks = {3} stages need at "
                       "least {3} layers, the model has {4}",
                       name, o.ranks, o.chunks, o.ranks * o.chunks, o.layers));
  Schedule s;
  s.name = name.str();
  s.shape.ranks = o.ranks;
  s.shape.chunks = o.chunks;
  s.shape.microbatches = o.microbatches;
  s.actions.resize(o.ranks);
  return s;
}

static Error needOneChunk(StringRef name, const GenerateOptions &o) {
  if (o.chunks != 1)
    return err(formatv("{0}: runs one chunk per rank, got --chunks {1}; use "
                       "interleaved-1f1b for several",
                       name, o.chunks));
  return Error::success();
}

Expected<Schedule>
tandem::schedule::generateGPipe(const GenerateOptions &options) {
  auto s = start("gpipe", options);
  if (!s)
    return s.takeError();
  int p = options.ranks, v = options.chunks, m = options.microbatches;
  for (int r = 0; r < p; ++r) {
    auto &list = s->actions[r];
    for (int c = 0; c < v; ++c)
      for (int i = 0; i < m; ++i)
        list.push_back(Action::compute(ActionKind::F, c * p + r, i));
    for (int c = v - 1; c >= 0; --c)
      for (int i = 0; i < m; ++i)
        list.push_back(Action::compute(ActionKind::B, c * p + r, i));
  }
  return s;
}

Expected<Schedule>
tandem::schedule::generate1F1B(const GenerateOptions &options) {
  if (Error e = needOneChunk("1f1b", options))
    return std::move(e);
  auto s = start("1f1b", options);
  if (!s)
    return s.takeError();
  int p = options.ranks, m = options.microbatches;
  for (int r = 0; r < p; ++r) {
    auto &list = s->actions[r];
    int warmup = std::min(p - r - 1, m);
    for (int i = 0; i < warmup; ++i)
      list.push_back(Action::compute(ActionKind::F, r, i));
    for (int i = 0; i + warmup < m; ++i) {
      list.push_back(Action::compute(ActionKind::F, r, i + warmup));
      list.push_back(Action::compute(ActionKind::B, r, i));
    }
    for (int i = std::max(0, m - warmup); i < m; ++i)
      list.push_back(Action::compute(ActionKind::B, r, i));
  }
  return s;
}

Expected<Schedule>
tandem::schedule::generateInterleaved1F1B(const GenerateOptions &options) {
  int p = options.ranks, v = options.chunks, m = options.microbatches;
  if (v < 2)
    return err(formatv("interleaved-1f1b: needs at least 2 chunks per rank, "
                       "got --chunks {0}; use 1f1b for one",
                       v));
  if (p >= 1 && m >= 1 && m % p != 0)
    return err(formatv("interleaved-1f1b: the microbatch count ({0}) must be "
                       "a multiple of the rank count ({1})",
                       m, p));
  auto s = start("interleaved-1f1b", options);
  if (!s)
    return s.takeError();
  // Virtual microbatch k runs in groups of p microbatches per chunk: forwards
  // go chunk 0..v-1, backwards chunk v-1..0.
  int total = v * m;
  auto forward = [&](int r, int k) {
    int chunk = (k % (p * v)) / p;
    int mb = (k / (p * v)) * p + k % p;
    return Action::compute(ActionKind::F, chunk * p + r, mb);
  };
  auto backward = [&](int r, int k) {
    int chunk = v - 1 - (k % (p * v)) / p;
    int mb = (k / (p * v)) * p + k % p;
    return Action::compute(ActionKind::B, chunk * p + r, mb);
  };
  for (int r = 0; r < p; ++r) {
    auto &list = s->actions[r];
    int warmup =
        m == p ? total : std::min((p - r - 1) * 2 + (v - 1) * p, total);
    for (int k = 0; k < warmup; ++k)
      list.push_back(forward(r, k));
    for (int k = 0; k + warmup < total; ++k) {
      list.push_back(forward(r, k + warmup));
      list.push_back(backward(r, k));
    }
    for (int k = total - warmup; k < total; ++k)
      list.push_back(backward(r, k));
  }
  return s;
}

Expected<Schedule>
tandem::schedule::generateZBH1(const GenerateOptions &options) {
  if (Error e = needOneChunk("zb-h1", options))
    return std::move(e);
  auto s = start("zb-h1", options);
  if (!s)
    return s.takeError();
  int p = options.ranks, m = options.microbatches;
  // Rank r runs min(p - r, m) forwards, then for each microbatch i: BI(i);
  // BW(i - r) once r weight-gradient steps are deferred; the next forward.
  // The deferred BWs run last. Rank 0 settles into BI BW F, the last rank
  // into BI F for its first p - 1 microbatches, so the BI chain that runs
  // back through the ranks never waits on a BW. With F = BI = BW and free
  // links every rank idles exactly p - 1 units: (p-1)/(3m+p-1). Rank 0
  // keeps 1F1B's p microbatches in flight; rank r keeps at most p.
  for (int r = 0; r < p; ++r) {
    auto &list = s->actions[r];
    int warmup = std::min(p - r, m);
    for (int i = 0; i < warmup; ++i)
      list.push_back(Action::compute(ActionKind::F, r, i));
    int nextW = 0;
    for (int i = 0; i < m; ++i) {
      list.push_back(Action::compute(ActionKind::BI, r, i));
      if (i >= r)
        list.push_back(Action::compute(ActionKind::BW, r, nextW++));
      if (warmup + i < m)
        list.push_back(Action::compute(ActionKind::F, r, warmup + i));
    }
    while (nextW < m)
      list.push_back(Action::compute(ActionKind::BW, r, nextW++));
  }
  return s;
}

Expected<Schedule>
tandem::schedule::generateSchedule(ScheduleKind kind,
                                   const GenerateOptions &options) {
  switch (kind) {
  case ScheduleKind::GPipe:
    return generateGPipe(options);
  case ScheduleKind::OneFOneB:
    return generate1F1B(options);
  case ScheduleKind::Interleaved1F1B:
    return generateInterleaved1F1B(options);
  case ScheduleKind::ZBH1:
    return generateZBH1(options);
  }
  return err("unknown schedule kind");
}
