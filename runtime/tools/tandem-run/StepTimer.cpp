//===- StepTimer.cpp - where each rank's step time goes -------------------===//

#include "StepTimer.h"

#include <algorithm>
#include <cstdio>

using namespace tandem;
using namespace tandem::run;
using namespace tandem::runtime;

StepTimer::StepTimer(Transport &inner, const Manifest &manifest,
                     const std::vector<int64_t> &waits)
    : inner(inner) {
  // The calls RankProgram::runStep makes: a post at each group's first
  // action, a collective at its own, and a wait after each action at which
  // posted ops are due.
  std::vector<char> waitAfter(manifest.actions.size(), 0);
  for (int64_t at : waits)
    if (at >= 0)
      waitAfter[at] = 1;
  std::string names;
  auto call = [&] {
    gapNames.push_back(names);
    names.clear();
  };
  bool inGroup = false;
  for (size_t i = 0; i < manifest.actions.size(); ++i) {
    const ActionInfo &action = manifest.actions[i];
    bool p2p = action.op == ActionKind::Send || action.op == ActionKind::Recv;
    if (action.op == ActionKind::Run) {
      std::string name = action.fragment;
      if (action.microbatch >= 0)
        name += " mb " + std::to_string(action.microbatch);
      names += (names.empty() ? "" : ", ") + name;
    } else if (!p2p || !inGroup) {
      call();
    }
    inGroup = p2p;
    if (waitAfter[i])
      call();
  }
  gapNames.push_back(names);
}

double StepTimer::now() { return runtime::monotonicMicroseconds(); }

void StepTimer::compute(double since, double until) {
  std::string name = gap < gapNames.size() ? gapNames[gap] : std::string();
  ++gap;
  if (name.empty() || until <= since)
    return;
  trace.push_back({name, "compute", since, until - since, step});
}

bool StepTimer::post(int64_t rank, std::vector<TransportOp> &group,
                     std::string &error) {
  double start = now();
  compute(lastEnd, start);
  bool ok = inner.post(rank, group, error);
  double end = now();
  InFlight posted;
  for (const TransportOp &op : group) {
    posted.span.name += (posted.span.name.empty() ? "" : ", ") +
                        op.description + (op.send ? " to " : " from ") +
                        std::to_string(op.peer);
    posted.ops.push_back(&op);
  }
  posted.span.category = "transfer";
  posted.span.start = start;
  posted.span.step = step;
  inFlight.push_back(std::move(posted));
  lastEnd = end;
  return ok;
}

bool StepTimer::wait(int64_t rank, const std::vector<TransportOp *> &ops,
                     std::string &error) {
  double start = now();
  compute(lastEnd, start);
  bool ok = inner.wait(rank, ops, error);
  double end = now();
  std::string name;
  for (const TransportOp *op : ops)
    name += (name.empty() ? "" : ", ") + op->description +
            (op->send ? " to " : " from ") + std::to_string(op->peer);
  trace.push_back({name, "wait", start, end - start, step});
  waited += end - start;
  lastEnd = end;
  endTransfers(end);
  return ok;
}

void StepTimer::endTransfers(double at) {
  for (auto it = inFlight.begin(); it != inFlight.end();) {
    bool done =
        std::all_of(it->ops.begin(), it->ops.end(),
                    [](const TransportOp *op) { return op->completed; });
    if (!done) {
      ++it;
      continue;
    }
    it->span.duration = at - it->span.start;
    trace.push_back(std::move(it->span));
    it = inFlight.erase(it);
  }
}

bool StepTimer::collective(int64_t rank, CollectiveOp &op, std::string &error) {
  double start = now();
  compute(lastEnd, start);
  bool ok = inner.collective(rank, op, error);
  double end = now();
  trace.push_back({op.description, "wait", start, end - start, step});
  waited += end - start;
  lastEnd = end;
  endTransfers(end);
  return ok;
}

void StepTimer::beginStep(uint64_t index) {
  step = index;
  inFlight.clear();
  gap = 0;
  waited = 0;
  stepStart = lastEnd = now();
}

void StepTimer::endStep() {
  double end = now();
  compute(lastEnd, end);
  lastStep = (end - stepStart) / 1e6;
  lastWait = waited / 1e6;
}

static std::string quoted(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

void StepTimer::addDeviceSpans(const std::vector<runtime::DeviceSpan> &spans) {
  for (const runtime::DeviceSpan &span : spans)
    trace.push_back({span.name, span.category, span.start, span.duration, step,
                     span.uncertainty});
}

namespace {

/// The categories of the tracks, in track order.
const char *const kTrackCategories[StepTimer::kTracks] = {
    "compute", "transfer", "device", "device transfer"};
const char *const kTrackNames[StepTimer::kTracks] = {
    "host", "host: transfers posted", "device", "device: transfers"};

int64_t trackOf(const std::string &category) {
  for (int64_t track = 1; track < StepTimer::kTracks; ++track)
    if (category == kTrackCategories[track])
      return track;
  return 0; // compute and wait
}

} // namespace

const char *StepTimer::trackName(int64_t track) {
  return track >= 0 && track < kTracks ? kTrackNames[track] : "";
}

std::string StepTimer::eventsJson(int64_t rank) const {
  std::string out;
  char number[64];
  for (const TraceEvent &e : trace) {
    if (!out.empty())
      out += ",\n";
    out += "{\"name\":" + quoted(e.name) + ",\"cat\":" + quoted(e.category) +
           ",\"ph\":\"X\"";
    std::snprintf(number, sizeof number, ",\"ts\":%.3f,\"dur\":%.3f", e.start,
                  e.duration);
    out += number;
    // Transfers overlap the rank's compute, and the device's work the
    // host's: tracks of their own.
    out += ",\"pid\":" + std::to_string(rank) +
           ",\"tid\":" + std::to_string(trackOf(e.category)) +
           ",\"args\":{\"step\":" + std::to_string(e.step);
    // A device span's placement on the host clock: at most this late.
    if (e.uncertainty >= 0) {
      std::snprintf(number, sizeof number, ",\"uncertainty_us\":%.3f",
                    e.uncertainty);
      out += number;
    }
    out += "}}";
  }
  return out;
}
