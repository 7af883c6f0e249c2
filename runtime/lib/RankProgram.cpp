//===- RankProgram.cpp - one rank's library and action list ---------------===//

#include "tandem/Runtime/RankProgram.h"

#include "tandem/Runtime/CpuFeatures.h"
#include "tandem/Runtime/CudaLibraries.h"
#include "tandem/Runtime/Finite.h"
#include "tandem/Runtime/ParameterFiles.h"
#include "tandem/Runtime/Safetensors.h"
#include "tandem/Runtime/TransferWaits.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <list>
#include <new>
#include <optional>
#include <tuple>

using namespace tandem::runtime;

void Buffer::Free::operator()(void *p) const {
  if (!owned)
    return;
  std::free(p);
  countHostRelease(counted);
}

/// What a fragment's non-zero status means (FragmentABI.h).
static const char *fragmentStatusName(int status) {
  switch (status) {
  case 1:
    return "an index out of range";
  case 2:
    return "a kernel launch failed";
  case 3:
    return "a GEMM the BLAS library could not run";
  default:
    return "an unknown failure";
  }
}

/// "run s0.fwd microbatch 1": how messages name a run action.
static std::string runName(const ActionInfo &action) {
  return "run " + action.fragment +
         (action.microbatch >= 0
              ? " microbatch " + std::to_string(action.microbatch)
              : std::string());
}

/// `bytes` rounded up to whole cache lines (64 bytes), the alignment of
/// every buffer.
static uint64_t alignedSize(uint64_t bytes) { return (bytes + 63) / 64 * 64; }

Buffer::Buffer(uint64_t size) : bytes(size) {
  uint64_t rounded = alignedSize(size);
  if (rounded == 0)
    rounded = 64;
  void *p = std::aligned_alloc(64, rounded);
  if (!p)
    throw std::bad_alloc();
  storage = std::unique_ptr<void, Free>(p, Free{rounded, true});
  countHostAllocation(rounded);
  std::memset(p, 0, rounded);
}

Buffer Buffer::view(void *data, uint64_t bytes) {
  Buffer buffer;
  buffer.storage = std::unique_ptr<void, Free>(data, Free{0, false});
  buffer.bytes = bytes;
  return buffer;
}

RankProgram::~RankProgram() {
  // The graphs launch the library's kernels and calls: gone before them.
  // The host stream goes before the calls it may still hold (a failed
  // step's): destroying it runs them.
  graphs.reset();
  if (hostStream)
    device->destroyStream(hostStream);
  hostCalls.reset();
  if (handle)
    dlclose(handle);
}

RankProgramOptions RankProgramOptions::fromEnvironment() {
  RankProgramOptions options;
  const char *value = std::getenv("TANDEM_SEPARATE_BUFFERS");
  options.separateBuffers = value && std::string(value) == "1";
  const char *groupEnd = std::getenv("TANDEM_WAIT_AT_GROUP_END");
  options.waitAtGroupEnd = groupEnd && std::string(groupEnd) == "1";
  if (const char *dump = std::getenv("TANDEM_DUMP_FRAGMENTS"))
    options.dumpFragments = dump;
  return options;
}

std::unique_ptr<RankProgram> RankProgram::load(const std::string &path,
                                               std::string &error) {
  return load(path, RankProgramOptions::fromEnvironment(), error);
}

std::unique_ptr<RankProgram>
RankProgram::load(const std::string &path, const RankProgramOptions &options,
                  std::string &error) {
  std::optional<Manifest> manifest = readManifest(path, error);
  if (!manifest)
    return nullptr;
  return load(std::move(*manifest), options, error);
}

