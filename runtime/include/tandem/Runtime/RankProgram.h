//===- RankProgram.h - one rank's library and action list -------*- C++ -*-===//
//
// Loads a rank's manifest and library (docs/cpu-backend.md), owns its
// parameters and runs one training step by walking its action list with the
// reference semantics of docs/pipeline-eval.md: slots keyed by (fragment,
// result, microbatch), step inputs cut into microbatches along dim 0,
// accumulation in increasing microbatch order rounding after every add,
// send/recv groups through a `Transport`, and the `update` results replacing
// parameters only once the whole step has succeeded. Every slot,
// accumulator, receive buffer and scratch lives at its offset in one arena
// that the manifest's memory plan lays out, allocated once at load on the
// rank's device (Device.h) and reused by every step (or, in the
// separate-buffers debug mode, in its own allocation while the action list
// uses it). No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_RANKPROGRAM_H
#define TANDEM_RUNTIME_RANKPROGRAM_H

#include "tandem/Runtime/Device.h"
#include "tandem/Runtime/DeviceTimeline.h"
#include "tandem/Runtime/FragmentABI.h"
#include "tandem/Runtime/Manifest.h"
#include "tandem/Runtime/StepGraphs.h"
#include "tandem/Runtime/Transport.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace tandem::runtime {

/// A 64-byte aligned, zero-initialized byte buffer in host memory. Every
/// allocation is counted in bufferBytes() (Device.h).
class Buffer {
public:
  Buffer() = default;
  explicit Buffer(uint64_t bytes);
  void *data() { return storage.get(); }
  const void *data() const { return storage.get(); }
  uint64_t size() const { return bytes; }

private:
  friend class RankProgram;
  /// `bytes` at `data`, owned elsewhere: neither counted nor freed.
  static Buffer view(void *data, uint64_t bytes);

  struct Free {
    Free() noexcept : counted(0), owned(true) {}
    Free(uint64_t counted, bool owned) noexcept
        : counted(counted), owned(owned) {}
    void operator()(void *p) const;
    /// The bytes counted for the allocation (0 for a view).
    uint64_t counted;
    bool owned;
  };
  std::unique_ptr<void, Free> storage;
  uint64_t bytes = 0;
};

/// What one step produced on a rank.
struct StepResult {
  /// New parameter values by name (results carrying `update` and not
  /// written in place): views of the rank's step buffers (device memory),
  /// valid until the
  /// rank's next runStep, which overwrites them; applyUpdates copies them
  /// into the parameters. (A copy here would hold a second copy of every
  /// updated parameter and its optimizer state for the whole run.) Results
  /// the manifest marks `in_place_of` are not here: the optimizer wrote
  /// them over their parameters during the step.
  std::map<std::string, std::shared_ptr<Buffer>> updates;
  /// Step outputs by index: copies the caller may keep.
  std::map<int64_t, std::shared_ptr<Buffer>> outputs;
  /// With RankProgramOptions::checkGradients: the first gradient sum that
  /// held a NaN or Inf when a per-step fragment read it, described (empty:
  /// none). The step still runs to its end, so that its transfers complete
  /// on every rank.
  std::string nonFinite;
};

struct RankProgramOptions {
  /// Gives every planned buffer its own allocation instead of its offset in
  /// the arena, made when the action list first uses the buffer and freed
  /// after its last use (by the manifest reader's own walk of the list, not
  /// the plan's intervals): the debug mode for measuring against the plan.
  /// Results are the same either way.
  bool separateBuffers = false;

  /// A directory: every fragment call writes its arguments (before the call)
  /// and results (after it) there as one safetensors file,
  /// rank<R>-<call>-<fragment>.safetensors with tensors arg<i> and result<j>
  /// and metadata naming the fragment, microbatch and call, so a GPU run can
  /// be compared with its emulation kernel by kernel. Empty: no dumps.
  std::string dumpFragments;

  /// Before a per-step fragment (the optimizer, a step epilogue) runs, look
  /// for NaN and Inf in every gradient sum it reads (its sum_microbatches
  /// arguments), and describe the first found in StepResult::nonFinite. On
  /// a device the host cannot address, the sums are copied to the host
  /// first.
  bool checkGradients = false;

