//===- StepTimer.cpp - where each rank's step time goes -------------------===//

#include "StepTimer.h"

#include <cstdio>
#include <ctime>

using namespace tandem;
using namespace tandem::run;
using namespace tandem::runtime;

StepTimer::StepTimer(Transport &inner, const Manifest &manifest)
    : inner(inner) {
  // The list alternates runs and waits: groups of consecutive
  // sends/receives, and each collective on its own.
  std::string names;
  bool inGroup = false;
  for (const ActionInfo &action : manifest.actions) {
    if (action.op == ActionKind::Run) {
      if (inGroup)
        inGroup = false;
      std::string name = action.fragment;
      if (action.microbatch >= 0)
        name += " mb " + std::to_string(action.microbatch);
      names += (names.empty() ? "" : ", ") + name;
      continue;
    }
    bool collective = action.op == ActionKind::AllReduce ||
                      action.op == ActionKind::Broadcast;
    if (!inGroup || collective) {
      gapNames.push_back(names);
      names.clear();
    }
    // A send or receive after a collective starts a group of its own.
    inGroup = !collective;
  }
  gapNames.push_back(names);
}

double StepTimer::now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

void StepTimer::compute(double since, double until) {
  std::string name = gap < gapNames.size() ? gapNames[gap] : std::string();
  ++gap;
  if (name.empty() || until <= since)
    return;
  trace.push_back({name, "compute", since, until - since, step});
}

bool StepTimer::exchange(int64_t rank, std::vector<TransportOp> &group,
                         std::string &error) {
  double start = now();
  compute(lastEnd, start);
  bool ok = inner.exchange(rank, group, error);
  double end = now();
  std::string name;
  for (const TransportOp &op : group)
    name += (name.empty() ? "" : ", ") + op.description +
            (op.send ? " to " : " from ") + std::to_string(op.peer);
  trace.push_back({name, "wait", start, end - start, step});
  wait += end - start;
  lastEnd = end;
  return ok;
}

bool StepTimer::collective(int64_t rank, CollectiveOp &op, std::string &error) {
  double start = now();
  compute(lastEnd, start);
  bool ok = inner.collective(rank, op, error);
  double end = now();
  trace.push_back({op.description, "wait", start, end - start, step});
  wait += end - start;
  lastEnd = end;
  return ok;
}

void StepTimer::beginStep(uint64_t index) {
  step = index;
  gap = 0;
  wait = 0;
  stepStart = lastEnd = now();
}

void StepTimer::endStep() {
  double end = now();
  compute(lastEnd, end);
  lastStep = (end - stepStart) / 1e6;
  lastWait = wait / 1e6;
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
    out += ",\"pid\":" + std::to_string(rank) +
           ",\"tid\":0,\"args\":{\"step\":" + std::to_string(e.step) + "}}";
  }
  return out;
}