std::unique_ptr<RankProgram>
RankProgram::load(Manifest manifest, const RankProgramOptions &options,
                  std::string &error) {
  std::unique_ptr<RankProgram> program(new RankProgram());
  program->info = std::move(manifest);
  const Manifest &m = program->info;
  program->device = options.device;
  if (!program->device) {
    program->ownedDevice = makeHostDevice();
    program->device = program->ownedDevice.get();
  }

  for (const FragmentInfo &f : m.fragments)
    for (const ResultInfo &r : f.results)
      if (r.update && m.findParameter(*r.update) < 0) {
        error = m.path + ": fragment '" + f.name + "' updates unknown " +
                "parameter '" + *r.update + "'";
        return nullptr;
      }
  // What this runtime cannot run is refused before anything is loaded. A
  // cuda rank runs here when its library is the host emulation of its
  // kernels (--cuda-emulate), which the library says once loaded.
  if (m.target.kind != TargetKind::Cpu && m.target.kind != TargetKind::Cuda) {
    error = m.path + ": the rank was compiled for target '" +
            targetKindName(m.target.kind) +
            "', and this runtime runs CPU ranks only";
    return nullptr;
  }
  std::string wanted;
  for (const std::string &feature : m.target.features)
    wanted += feature + " ";
  std::vector<std::string> lacking = missingCpuFeatures(wanted);
  if (!lacking.empty()) {
    std::string names;
    for (const std::string &name : lacking)
      names += (names.empty() ? "" : ", ") + name;
    error = m.path + ": the rank was compiled for -march=" + m.target.arch +
            ", which needs CPU features this machine lacks: " + names +
            " (compile on this machine, or with --cpu-arch set to a CPU "
            "every machine has, e.g. x86-64-v3)";
    return nullptr;
  }
  for (size_t i = 0; i < m.actions.size(); ++i)
    if (m.actions[i].op == ActionKind::AllReduce &&
        m.actions[i].reduction != "sum" && m.actions[i].reduction != "max") {
      error = m.path + ": actions[" + std::to_string(i) + "]: all_reduce " +
              m.actions[i].reduction +
              " is not supported by the runtime (sum, max)";
      return nullptr;
    }
  for (const ActionInfo &a : m.actions)
    if (a.op != ActionKind::Run && a.wire != a.dtype) {
      error = m.path + ": a " + (a.op == ActionKind::Send ? "send" : "recv") +
              " of " + a.slot.fragment + " with wire type " +
              elementTypeName(a.wire) + " for " + elementTypeName(a.dtype) +
              ": values travel as they are (a narrower edge is a cast in "
              "the program, docs/compression.md)";
      return nullptr;
    }

  std::string library = m.library;
  if (library.empty() || library[0] != '/')
    library = m.directory + "/" + library;
  // A GPU library needs the CUDA runtime and cuBLASLt, which may sit
  // outside the loader's path: loaded first, globally.
  Device &device = *program->device;
  if (m.target.kind == TargetKind::Cuda && device.kind() == DeviceKind::Cuda &&
      !CudaLibraries::open(error)) {
    error = m.path + ": " + error;
    return nullptr;
  }
  program->handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!program->handle) {
    const char *message = dlerror();
    error = m.path + ": cannot load library '" + library +
            "': " + (message ? message : "unknown error");
    return nullptr;
  }
  // Before any of the library's code runs (loading it runs none).
  if (const char *features = static_cast<const char *>(
          dlsym(program->handle, "tandem_cpu_features"))) {
    std::vector<std::string> missing = missingCpuFeatures(features);
    if (!missing.empty()) {
      std::string names;
      for (const std::string &name : missing)
        names += (names.empty() ? "" : ", ") + name;
      error = m.path + ": library '" + library +
              "' was compiled for CPU features this machine lacks: " + names +
              " (tandemc compiles for the CPU it runs on: compile on this "
              "machine, or set TANDEM_CPU_ARCH to a CPU every machine has, "
              "e.g. x86-64-v2)";
      return nullptr;
    }
  }
  // Host code (a CPU rank, an emulated CUDA rank) reads and writes the
  // memory directly; a GPU library runs on a GPU, its memory and stream.
  bool hostCode = true;
  if (m.target.kind == TargetKind::Cuda) {
    const char *emulated = static_cast<const char *>(
        dlsym(program->handle, "tandem_cuda_emulated"));
    hostCode = emulated && std::strcmp(emulated, "yes") == 0;
  }
  if (hostCode && !device.hostAddressable()) {
    error = m.path + ": the rank's library runs on the host (target '" +
            targetKindName(m.target.kind) + "'" +
            (m.target.kind == TargetKind::Cuda ? ", emulated" : "") +
            "), and " + device.describe() +
            " holds memory the host cannot address: run it on the host";
    return nullptr;
  }
  if (!hostCode &&
      (device.kind() != DeviceKind::Cuda || device.hostAddressable())) {
    error = m.path +
            ": the rank was compiled for target 'cuda' into a GPU library "
            "('" +
            library + "'), which runs on a GPU, and this run's device is " +
            device.describe() +
            " (tandem-run --device cuda on a machine with one; "
            "tandemc --cuda-emulate builds a library the host runs)";
    return nullptr;
  }
  // The calling convention the library was generated for.
  const uint32_t *abi = static_cast<const uint32_t *>(
      dlsym(program->handle, "tandem_fragment_abi"));
  if (!abi || *abi != TANDEM_FRAGMENT_ABI_VERSION) {
    error = m.path + ": library '" + library + "' follows fragment ABI " +
            (abi ? std::to_string(*abi)
                 : std::string("1 (it has no "
                               "tandem_fragment_abi)")) +
            ", and this runtime calls ABI " +
            std::to_string(TANDEM_FRAGMENT_ABI_VERSION) +
            ": compile the model again with this tandemc";
    return nullptr;
  }
  for (const FragmentInfo &f : m.fragments) {
    void *fn = dlsym(program->handle, f.symbol.c_str());
    void *scratch = dlsym(program->handle, f.scratchSymbol.c_str());
    const std::string &missing = !fn ? f.symbol : f.scratchSymbol;
    if (!fn || !scratch) {
      error = m.path + ": library '" + library + "' has no symbol '" + missing +
              "' (fragment '" + f.name + "')";
      return nullptr;
    }
    program->functions.push_back(reinterpret_cast<Fn>(fn));
    program->scratchBytes.push_back(reinterpret_cast<ScratchFn>(scratch)());
  }
  program->resources = device.fragmentResources(!hostCode, error);
  if (!program->resources) {
    error = m.path + ": " + error;
    return nullptr;
  }
  program->context = program->resources->context();
  // Where the library's code reports an index outside its range (the
  // manifest's index_checks describe them).
  program->statusWord = DeviceAllocation(device, sizeof(tandem_fragment_status),
                                         kMaxDeviceAlignment, error);
  if (!program->statusWord) {
    error = m.path + ": the status word: " + error;
    return nullptr;
  }
  program->context.status =
      static_cast<tandem_fragment_status *>(program->statusWord.data());
  if (!program->bindBuffers(options, error))
    return nullptr;
  if (options.cudaGraphs) {
    std::string why;
    if (device.kind() != DeviceKind::Cuda)
      why = device.describe() + " captures no graphs (--device cuda)";
    else if (std::any_of(m.actions.begin(), m.actions.end(),
                         [](const ActionInfo &a) {
                           return a.op == ActionKind::AllReduce ||
                                  a.op == ActionKind::Broadcast;
                         }))
      why = "the rank's program has collectives, which no graph captures "
            "yet";
    else if (options.separateBuffers || !options.dumpFragments.empty() ||
             options.checkGradients || !program->sums.empty())
      why = "the step does host work between its launches "
            "(TANDEM_SEPARATE_BUFFERS, TANDEM_DUMP_FRAGMENTS, --check-finite "
            "all or microbatch sums the runtime adds)";
    if (!why.empty()) {
      error = m.path + ": --cuda-graphs: " + why;
      return nullptr;
    }
    // Host code (on the fake driver) gets a stream of its own, on which
    // its calls are host functions a capture records.
    if (hostCode) {
      if (!device.createRankStream(program->hostStream, error)) {
        error = m.path + ": " + error;
        return nullptr;
      }
      program->context.stream = program->hostStream;
      program->hostCalls = std::make_unique<HostCalls>();
    }
    program->graphs =
        std::make_unique<StepGraphs>(device, program->context.stream);
  }
  // The runtime's own sums add on the host.
  if (!program->sums.empty() && !device.hostAddressable()) {
    error = m.path + ": the rank's microbatch sums are the runtime's " +
            "(accumulated_by runtime), which adds on the host, and " +
            device.describe() + " holds memory the host cannot address";
    return nullptr;
  }
  return program;
}