  /// Where the rank's memory lives: its arena, parameters and staged step
  /// inputs (not owned: it must outlive the program). nullptr: the host.
  /// A library that runs on the host (target cpu, emulated cuda) needs a
  /// device whose memory the host can address. On a device other than the
  /// host every byte crosses through the device's copies (staged through
  /// host memory for a transport that moves host memory only).
  Device *device = nullptr;

  /// Waits for every send and receive at the end of its group, as the
  /// rendezvous exchange does, instead of where transferWaits puts the wait
  /// (docs/pipeline-eval.md, "Posting and waiting"): for measuring what
  /// posting buys. Same results; the memory plan holds either way.
  bool waitAtGroupEnd = false;

  /// The step's runs are captured once as CUDA graphs, one per segment
  /// between transfers (StepGraphs.h; the whole step at S = 1), in the
  /// second step, once the first has cached its GEMM plans, and the graphs
  /// are launched in every later step, so the host issues one launch per
  /// segment instead of one per kernel. Their arguments are fixed at
  /// capture: a step whose buffers moved (a step input reallocated, a
  /// parameter shared) captures again. On a CUDA device only (host code
  /// on the fake driver runs each call as a captured host function), not
  /// with collectives, runtime-added microbatch sums, the debug modes above
  /// or checkGradients, whose host work sits between the launches (load
  /// refuses them), nor over a transport of host memory (runStep refuses
  /// it).
  bool cudaGraphs = false;

  /// separateBuffers from TANDEM_SEPARATE_BUFFERS=1, dumpFragments from
  /// TANDEM_DUMP_FRAGMENTS, waitAtGroupEnd from TANDEM_WAIT_AT_GROUP_END=1.
  static RankProgramOptions fromEnvironment();
};

class RankProgram {
public:
  ~RankProgram();
  RankProgram(const RankProgram &) = delete;
  RankProgram &operator=(const RankProgram &) = delete;

  /// Reads the manifest, opens its library and resolves every fragment and
  /// scratch symbol.
  static std::unique_ptr<RankProgram> load(const std::string &manifestPath,
                                           std::string &error);
  static std::unique_ptr<RankProgram> load(const std::string &manifestPath,
                                           const RankProgramOptions &options,
                                           std::string &error);
  /// The same from a manifest already read (readManifest).
  static std::unique_ptr<RankProgram> load(Manifest manifest,
                                           const RankProgramOptions &options,
                                           std::string &error);

  const Manifest &manifest() const { return info; }
  /// Per action: for a send or receive, the action after which runStep
  /// waits for it over a transport whose posted ops do or do not move
  /// alone (Transport::postedOpsMoveAlone); -1 otherwise.
  const std::vector<int64_t> &transferWaitPoints(bool moveAlone) const {
    return moveAlone ? transferWaitAfter : groupEndWaits;
  }
  Device &memory() const { return *device; }
  /// Bytes allocated for the step's buffers: the arena, or the most bytes
  /// of separate buffers allocated at once in any step so far (0 before the
  /// first).
  uint64_t stepBufferBytes() const { return allocatedBytes; }
  bool usesSeparateBuffers() const { return separateBuffers; }

  /// Initializes every parameter from its init spec, exactly as tandem-eval
  /// does (rng::initFill keyed by the parameter name).
  bool initParameters(uint64_t seed, std::string &error);
  /// Replaces a parameter's value (`bytes` must be its size).
  bool setParameter(const std::string &name, const void *data, uint64_t bytes,
                    std::string &error);
  /// Reads parameter `name` from `data` (`bytes`, its size) from now on,
  /// without a copy: a forward-only program reading the training program's
  /// parameters. The memory must be on this program's device and outlive
  /// the runs that read it. Refused for a parameter this program updates;
  /// setParameter and initParameters give the parameter memory of its own
  /// again.
  bool shareParameter(const std::string &name, const void *data, uint64_t bytes,
                      std::string &error);
  /// Where parameter `name` lives: memory of the program's device, which
  /// the host may not be able to read (use hostParameter).
  const Buffer *parameter(const std::string &name) const;
  /// Parameter `name`'s bytes where the host can read them: its own memory
  /// on the host device, else a copy into `staging`; nullptr with `error`
  /// set for an unknown parameter or a failed copy.
  const void *hostParameter(const std::string &name,
                            std::vector<uint8_t> &staging,
                            std::string &error) const;

