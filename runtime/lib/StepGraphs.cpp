//===- StepGraphs.cpp - a rank's step replayed as CUDA graphs -------------===//

#include "tandem/Runtime/StepGraphs.h"

#include "tandem/Runtime/Device.h"
#include "tandem/Runtime/DeviceTimeline.h"

using namespace tandem::runtime;

std::vector<int64_t>
tandem::runtime::segmentEnds(const std::vector<ActionInfo> &actions,
                             const std::vector<int64_t> &waits) {
  const int64_t n = static_cast<int64_t>(actions.size());
  // A run after which the step waits for a transfer ends its segment: the
  // wait orders the rank's stream after an event recorded outside it.
  std::vector<char> waitAfter(actions.size(), 0);
  for (int64_t w : waits)
    if (w >= 0 && w < n)
      waitAfter[w] = 1;
  std::vector<int64_t> ends(actions.size(), -1);
  for (int64_t i = n - 1; i >= 0; --i) {
    if (actions[i].op != ActionKind::Run)
      continue;
    bool last =
        i + 1 == n || actions[i + 1].op != ActionKind::Run || waitAfter[i];
    ends[i] = last ? i : ends[i + 1];
  }
  return ends;
}

StepGraphs::~StepGraphs() {
  abandon();
  clear();
}

void StepGraphs::clear() {
  for (auto &[first, graph] : graphs)
    device.destroyGraph(graph);
  graphs.clear();
}

void StepGraphs::startStep(std::vector<const void *> addresses,
                           const std::vector<int64_t> &ends, bool capture) {
  abandon();
  // The waits, hence the segments, follow the transport a step is given.
  if (addresses != capturedWith || ends != capturedEnds) {
    clear();
    capturedWith = std::move(addresses);
    capturedEnds = ends;
  }
  captureThisStep = capture;
}

StepGraphs::Mode StepGraphs::mode(int64_t first) const {
  if (graphs.count(first))
    return Mode::Replay;
  return captureThisStep ? Mode::Capture : Mode::Call;
}

bool StepGraphs::enter(int64_t first, std::string &error) {
  if (mode(first) != Mode::Capture)
    return true;
  if (!device.beginCapture(stream, error))
    return false;
  capturing = first;
  return true;
}

bool StepGraphs::leave(int64_t first, DeviceTimeline *timeline,
                       const std::string &name, std::string &error) {
  if (capturing == first) {
    capturing = -1;
    void *graph = nullptr;
    if (!device.endCapture(stream, graph, error))
      return false;
    graphs[first] = graph;
  }
  auto found = graphs.find(first);
  if (found == graphs.end())
    return true;
  int64_t span = timeline ? timeline->begin(stream, name, "device", error) : 0;
  return span >= 0 && device.launchGraph(found->second, stream, error) &&
         (!timeline || timeline->end(span, stream, error));
}

void StepGraphs::abandon() {
  if (capturing < 0)
    return;
  capturing = -1;
  void *failed = nullptr;
  std::string ignored;
  if (device.endCapture(stream, failed, ignored))
    device.destroyGraph(failed);
}

void HostCalls::run(void *data) {
  Call &call = *static_cast<Call *>(data);
  call.status = call.fn(&call.context, call.args.data(), call.results.data(),
                        call.scratch);
}

bool HostCalls::issue(Device &device, void *stream, int64_t action,
                      tandem_fragment_fn fn,
                      const tandem_fragment_context &context,
                      std::vector<const void *> args,
                      std::vector<void *> results, void *scratch,
                      std::string &error) {
  auto call = std::make_unique<Call>();
  call->fn = fn;
  call->context = context;
  call->args = std::move(args);
  call->results = std::move(results);
  call->scratch = scratch;
  if (!device.launchHostFunction(stream, &HostCalls::run, call.get(), error))
    return false;
  // The call issued before on this action has run: the device ran the
  // step that issued it (or the graph holding it was dropped).
  calls[action] = std::move(call);
  return true;
}

int64_t HostCalls::takeFailure(int &status) {
  int64_t failed = -1;
  status = 0;
  for (auto &[action, call] : calls) {
    if (call->status != 0 && failed < 0) {
      failed = action;
      status = call->status;
    }
    call->status = 0;
  }
  return failed;
}