bool RankProgram::bindBuffers(const RankProgramOptions &options,
                              std::string &error) {
  const Manifest &m = info;
  const MemoryPlanInfo &plan = m.memory;
  // The library's own scratch needs against the plan (the manifest reader
  // checked the plan against the manifest's scratch_bytes only).
  for (size_t i = 0; i < m.actions.size(); ++i) {
    if (m.actions[i].op != ActionKind::Run)
      continue;
    int64_t f = m.findFragment(m.actions[i].fragment);
    uint64_t planned = 0;
    for (const PlanBufferInfo &b : plan.buffers)
      if (b.kind == PlanBufferKind::Scratch &&
          b.action == static_cast<int64_t>(i))
        planned = b.bytes;
    if (scratchBytes[f] > planned) {
      error = m.path + ": memory: actions[" + std::to_string(i) + "] runs '" +
              m.fragments[f].name + "', whose library function needs " +
              std::to_string(scratchBytes[f]) +
              " scratch bytes, but the plan gives it " +
              std::to_string(planned);
      return false;
    }
  }

  separateBuffers = options.separateBuffers;
  checkGradients = options.checkGradients;
  dumpDirectory = options.dumpFragments;
  if (!dumpDirectory.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dumpDirectory, ec);
    if (ec) {
      error = "cannot create the fragment dump directory '" + dumpDirectory +
              "': " + ec.message();
      return false;
    }
  }
  bufferData.assign(plan.buffers.size(), nullptr);
  scratchData.assign(m.actions.size(), noScratch.data());
  if (separateBuffers) {
    // Allocated by runStep while the list uses them, so that what is
    // allocated at once measures the step's needs without the plan's
    // offsets (and its intervals: these are the reader's own).
    separate.resize(plan.buffers.size());
    firstUsedAt.assign(m.actions.size() + 1, {});
    lastUsedAt.assign(m.actions.size() + 1, {});
    for (size_t i = 0; i < plan.buffers.size(); ++i) {
      firstUsedAt[plan.buffers[i].usedFirst].push_back(i);
      lastUsedAt[plan.buffers[i].usedLast].push_back(i);
    }
  } else {
    std::string allocationError;
    arena = DeviceAllocation(*device, plan.arenaBytes, plan.alignment,
                             allocationError);
    if (!arena) {
      error = m.path + ": memory: cannot allocate an arena of " +
              std::to_string(plan.arenaBytes) + " bytes: " + allocationError;
      return false;
    }
    allocatedBytes = plan.arenaBytes;
    for (size_t i = 0; i < plan.buffers.size(); ++i)
      bindBuffer(i,
                 static_cast<uint8_t *>(arena.data()) + plan.buffers[i].offset);
  }
  for (size_t i = 0; i < plan.buffers.size(); ++i) {
    const PlanBufferInfo &b = plan.buffers[i];
    switch (b.kind) {
    case PlanBufferKind::Slot:
      slotBuffers[{b.slot.fragment, b.slot.result, b.slot.microbatch}] = i;
      break;
    case PlanBufferKind::Accumulator: {
      accumulatorBuffers[{b.action, b.argument}] = i;
      const FragmentInfo &f =
          m.fragments[m.findFragment(m.actions[b.action].fragment)];
      if (b.argument < 0 ||
          b.argument >= static_cast<int64_t>(f.arguments.size()))
        break; // The step reports the run's missing sum.
      const ArgumentInfo &arg = f.arguments[b.argument];
      if (arg.accumulatedBy == Accumulation::Fragment)
        fragmentSums[{arg.slot.fragment, arg.slot.result}] = i;
      else
        sums.push_back({b.action, i, arg.slot, arg.dtype, arg.bytes, {}});
      break;
    }
    case PlanBufferKind::Scratch:
      break;
    }
  }
  for (Sum &sum : sums)
    for (int64_t k = 0; k < m.grid.microbatches; ++k) {
      auto it = slotBuffers.find({sum.slot.fragment, sum.slot.result, k});
      sum.slots.push_back(
          it == slotBuffers.end() ? -1 : static_cast<int64_t>(it->second));
    }
  transferWaitAfter = transferWaits(describeRank(m));
  groupEndWaits = transferWaitAfter;
  for (int64_t i = static_cast<int64_t>(m.actions.size()) - 1; i >= 0; --i)
    if (groupEndWaits[i] >= 0)
      groupEndWaits[i] = i + 1 < static_cast<int64_t>(m.actions.size()) &&
                                 groupEndWaits[i + 1] >= 0
                             ? groupEndWaits[i + 1]
                             : i;
  if (options.waitAtGroupEnd)
    transferWaitAfter = groupEndWaits;
  // The segments of --cuda-graphs under either way of waiting.
  segmentEndAlone = segmentEnds(m.actions, transferWaitAfter);
  segmentEndGroup = segmentEnds(m.actions, groupEndWaits);
  return true;
}

void RankProgram::bindBuffer(size_t index, uint8_t *data) {
  bufferData[index] = data;
  const PlanBufferInfo &b = info.memory.buffers[index];
  if (b.kind == PlanBufferKind::Scratch)
    scratchData[b.action] = data ? data : noScratch.data();
}

bool RankProgram::allocateSeparate(int64_t from, int64_t to,
                                   std::string &error) {
  for (int64_t a = from; a <= to; ++a)
    for (size_t index : firstUsedAt[a]) {
      if (separate[index].data())
        continue;
      uint64_t bytes = info.memory.buffers[index].bytes;
      std::string allocationError;
      separate[index] = DeviceAllocation(*device, bytes, info.memory.alignment,
                                         allocationError);
      if (!separate[index]) {
        error = "memory: cannot allocate the " + std::to_string(bytes) +
                " bytes of buffers[" + std::to_string(index) +
                "] (separate buffers): " + allocationError;
        return false;
      }
      bindBuffer(index, static_cast<uint8_t *>(separate[index].data()));
      separateLive += bytes;
    }
  allocatedBytes = std::max(allocatedBytes, separateLive);
  return true;
}

void RankProgram::freeSeparate(int64_t from, int64_t to) {
  for (int64_t a = from; a <= to; ++a)
    for (size_t index : lastUsedAt[a]) {
      if (!separate[index].data())
        continue;
      separate[index].reset();
      bindBuffer(index, nullptr);
      separateLive -= info.memory.buffers[index].bytes;
    }
}

bool RankProgram::allocateParameters(std::string &error) {
  if (parametersShared) {
    // Own memory for every parameter again.
    parameters.clear();
    parametersShared = false;
  }
  if (!parameters.empty())
    return true;
  // Each at the target's alignment (the CUDA target's vector loads and
  // cuBLASLt's alignment preferences read it).
  const uint64_t alignment = info.target.alignment;
  auto slotOf = [&](uint64_t bytes) {
    return (bytes + alignment - 1) / alignment * alignment;
  };
  uint64_t total = 0;
  for (const ParameterInfo &p : info.parameters)
    total += slotOf(p.bytes);
  std::string allocationError;
  parameterBlock =
      DeviceAllocation(*device, total, info.target.alignment, allocationError);
  if (!parameterBlock) {
    error = info.path + ": memory: cannot allocate the " +
            std::to_string(total) +
            " bytes of parameters and optimizer state: " + allocationError;
    return false;
  }
  uint64_t offset = 0;
  for (const ParameterInfo &p : info.parameters) {
    parameters[p.name] = Buffer::view(
        static_cast<char *>(parameterBlock.data()) + offset, p.bytes);
    offset += slotOf(p.bytes);
  }
  return true;
}