  /// Runs the action list once. `inputs[index]` holds full step input
  /// `index` (its step_shape). Parameters change only through in-place
  /// updates (`in_place_of`), when the optimizer fragment runs, normally
  /// the step's last action; on success `result` holds the other updates
  /// (valid until the next runStep) and outputs.
  bool runStep(const std::map<int64_t, const Buffer *> &inputs,
               Transport &transport, StepResult &result, std::string &error);
  /// Replaces parameters by a step's updates (copies: call it before the
  /// next runStep); false with `error` when a device copy fails.
  bool applyUpdates(const StepResult &result, std::string &error);

  /// From the next step on, times the rank's device work with events
  /// (DeviceTimeline.h): each run on the rank's stream and each transfer
  /// the transport issues for the rank. Nothing on the host device, whose
  /// work the host's own clock times.
  void traceDevice();
  /// The last step's device spans, in the order issued.
  const std::vector<DeviceSpan> &deviceSpans() const { return lastSpans; }

private:
  RankProgram() = default;
  using Fn = tandem_fragment_fn;
  using ScratchFn = tandem_scratch_bytes_fn;

  bool bindBuffers(const RankProgramOptions &options, std::string &error);
  /// Separate-buffers mode: allocates the buffers first used by actions
  /// [from, to] / frees those last used by them.
  bool allocateSeparate(int64_t from, int64_t to, std::string &error);
  void freeSeparate(int64_t from, int64_t to);
  void bindBuffer(size_t index, uint8_t *data);
  /// Runs the all-reduce or broadcast of actions[at] on its slot's buffer,
  /// which is then held (`held`, by plan buffer). False with `error` set,
  /// after aborting the transport.
  bool runCollective(int64_t at, Transport &transport, std::vector<char> &held,
                     std::string &error);

  Manifest info;
  /// The device the options named, or the host device the program owns.
  /// Declared before every allocation on it, so destroyed after them.
  std::unique_ptr<Device> ownedDevice;
  Device *device = nullptr;
  /// The host device: pointers into the caller's and the host's buffers
  /// are used as they are, with no copies.
  bool direct() const { return device->kind() == DeviceKind::Host; }
  void *handle = nullptr;
  /// Every field zero but the ABI version (spelled out: a partial brace
  /// list warns under -Wextra).
  static tandem_fragment_context initialContext() {
    tandem_fragment_context context{};
    context.abi_version = TANDEM_FRAGMENT_ABI_VERSION;
    return context;
  }
  /// What every entry point is called with (fragment ABI v3), from the
  /// device's resources: for host code no stream, BLAS handle, workspace
  /// or plan cache; for a GPU library the rank's own. Its status word is
  /// `statusWord`'s.
  std::unique_ptr<FragmentResources> resources;
  tandem_fragment_context context = initialContext();
  /// The status word (a tandem_fragment_status in the device's memory);
  /// the manifest's index_checks describe what it reports.
  DeviceAllocation statusWord;
  /// Reads the status word through the device's copies and, when a
  /// fragment reported (the context's `call` is the run's action index),
  /// describes it in `report` and zeroes the word. False with `report` set
  /// when the word cannot be read.
  bool readStatus(std::string &report);
  std::vector<Fn> functions;
  /// Per fragment: the scratch bytes its library function asks for.
  std::vector<uint64_t> scratchBytes;
  /// Views into `parameterBlock`, by name.
  std::map<std::string, Buffer> parameters;
  /// Every parameter and optimizer state in one allocation, each at a
  /// 64-byte aligned offset: one block instead of a heap allocation per
  /// tensor (hundreds of small biases scattered over as many pages).
  DeviceAllocation parameterBlock;
  /// The parameters are views of another program's memory
  /// (shareParameter), not of `parameterBlock`.
  bool parametersShared = false;
  bool allocateParameters(std::string &error);
  /// Checks that `name` is a parameter of `bytes` bytes.
  bool checkParameterSize(const std::string &name, uint64_t bytes,
                          std::string &error) const;