bool RankProgram::initParameters(uint64_t seed, std::string &error) {
  if (!allocateParameters(error))
    return false;
  // Filled on the host, then copied (on the host device, in place).
  std::vector<uint8_t> staging;
  for (const ParameterInfo &p : info.parameters) {
    Buffer &buffer = parameters.at(p.name);
    uint64_t stream = rng::parameterStream(p.name);
    size_t count = p.bytes / elementTypeSize(p.dtype);
    void *host = buffer.data();
    if (!direct()) {
      staging.resize(p.bytes);
      host = staging.data();
    }
    if (p.dtype == ElementType::F32)
      rng::initFill(p.init, seed, stream, 0, static_cast<float *>(host), count);
    else if (p.dtype == ElementType::F64)
      rng::initFill(p.init, seed, stream, 0, static_cast<double *>(host),
                    count);
    else {
      error = info.path + ": parameter '" + p.name + "' has type " +
              elementTypeName(p.dtype) +
              "; initialization supports f32 and f64";
      return false;
    }
    if (!direct() && !device->copyToDevice(buffer.data(), host, p.bytes, error))
      return false;
  }
  return true;
}

bool RankProgram::checkParameterSize(const std::string &name, uint64_t bytes,
                                     std::string &error) const {
  int64_t index = info.findParameter(name);
  if (index < 0) {
    error = info.path + ": no parameter '" + name + "'";
    return false;
  }
  if (info.parameters[index].bytes != bytes) {
    error = info.path + ": parameter '" + name + "' has " +
            std::to_string(info.parameters[index].bytes) + " bytes, not " +
            std::to_string(bytes);
    return false;
  }
  return true;
}

bool RankProgram::setParameter(const std::string &name, const void *data,
                               uint64_t bytes, std::string &error) {
  if (!checkParameterSize(name, bytes, error))
    return false;
  if (!allocateParameters(error))
    return false;
  return device->copyToDevice(parameters.at(name).data(), data, bytes, error);
}

bool RankProgram::shareParameter(const std::string &name, const void *data,
                                 uint64_t bytes, std::string &error) {
  if (!checkParameterSize(name, bytes, error))
    return false;
  for (const FragmentInfo &f : info.fragments)
    for (const ResultInfo &r : f.results)
      if (r.update && *r.update == name) {
        error = info.path + ": parameter '" + name + "' is updated by " +
                f.name + ", so it cannot be shared";
        return false;
      }
  if (!parametersShared) {
    // A program reads either its own block or shared memory for all.
    parameters.clear();
    parameterBlock.reset();
    parametersShared = true;
  }
  parameters[name] = Buffer::view(const_cast<void *>(data), bytes);
  return true;
}

const Buffer *RankProgram::parameter(const std::string &name) const {
  auto it = parameters.find(name);
  return it == parameters.end() ? nullptr : &it->second;
}

const void *RankProgram::hostParameter(const std::string &name,
                                       std::vector<uint8_t> &staging,
                                       std::string &error) const {
  const Buffer *value = parameter(name);
  if (!value) {
    error = info.path + ": no parameter '" + name + "'";
    return nullptr;
  }
  if (direct())
    return value->data();
  staging.resize(value->size());
  if (!device->copyToHost(staging.data(), value->data(), value->size(), error))
    return nullptr;
  return staging.data();
}

namespace {

using SlotKey = std::tuple<std::string, int64_t, int64_t>;

std::string describe(const std::string &fragment, int64_t result,
                     int64_t microbatch) {
  return slotText(SlotRef{fragment, result, microbatch});
}

template <typename T>
void accumulate(void *acc, const void *value, uint64_t bytes) {
  T *a = static_cast<T *>(acc);
  const T *v = static_cast<const T *>(value);
  for (uint64_t i = 0, e = bytes / sizeof(T); i < e; ++i)
    a[i] = a[i] + v[i];
}

} // namespace

bool RankProgram::runCollective(int64_t at, Transport &transport,
                                std::vector<char> &held, std::string &error) {
  const Manifest &m = info;
  const ActionInfo &a = m.actions[at];
  const int64_t rank = m.grid.rank;
  CollectiveOp op;
  bool broadcast = a.op == ActionKind::Broadcast;
  op.kind =
      broadcast ? CollectiveOp::Kind::Broadcast : CollectiveOp::Kind::AllReduce;
  op.group = a.group;
  op.reduction = a.reduction == "max" ? CollectiveOp::Reduction::Max
                                      : CollectiveOp::Reduction::Sum;
  op.root = a.root;
  op.dtype = a.dtype;
  op.bytes = a.bytes;
  op.description =
      (broadcast ? "broadcast of " : "all_reduce " + a.reduction + " of ") +
      describe(a.slot.fragment, a.slot.result, a.slot.microbatch);
  auto fail = [&](const std::string &message) {
    error = "rank " + std::to_string(rank) + ": " + message;
    transport.abort(error);
    return false;
  };
  std::string localError;
  if (separateBuffers && !allocateSeparate(at, at, localError))
    return fail(op.description + ": " + localError);
  auto found = slotBuffers.find(
      SlotKey{a.slot.fragment, a.slot.result, a.slot.microbatch});
  if (found == slotBuffers.end())
    return fail(op.description + ": the slot has no buffer");
  size_t index = found->second;
  // Every member contributes its value but a broadcast's receivers, whose
  // slot the broadcast defines.
  bool contributes = !broadcast || a.root == rank;
  if (contributes && !held[index])
    return fail(op.description + ": the slot is not held");
  if (m.memory.buffers[index].bytes != a.bytes)
    return fail(op.description + ": slot size mismatch");
  op.data = bufferData[index];
  // A transport of host memory gets a host copy of a device's value.
  std::vector<uint8_t> staged;
  const bool stage = !direct() && transport.payloadDevice() != device;
  if (stage) {
    staged.resize(a.bytes);
    if (contributes &&
        !device->copyToHost(staged.data(), op.data, a.bytes, localError))
      return fail(op.description + ": " + localError);
    op.data = staged.data();
  }
  if (!transport.collective(rank, op, localError)) {
    error = localError.rfind("rank ", 0) == 0 ||
                    localError.rfind("collective mismatch", 0) == 0 ||
                    localError.rfind("deadlock", 0) == 0
                ? localError
                : "rank " + std::to_string(rank) + ": " + localError;
    transport.abort(error);
    return false;
  }
  if (stage && !device->copyToDevice(bufferData[index], staged.data(), a.bytes,
                                     localError))
    return fail(op.description + ": " + localError);
  held[index] = 1;
  return true;
}

bool RankProgram::runStep(const std::map<int64_t, const Buffer *> &inputs,
                          Transport &transport, StepResult &result,
                          std::string &error) {
  const Manifest &m = info;
  const int64_t rank = m.grid.rank;
  const int64_t microbatches = m.grid.microbatches;
  std::string prefix = "rank " + std::to_string(rank) + ": ";
  auto fail = [&](const std::string &message) {
    error = prefix + message;
    // No capture stays open across the transport's abort (which may free
    // and synchronize), and no host call issued this step is still queued
    // when the next step replaces it.
    if (graphs)
      graphs->abandon();
    if (hostCalls) {
      std::string ignored;
      int status = 0;
      device->synchronize(ignored);
      hostCalls->takeFailure(status);
    }
    transport.abort(error);
    return false;
  };
  if (parameters.size() != m.parameters.size())
    return fail("parameters are not initialized");
  result.nonFinite.clear();
  for (const InputInfo &in : m.inputs) {
    auto it = inputs.find(in.index);
    if (it == inputs.end() || !it->second)
      return fail("step input " + std::to_string(in.index) + " is missing");
    if (it->second->size() != in.microbatchBytes * microbatches)
      return fail("step input " + std::to_string(in.index) + " has " +
                  std::to_string(it->second->size()) + " bytes, not " +
                  std::to_string(in.microbatchBytes * microbatches));
  }

  // A transport over device memory orders its copies against the stream
  // the rank's kernels run on.
  transport.setRankStream(rank, context.stream, timeline.get());
  lastSpans.clear();

  // Where the fragments read the step inputs: the caller's buffers on the
  // host device, else copies on the device (allocated once).
  std::map<int64_t, const uint8_t *> inputData;
  for (const InputInfo &in : m.inputs) {
    const Buffer *full = inputs.at(in.index);
    if (direct()) {
      inputData[in.index] = static_cast<const uint8_t *>(full->data());
      continue;
    }
    std::string copyError;
    DeviceAllocation &copy = inputCopies[in.index];
    if (!copy || copy.size() != full->size())
      copy = DeviceAllocation(*device, full->size(), info.target.alignment,
                              copyError);
    if (!copy || !device->copyToDevice(copy.data(), full->data(), full->size(),
                                       copyError))
      return fail("step input " + std::to_string(in.index) + ": " + copyError);
    inputData[in.index] = static_cast<const uint8_t *>(copy.data());
  }

  const int64_t end = static_cast<int64_t>(m.actions.size());
  // Posted groups (docs/pipeline-eval.md, "Posting and waiting"): each op
  // is waited for after the action transferWaits names, when a receive's
  // slot becomes held.
  const std::vector<int64_t> &waits =
      transferWaitPoints(transport.postedOpsMoveAlone());

  // CUDA graphs (RankProgramOptions::cudaGraphs): from the second step on,
  // each segment is captured once and its graph launched instead of its
  // runs, unless an address the launches take has moved.
  const std::vector<int64_t> &segmentEnd =
      transport.postedOpsMoveAlone() ? segmentEndAlone : segmentEndGroup;
  if (graphs) {
    if (transport.payloadDevice() != device &&
        std::any_of(
            m.actions.begin(), m.actions.end(),
            [](const ActionInfo &a) { return a.op != ActionKind::Run; }))
      return fail("--cuda-graphs: the transport moves host memory, staged "
                  "through synchronous copies between the launches; graphs "
                  "need a transport of the device's memory (inproc on "
                  "--device cuda, or nccl)");
    graphs->startStep(graphAddresses(inputData), segmentEnd, stepsRun >= 1);
  }
  // A step that fails while capturing leaves the stream usable.
  struct CaptureGuard {
    StepGraphs *graphs;
    ~CaptureGuard() {
      if (graphs)
        graphs->abandon();
    }
  } captureGuard{graphs.get()};
  // The last step's update and output results (read by the caller until
  // now), or what a failed step left.
  if (separateBuffers)
    freeSeparate(0, end);

  // Which planned buffers hold this step's value. The manifest reader
  // proved that no buffer is touched outside its live interval and that
  // buffers live together do not share bytes, so a held buffer's bytes are
  // still its own whenever the list reads it.
  std::vector<char> held(m.memory.buffers.size(), 0);
  auto findSlot = [&](const std::string &fragment, int64_t r,
                      int64_t mb) -> int64_t {
    auto it = slotBuffers.find(SlotKey{fragment, r, mb});
    if (it == slotBuffers.end() || !held[it->second])
      return -1;
    return static_cast<int64_t>(it->second);
  };
  auto sizeOf = [&](int64_t index) { return m.memory.buffers[index].bytes; };
  // Every sum_microbatches argument accumulates its slots as they appear,
  // in microbatch order (the order and rounding of the reference), so a
  // slot's buffer is free once it is added: after every action, each sum
  // whose run is still to come takes the next slots that are held.
  std::vector<int64_t> folded(sums.size(), 0);
  // Per plan buffer of a fragment-accumulated sum: microbatches added.
  std::vector<int64_t> accumulated(m.memory.buffers.size(), 0);
  std::string foldError;
  auto foldSums = [&](int64_t now) {
    for (size_t j = 0; j < sums.size(); ++j) {
      const Sum &sum = sums[j];
      if (sum.action <= now)
        continue;
      for (; folded[j] < microbatches; ++folded[j]) {
        int64_t s = sum.slots[folded[j]];
        if (s < 0 || !held[s])
          break;
        auto what = [&] {
          return "the sum of " +
                 describe(sum.slot.fragment, sum.slot.result, folded[j]) +
                 " for actions[" + std::to_string(sum.action) + "]: ";
        };
        if (sum.dtype != ElementType::F32 && sum.dtype != ElementType::F64) {
          foldError = what() + "accumulating " + elementTypeName(sum.dtype) +
                      " is not supported";
          return false;
        }
        if (sizeOf(s) != sum.bytes) {
          foldError = what() + "slot size mismatch";
          return false;
        }
        // Host arithmetic: load admits only devices the host can address.
        uint8_t *acc = bufferData[sum.buffer];
        if (folded[j] == 0)
          std::memcpy(acc, bufferData[s], sum.bytes);
        else if (sum.dtype == ElementType::F32)
          accumulate<float>(acc, bufferData[s], sum.bytes);
        else
          accumulate<double>(acc, bufferData[s], sum.bytes);
      }
    }
    return true;
  };

  struct Posted {
    std::vector<TransportOp> ops;
    std::vector<int64_t> buffers, waitAfter;
    std::vector<char> waited;
    std::vector<std::vector<uint8_t>> staged;
  };
  std::list<Posted> inFlight;
  auto transportFailure = [&](const std::string &transportError) {
    error = transportError.rfind("rank ", 0) == 0 ||
                    transportError.rfind("deadlock", 0) == 0
                ? transportError
                : prefix + transportError;
    transport.abort(error);
    return false;
  };
  auto completeDue = [&](int64_t now) {
    std::vector<TransportOp *> due;
    for (Posted &posted : inFlight)
      for (size_t k = 0; k < posted.ops.size(); ++k)
        if (posted.waitAfter[k] == now)
          due.push_back(&posted.ops[k]);
    if (due.empty())
      return true;
    std::string transportError, copyError;
    if (!transport.wait(rank, due, transportError))
      return transportFailure(transportError);
    for (auto it = inFlight.begin(); it != inFlight.end();) {
      Posted &posted = *it;
      bool all = true;
      for (size_t k = 0; k < posted.ops.size(); ++k) {
        if (posted.waitAfter[k] == now) {
          posted.waited[k] = 1;
          int64_t buffer = posted.buffers[k];
          if (buffer >= 0 && !posted.staged[k].empty() &&
              !device->copyToDevice(bufferData[buffer], posted.staged[k].data(),
                                    posted.staged[k].size(), copyError))
            return fail(copyError);
          if (buffer >= 0)
            held[buffer] = 1;
        }
        all = all && posted.waited[k];
      }
      it = all ? inFlight.erase(it) : std::next(it);
    }
    return true;
  };

  int64_t segmentFirst = -1;
  size_t pc = 0;
  while (pc < m.actions.size()) {
    const ActionInfo &action = m.actions[pc];
    if (action.op == ActionKind::Run) {
      const size_t at = pc++;
      int64_t fi = m.findFragment(action.fragment);
      const FragmentInfo &f = m.fragments[fi];
      int64_t mb = action.microbatch;
      std::string where = runName(action);
      if (f.perMicrobatch != (mb >= 0) || mb >= microbatches)
        return fail(where + ": microbatch does not fit the fragment");
      std::string allocationError;
      if (separateBuffers &&
          !allocateSeparate(static_cast<int64_t>(at), static_cast<int64_t>(at),
                            allocationError))
        return fail(where + ": " + allocationError);
      std::vector<const void *> args;
      for (size_t a = 0; a < f.arguments.size(); ++a) {
        const ArgumentInfo &arg = f.arguments[a];
        switch (arg.kind) {
        case BindingKind::Param:
          args.push_back(parameters.at(arg.param).data());
          break;
        case BindingKind::Input: {
          if (mb < 0)
            return fail(where + ": a once-per-step fragment cannot bind a "
                                "step input");
          auto full = inputData.find(arg.input);
          if (full == inputData.end())
            return fail(where + ": argument " + std::to_string(a) +
                        " binds step input " + std::to_string(arg.input) +
                        ", which the manifest does not list");
          args.push_back(full->second + arg.bytes * mb);
          break;
        }
        case BindingKind::Slot: {
          if (arg.rule == SlotRule::SumMicrobatches &&
              arg.accumulatedBy == Accumulation::Fragment) {
            size_t buffer =
                fragmentSums.at({arg.slot.fragment, arg.slot.result});
            if (accumulated[buffer] != microbatches)
              return fail(where + ": argument " + std::to_string(a) +
                          ": the sum of " + arg.slot.fragment + "[" +
                          std::to_string(arg.slot.result) + "] holds " +
                          std::to_string(accumulated[buffer]) + " of " +
                          std::to_string(microbatches) + " microbatches");
            args.push_back(bufferData[buffer]);
            break;
          }
          if (arg.rule == SlotRule::SumMicrobatches) {
            size_t buffer = accumulatorBuffers.at(
                {static_cast<int64_t>(at), static_cast<int64_t>(a)});
            // Summed by foldSums as the slots appeared.
            int64_t count = 0;
            for (size_t j = 0; j < sums.size(); ++j)
              if (sums[j].buffer == buffer)
                count = folded[j];
            if (count < microbatches)
              return fail(where + ": argument " + std::to_string(a) +
                          ": slot " +
                          describe(arg.slot.fragment, arg.slot.result, count) +
                          " is not held");
            args.push_back(bufferData[buffer]);
            break;
          }
          int64_t slotMb = arg.rule == SlotRule::SameMicrobatch ? mb : -1;
          int64_t s = findSlot(arg.slot.fragment, arg.slot.result, slotMb);
          if (s < 0)
            return fail(where + ": argument " + std::to_string(a) + ": slot " +
                        describe(arg.slot.fragment, arg.slot.result, slotMb) +
                        " is not held");
          if (sizeOf(s) != arg.bytes)
            return fail(where + ": slot size mismatch");
          args.push_back(bufferData[s]);
          break;
        }
        }
      }
      std::vector<void *> results;
      std::vector<size_t> produced;
      // Results added into their sums: every run but the first of the step
      // adds, and the runs come in microbatch order (the runtime's own
      // sums' order, so either way gives the same order of additions).
      std::vector<size_t> summed;
      context.flags = 0;
      for (size_t r = 0; r < f.results.size(); ++r) {
        if (auto sum = fragmentSums.find({f.name, static_cast<int64_t>(r)});
            sum != fragmentSums.end()) {
          if (accumulated[sum->second] != mb)
            return fail(where + ": result " + std::to_string(r) +
                        " accumulates in microbatch order, but the sum "
                        "holds " +
                        std::to_string(accumulated[sum->second]) +
                        " microbatches");
          if (mb > 0)
            context.flags |= TANDEM_FRAGMENT_ACCUMULATE;
          summed.push_back(sum->second);
          results.push_back(bufferData[sum->second]);
          continue;
        }
        if (f.results[r].inPlaceOf) {
          // The update overwrites its parameter (the argument bound to it
          // points there too).
          results.push_back(parameters.at(*f.results[r].update).data());
          continue;
        }
        produced.push_back(
            slotBuffers.at(SlotKey{f.name, static_cast<int64_t>(r), mb}));
        results.push_back(bufferData[produced.back()]);
      }
      // The arguments before the call (an in-place update overwrites
      // its parameter), the results after it.
      st::File dump;
      std::string dumpError;
      auto addDump = [&](const std::string &name, ElementType dtype,
                         const std::vector<int64_t> &shape, const void *data,
                         uint64_t bytes) {
        st::Tensor &t = dump.tensors[name];
        t.dtype = toSafetensorsType(dtype);
        t.shape = shape;
        t.data.resize(bytes);
        return device->copyToHost(t.data.data(), data, bytes, dumpError);
      };
      if (!dumpDirectory.empty())
        for (size_t a = 0; a < f.arguments.size(); ++a)
          if (!addDump("arg" + std::to_string(a), f.arguments[a].dtype,
                       f.arguments[a].shape, args[a], f.arguments[a].bytes))
            return fail(where + ": cannot dump the call: " + dumpError);
      if (checkGradients && !f.perMicrobatch && result.nonFinite.empty() &&
          !findNonFiniteSum(f, args, result.nonFinite, error))
        return fail(where + ": " + error);
      // A report names the run by its action.
      context.call = at;
      // The segment this run belongs to: its first run, and how it runs.
      const int64_t segmentLast = graphs ? segmentEnd[at] : -1;
      const bool segmentStart =
          graphs && (at == 0 || segmentEnd[at - 1] != segmentLast);
      if (segmentStart)
        segmentFirst = static_cast<int64_t>(at);
      StepGraphs::Mode mode =
          graphs ? graphs->mode(segmentFirst) : StepGraphs::Mode::Call;
      std::string traceError;
      if (segmentStart && !graphs->enter(segmentFirst, traceError))
        return fail(where + ": cannot capture a CUDA graph: " + traceError);
      // A graph's runs are one span for the whole graph (below).
      DeviceTimeline *runTimeline =
          mode == StepGraphs::Mode::Call ? timeline.get() : nullptr;
      int64_t span = runTimeline ? runTimeline->begin(context.stream, where,
                                                      "device", traceError)
                                 : 0;
      if (span < 0)
        return fail(where + ": " + traceError);
      // A replayed segment calls nothing: its graph runs at its end.
      int status = 0;
      if (mode != StepGraphs::Mode::Replay && hostCalls) {
        // Checked once the device has run the step (below).
        if (!hostCalls->issue(*device, context.stream, static_cast<int64_t>(at),
                              functions[fi], context, args, results,
                              scratchData[at], traceError))
          return fail(where + ": " + traceError);
      } else if (mode != StepGraphs::Mode::Replay) {
        status = functions[fi](&context, args.data(), results.data(),
                               scratchData[at]);
      }
      if (runTimeline && !runTimeline->end(span, context.stream, traceError))
        return fail(where + ": " + traceError);
      if (graphs && static_cast<int64_t>(at) == segmentLast &&
          !graphs->leave(segmentFirst, timeline.get(),
                         "CUDA graph of " + runName(m.actions[segmentFirst]) +
                             (segmentFirst == segmentLast
                                  ? std::string()
                                  : " to " + runName(action)),
                         traceError))
        return fail(where + ": the CUDA graph of its segment: " + traceError);
      // Host code has reported by now; on a GPU (the fake one of the
      // tests too) kernels report after the step's synchronization, read
      // below.
      if (direct()) {
        std::string report;
        if (!readStatus(report) || !report.empty())
          return fail(report);
      }
      if (!dumpDirectory.empty() && status == 0) {
        for (size_t r = 0; r < f.results.size(); ++r)
          if (!addDump("result" + std::to_string(r), f.results[r].dtype,
                       f.results[r].shape, results[r], f.results[r].bytes))
            return fail(where + ": cannot dump the call: " + dumpError);
        uint64_t call = dumpedCalls++;
        dump.metadata = {{"fragment", f.name},
                         {"microbatch", std::to_string(mb)},
                         {"call", std::to_string(call)},
                         {"rank", std::to_string(m.grid.rank)}};
        char number[32];
        std::snprintf(number, sizeof number, "%06llu",
                      static_cast<unsigned long long>(call));
        std::string path = dumpDirectory + "/rank" +
                           std::to_string(m.grid.rank) + "-" + number + "-" +
                           f.name + ".safetensors";
        if (!st::writeFile(path, dump, dumpError))
          return fail(where + ": cannot dump the call: " + dumpError);
      }
      if (status != 0)
        return fail(where + ": the fragment returned " +
                    std::to_string(status) + " (" + fragmentStatusName(status) +
                    ")");
      for (size_t index : produced)
        held[index] = 1;
      for (size_t index : summed)
        ++accumulated[index];
      if (!completeDue(static_cast<int64_t>(at)))
        return false;
      if (!foldSums(static_cast<int64_t>(at)))
        return fail(foldError);
      if (separateBuffers)
        freeSeparate(static_cast<int64_t>(at), static_cast<int64_t>(at));
      continue;
    }

    if (action.op == ActionKind::AllReduce ||
        action.op == ActionKind::Broadcast) {
      const int64_t at = static_cast<int64_t>(pc++);
      if (!runCollective(at, transport, held, error) || !completeDue(at))
        return false;
      if (!foldSums(at))
        return fail(foldError);
      if (separateBuffers)
        freeSeparate(at, at);
      continue;
    }

    // A group: the maximal run of consecutive sends and receives.
    auto pointToPoint = [&](int64_t i) {
      return m.actions[i].op == ActionKind::Send ||
             m.actions[i].op == ActionKind::Recv;
    };
    const int64_t groupFirst = static_cast<int64_t>(pc);
    int64_t groupLast = groupFirst;
    while (groupLast + 1 < end && pointToPoint(groupLast + 1))
      ++groupLast;
    std::string allocationError;
    if (separateBuffers &&
        !allocateSeparate(groupFirst, groupLast, allocationError))
      return fail(allocationError);
    // Off the host device a transport of host memory sends and receives
    // host copies: per op, its staging (a receive's is copied into its
    // buffer once waited for). A transport over this device's memory takes
    // the buffers themselves.
    const bool stage = !direct() && transport.payloadDevice() != device;
    Posted &posted = inFlight.emplace_back();
    std::string copyError;
    for (; static_cast<int64_t>(pc) <= groupLast; ++pc) {
      const ActionInfo &a = m.actions[pc];
      TransportOp op;
      op.send = a.op == ActionKind::Send;
      op.peer = a.peer;
      op.channel = a.channel;
      op.dtype = a.dtype;
      op.wire = a.wire;
      op.bytes = a.bytes;
      op.description =
          std::string(op.send ? "send of " : "recv of ") +
          describe(a.slot.fragment, a.slot.result, a.slot.microbatch);
      int64_t buffer = -1;
      posted.staged.emplace_back();
      if (op.send) {
        int64_t s = findSlot(a.slot.fragment, a.slot.result, a.slot.microbatch);
        if (s < 0)
          return fail(op.description + ": the slot is not held");
        if (sizeOf(s) != a.bytes)
          return fail(op.description + ": slot size mismatch");
        op.sendData = bufferData[s];
        if (stage) {
          posted.staged.back().resize(a.bytes);
          if (!device->copyToHost(posted.staged.back().data(), bufferData[s],
                                  a.bytes, copyError))
            return fail(op.description + ": " + copyError);
          op.sendData = posted.staged.back().data();
        }
      } else {
        buffer = static_cast<int64_t>(slotBuffers.at(
            SlotKey{a.slot.fragment, a.slot.result, a.slot.microbatch}));
        op.recvData = bufferData[buffer];
        if (stage) {
          posted.staged.back().resize(a.bytes);
          op.recvData = posted.staged.back().data();
        }
      }
      posted.ops.push_back(std::move(op));
      posted.buffers.push_back(buffer);
      posted.waitAfter.push_back(waits[pc]);
      posted.waited.push_back(0);
    }
    std::string transportError;
    if (!transport.post(rank, posted.ops, transportError))
      return transportFailure(transportError);
    if (!completeDue(groupLast))
      return false;
    if (!foldSums(groupLast))
      return fail(foldError);
    if (separateBuffers)
      freeSeparate(groupFirst, groupLast);
  }
  if (!inFlight.empty())
    return fail("transfers still in flight at the end of the step");

  // A GPU's work is asynchronous: its failures surface here, in the step
  // that caused them.
  if (!direct()) {
    std::string syncError;
    if (!device->synchronize(syncError))
      return fail(syncError);
    std::string report;
    if (!readStatus(report) || !report.empty())
      return fail(report);
    int status = 0;
    if (int64_t at = hostCalls ? hostCalls->takeFailure(status) : -1; at >= 0)
      return fail(runName(m.actions[at]) + ": the fragment returned " +
                  std::to_string(status) + " (" + fragmentStatusName(status) +
                  ")");
    // The driver's count of the device's memory, for the summary.
    device->sampleDriverPeak();
    if (timeline && !timeline->collect(context.stream, lastSpans, syncError))
      return fail("the device trace: " + syncError);
  }

  // Updates are handed out in place (the next step overwrites them, after
  // applyUpdates has copied them); outputs are copied out, since callers
  // keep them.
  StepResult step;
  for (const FragmentInfo &f : m.fragments)
    for (size_t r = 0; r < f.results.size(); ++r) {
      const ResultInfo &res = f.results[r];
      if ((!res.update && !res.output) || res.inPlaceOf)
        continue; // In place: the parameter already holds the update.
      int64_t s = findSlot(f.name, static_cast<int64_t>(r), -1);
      if (s < 0)
        return fail("result " + describe(f.name, static_cast<int64_t>(r), -1) +
                    " was not produced");
      if (res.update)
        step.updates[*res.update] =
            std::make_shared<Buffer>(Buffer::view(bufferData[s], sizeOf(s)));
      if (!res.output)
        continue;
      // Reused from the last step unless the caller still holds it: a
      // fresh buffer per step would cost a page fault per 4 KiB.
      std::shared_ptr<Buffer> &value = resultBuffers[s];
      if (!value || value.use_count() > 1 || value->size() != sizeOf(s))
        value = std::make_shared<Buffer>(sizeOf(s));
      std::string copyError;
      if (!device->copyToHost(value->data(), bufferData[s], sizeOf(s),
                              copyError))
        return fail("output " + std::to_string(*res.output) + ": " + copyError);
      step.outputs[*res.output] = value;
    }
  transport.finish(rank);
  step.nonFinite = std::move(result.nonFinite);
  result = std::move(step);
  ++stepsRun;
  return true;
}