  bool separateBuffers = false, checkGradients = false;
  /// Describes in `found` the first of `f`'s sum_microbatches arguments
  /// (at `args`) holding a NaN or Inf; false with `error` when a copy to
  /// the host fails.
  bool findNonFiniteSum(const FragmentInfo &f,
                        const std::vector<const void *> &args,
                        std::string &found, std::string &error);
  /// RankProgramOptions::cudaGraphs: the segments' graphs (null without
  /// the option) and the steps run so far.
  std::unique_ptr<StepGraphs> graphs;
  uint64_t stepsRun = 0;
  /// Host code on a CUDA device with graphs: its calls, issued on
  /// `hostStream`, the rank's own stream (a GPU library's is its context's).
  std::unique_ptr<HostCalls> hostCalls;
  void *hostStream = nullptr;
  /// The addresses a step's launches take that may move between steps:
  /// the step inputs' copies and the parameters (shareParameter).
  std::vector<const void *>
  graphAddresses(const std::map<int64_t, const uint8_t *> &inputData) const;
  /// traceDevice's timeline (null when not tracing) and last spans.
  std::unique_ptr<DeviceTimeline> timeline;
  std::vector<DeviceSpan> lastSpans;
  /// RankProgramOptions::dumpFragments, and the calls made so far.
  std::string dumpDirectory;
  uint64_t dumpedCalls = 0;
  uint64_t allocatedBytes = 0;
  DeviceAllocation arena;
  /// Separate-buffers mode: per buffer of the plan, its allocation (empty
  /// while not in use); by action, the buffers first and last used there.
  std::vector<DeviceAllocation> separate;
  std::vector<std::vector<size_t>> firstUsedAt, lastUsedAt;
  uint64_t separateLive = 0;
  /// Per buffer of the plan: where it lives.
  std::vector<uint8_t *> bufferData;
  /// The copies of output results handed to the caller, by buffer index,
  /// reused from step to step.
  std::map<int64_t, std::shared_ptr<Buffer>> resultBuffers;
  std::map<std::tuple<std::string, int64_t, int64_t>, size_t> slotBuffers;
  std::map<std::pair<int64_t, int64_t>, size_t> accumulatorBuffers;
  /// Results their fragment accumulates (`accumulated_by: fragment`): the
  /// plan buffer of their sum, which every producer run writes.
  std::map<std::pair<std::string, int64_t>, size_t> fragmentSums;
  /// A sum_microbatches argument: the run at actions[`action`] reads the
  /// sum of `slot`'s microbatches, which accumulates in plan buffer
  /// `buffer` as they appear.
  struct Sum {
    int64_t action = 0;
    size_t buffer = 0;
    SlotRef slot;
    ElementType dtype = ElementType::F32;
    uint64_t bytes = 0;
    /// Per microbatch: the plan buffer of its slot, or -1.
    std::vector<int64_t> slots;
  };
  std::vector<Sum> sums;
  /// Per action: for a send or receive, the action after which the step
  /// waits for it (transferWaits, or its group's last action with
  /// waitAtGroupEnd); -1 otherwise.
  std::vector<int64_t> transferWaitAfter;
  /// The same with every op waited for at its group's last action.
  std::vector<int64_t> groupEndWaits;
  /// segmentEnds of the actions under each of the two (--cuda-graphs).
  std::vector<int64_t> segmentEndAlone, segmentEndGroup;
  /// Per action: the scratch pointer of a run.
  std::vector<void *> scratchData;
  /// The scratch of runs that need none (a valid, aligned pointer, never
  /// dereferenced).
  Buffer noScratch{0};
  /// Not the host device: the step inputs copied to the device, by index,
  /// allocated once.
  std::map<int64_t, DeviceAllocation> inputCopies;
};

/// The loss, step output 0, from `outputs` when `manifest`'s rank produces
/// it and it is a rank-0 f32 or f64 tensor; else nothing.
std::optional<double>
lossOutput(const Manifest &manifest,
           const std::map<int64_t, std::shared_ptr<Buffer>> &outputs);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_RANKPROGRAM_H