bool RankProgram::readStatus(std::string &report) {
  report.clear();
  tandem_fragment_status word;
  if (!device->copyToHost(&word, statusWord.data(), sizeof word, report)) {
    report = "cannot read the status word: " + report;
    return false;
  }
  if (word.code == 0)
    return true;
  const std::vector<ActionInfo> &actions = info.actions;
  bool run =
      word.call < actions.size() && actions[word.call].op == ActionKind::Run;
  report = (run ? runName(actions[word.call])
                : "action " + std::to_string(word.call) + " (not a run)") +
           ": ";
  if (word.check >= info.indexChecks.size()) {
    report += "the fragment reported " + std::to_string(word.code) + " (" +
              fragmentStatusName(static_cast<int>(word.code)) +
              ") for index check " + std::to_string(word.check) +
              ", which the manifest does not list";
  } else {
    const IndexCheckInfo &check = info.indexChecks[word.check];
    report +=
        "'" + check.op + "'" +
        (check.location.empty() ? std::string() : " (" + check.location + ")") +
        ": " + check.index + " " + std::to_string(word.value) +
        " at position " + std::to_string(word.position) + " is outside the " +
        check.range + " [0, " + std::to_string(check.bound) + ")";
  }
  // Zeroed for the next report (after a failed step the caller may go on,
  // e.g. to a held-out step).
  std::string zeroError;
  if (!device->zero(statusWord.data(), sizeof word, zeroError))
    report += "; the status word cannot be reset: " + zeroError;
  return true;
}

bool RankProgram::findNonFiniteSum(const FragmentInfo &f,
                                   const std::vector<const void *> &args,
                                   std::string &found, std::string &error) {
  std::vector<uint8_t> copy;
  for (size_t a = 0; a < f.arguments.size(); ++a) {
    const ArgumentInfo &arg = f.arguments[a];
    if (arg.kind != BindingKind::Slot || arg.rule != SlotRule::SumMicrobatches)
      continue;
    const void *data = args[a];
    if (!device->hostAddressable()) {
      copy.resize(arg.bytes);
      if (!device->copyToHost(copy.data(), data, arg.bytes, error))
        return false;
      data = copy.data();
    }
    int64_t index = firstNonFinite(arg.dtype, data, arg.bytes);
    if (index < 0)
      continue;
    std::string shape;
    for (int64_t d : arg.shape)
      shape += (shape.empty() ? "" : "x") + std::to_string(d);
    found = "the gradient sum of " + arg.slot.fragment + " result " +
            std::to_string(arg.slot.result) + " (" +
            elementTypeName(arg.dtype) + "[" + shape + "], argument " +
            std::to_string(a) + " of " + f.name + ") holds " +
            nonFiniteName(arg.dtype, data, index) + " at element " +
            std::to_string(index);
    return true;
  }
  return true;
}

std::vector<const void *> RankProgram::graphAddresses(
    const std::map<int64_t, const uint8_t *> &inputData) const {
  // The arena, scratch, status word and workspace are fixed at load (the
  // separate-buffers mode, whose buffers come and go, is refused).
  std::vector<const void *> addresses;
  for (const auto &[index, data] : inputData)
    addresses.push_back(data);
  for (const auto &[name, value] : parameters)
    addresses.push_back(value.data());
  return addresses;
}

void RankProgram::traceDevice() {
  if (!direct() && !timeline)
    timeline = std::make_unique<DeviceTimeline>(*device);
}

bool RankProgram::applyUpdates(const StepResult &result, std::string &error) {
  // A copy, not a swap: the updates are views of the step buffers.
  for (const auto &[name, value] : result.updates) {
    // The manifest reader checked that every update has its parameter's
    // size.
    Buffer &parameter = parameters.at(name);
    if (parameter.data() != value->data() && // Not updated in place.
        !device->copyOnDevice(parameter.data(), value->data(), value->size(),
                              error))
      return false;
  }
  return true;
}

std::optional<double> tandem::runtime::lossOutput(
    const Manifest &m,
    const std::map<int64_t, std::shared_ptr<Buffer>> &outputs) {
  for (const OutputInfo &out : m.outputs) {
    auto value = outputs.find(0);
    if (out.index != 0 || value == outputs.end())
      continue;
    const ResultInfo &res =
        m.fragments[m.findFragment(out.fragment)].results[out.result];
    if (!res.shape.empty())
      return std::nullopt;
    if (res.dtype == ElementType::F32) {
      float loss;
      std::memcpy(&loss, value->second->data(), sizeof loss);
      return loss;
    }
    if (res.dtype == ElementType::F64) {
      double loss;
      std::memcpy(&loss, value->second->data(), sizeof loss);
      return loss;
    }
  }
  return std::nullopt;
}
