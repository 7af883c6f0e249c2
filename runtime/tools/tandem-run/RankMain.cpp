//===- RankMain.cpp - one rank of a tandem-run job ------------------------===//

#include "RankMain.h"
#include "Launch.h"
#include "StepTimer.h"

#include "tandem/Runtime/Checkpoint.h"
#include "tandem/Runtime/CudaDriver.h"
#include "tandem/Runtime/NcclTransport.h"
#include "tandem/Runtime/ParameterFiles.h"
#include "tandem/Runtime/RankProgram.h"
#include "tandem/Runtime/StepInputs.h"
#include "tandem/Runtime/TransferOrder.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>

using namespace tandem;
using namespace tandem::run;
using namespace tandem::runtime;

namespace {

/// Collects every rank's `mine` (`what`: "parameters") on rank 0 and
/// writes their union to `path` (a tensor two ranks hold is written once).
bool gatherFile(st::File mine, ControlPlane &control, const std::string &what,
                const std::string &path, std::string &error) {
  std::vector<uint8_t> bytes = st::serialize(mine);
  std::vector<std::string> parts = control.gather(
      std::string(reinterpret_cast<const char *>(bytes.data()), bytes.size()),
      0);
  if (control.rank() != 0)
    return true;
  st::File all = std::move(mine);
  for (size_t r = 1; r < parts.size(); ++r) {
    std::vector<uint8_t> theirs(parts[r].begin(), parts[r].end());
    std::optional<st::File> file =
        st::parse(theirs, "rank " + std::to_string(r) + "'s " + what, error);
    if (!file)
      return false;
    for (auto &[name, tensor] : file->tensors)
      all.tensors.emplace(name, std::move(tensor));
  }
  return st::writeFile(path, all, error);
}

/// Collects every rank's parameters on rank 0 and writes them to `path`.
bool saveParameters(const RankProgram &program, ControlPlane &control,
                    const std::string &path, std::string &error) {
  st::File mine;
  if (!addParameters(program, mine, error))
    return false;
  return gatherFile(std::move(mine), control, "parameters", path, error);
}

/// Collects the step outputs (`result.<k>`, typed by their producing
/// fragment's result) on rank 0 and writes them to `path`.
bool saveOutputs(const Manifest &m,
                 const std::map<int64_t, std::shared_ptr<Buffer>> &outputs,
                 ControlPlane &control, const std::string &path,
                 std::string &error) {
  st::File mine;
  for (const OutputInfo &out : m.outputs) {
    auto it = outputs.find(out.index);
    int64_t f = m.findFragment(out.fragment);
    if (it == outputs.end() || f < 0) {
      error = "step output " + std::to_string(out.index) + " was not produced";
      return false;
    }
    const ResultInfo &res = m.fragments[f].results[out.result];
    mine.tensors["result." + std::to_string(out.index)] =
        tensorOf(res.dtype, res.shape, *it->second);
  }
  return gatherFile(std::move(mine), control, "outputs", path, error);
}

/// A field of /proc/self/status in bytes: "VmHWM:" (the peak resident
/// memory) or "VmRSS:" (the current one).
uint64_t statusBytes(const char *field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  size_t length = std::strlen(field);
  while (std::getline(status, line))
    if (line.compare(0, length, field) == 0)
      return std::strtoull(line.c_str() + length, nullptr, 10) * 1024;
  return 0;
}

/// Resident pages backed by files (code, mapped data) or shared memory.
uint64_t fileAndSharedBytes() {
  return statusBytes("RssFile:") + statusBytes("RssShmem:");
}

/// Lowers the kernel's peak resident size (VmHWM) to the current one, so
/// that the peak at the end is the peak since now; false where the kernel
/// does not allow it (Linux < 4.0).
bool resetPeakResident() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

/// Loads the rank's library (and with it OpenBLAS and OpenMP) and runs one
/// OpenBLAS GEMM, so that their code, start-up and work buffers, which no
/// memory analysis models, land in the baseline the summary measures
/// against instead of in the program's memory. The library stays loaded:
/// RankProgram::load opens the same copy.
void warmUp(const Manifest &manifest) {
  std::string library = manifest.library;
  if (library.empty() || library[0] != '/')
    library = manifest.directory + "/" + library;
  void *handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return; // RankProgram::load reports it.
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
  auto sgemm = reinterpret_cast<Sgemm>(dlsym(handle, "cblas_sgemm"));
  if (!sgemm)
    return;
  // Row-major, no transposes (CBLAS's 101 and 111); large enough for
  // OpenBLAS to pack full blocks.
  const int n = 512;
  std::vector<float> a(n * n, 1.0f), b(n * n, 1.0f), c(n * n, 0.0f);
  sgemm(101, 111, 111, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(),
        n);
}

/// What the step buffers hold at the action where most of their bytes are
/// live (by the manifest reader's own walk of the action list), by kind:
/// what the summary sets against mpmd-memory's categories.
std::string stepPeakParts(const Manifest &m) {
  const std::vector<PlanBufferInfo> &buffers = m.memory.buffers;
  int64_t end = static_cast<int64_t>(m.actions.size()), at = 0;
  uint64_t most = 0;
  for (int64_t a = 0; a <= end; ++a) {
    uint64_t live = 0;
    for (const PlanBufferInfo &b : buffers)
      if (b.usedFirst <= a && a <= b.usedLast)
        live += b.bytes;
    if (live > most) {
      most = live;
      at = a;
    }
  }
  uint64_t updated = 0, sums = 0, scratch = 0, slots = 0;
  for (const PlanBufferInfo &b : buffers) {
    if (b.usedFirst > at || at > b.usedLast)
      continue;
    if (b.kind == PlanBufferKind::Accumulator) {
      sums += b.bytes;
    } else if (b.kind == PlanBufferKind::Scratch) {
      scratch += b.bytes;
    } else {
      // A received slot's fragment runs on another rank.
      int64_t f = m.findFragment(b.slot.fragment);
      bool update = f >= 0 && m.fragments[f].results[b.slot.result].update;
      (update ? updated : slots) += b.bytes;
    }
  }
  std::string where = "the end of the step";
  if (at < end) {
    const ActionInfo &a = m.actions[at];
    where = "actions[" + std::to_string(at) + "]" +
            (a.op == ActionKind::Run ? " (run " + a.fragment + ")" : "");
  }
  const double MiB = 1048576.0;
  char text[256];
  std::snprintf(text, sizeof text,
                "; step buffers at most %.2f at %s: new parameter and "
                "optimizer values %.2f, gradient sums %.2f, scratch %.2f, "
                "other slots %.2f",
                most / MiB, where.c_str(), updated / MiB, sums / MiB,
                scratch / MiB, slots / MiB);
  return text;
}

/// The status file the launcher reads after a failed job (Launch.h).
class Status {
public:
  /// `rank` -1: a thread's rank, which writes nothing.
  explicit Status(int64_t rank) {
    const char *dir = std::getenv(kStatusDirVariable);
    if (rank < 0 || !dir || !*dir)
      return;
    folder = dir;
    std::string base = folder + "/rank" + std::to_string(rank);
    fd = open(base.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    stoppedPath = base + ".stopped";
    // mpirun stops the surviving ranks with SIGTERM when one dies; the one
    // that died never gets to say it was stopped.
    current = this;
    signal(SIGTERM, [](int) {
      if (current && !current->stoppedPath.empty()) {
        int marker = open(current->stoppedPath.c_str(),
                          O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (marker >= 0)
          close(marker);
      }
      _exit(143);
    });
  }
  ~Status() {
    if (fd >= 0)
      close(fd);
  }
  void set(const std::string &text) {
    if (fd < 0)
      return;
    if (ftruncate(fd, 0) == 0 && pwrite(fd, text.data(), text.size(), 0)) {
    }
  }

  /// A file of the launcher's status folder besides the ranks' own
  /// (`steps`: the run's first and end step, for restarts).
  void note(const std::string &name, const std::string &text) {
    if (folder.empty())
      return;
    std::ofstream out(folder + "/" + name);
    out << text;
  }

private:
  static inline Status *current = nullptr;
  int fd = -1;
  std::string folder, stoppedPath;
};

/// The fault tests' way to lose a process, stop it or corrupt it mid-run:
/// TANDEM_RUN_KILL is a comma-separated list of [ATTEMPT@]RANK:STEP[:WHAT],
/// each acting on rank RANK as it starts step STEP in the job's attempt
/// ATTEMPT (default 0; --restart-on-failure counts them, Launch.h). WHAT is
/// KILL (SIGKILL, the default), STOP (SIGSTOP: a silent peer), TERM or USR1
/// (the signal a scheduler sends before preempting), or NAN (every
/// element of the rank's first f32 parameter becomes NaN). Returns WHAT for
/// this rank and step, or empty.
std::string injectedFault(int64_t rank, uint64_t step) {
  const char *spec = std::getenv("TANDEM_RUN_KILL");
  if (!spec)
    return "";
  const char *attemptText = std::getenv(kAttemptVariable);
  unsigned long long attempt =
      attemptText ? std::strtoull(attemptText, nullptr, 10) : 0;
  std::string list = spec;
  for (size_t at = 0; at <= list.size();) {
    size_t comma = std::min(list.find(',', at), list.size());
    std::string item = list.substr(at, comma - at);
    at = comma + 1;
    unsigned long long a = 0, r = 0, s = 0;
    char what[16] = "KILL";
    int used = 0;
    if (std::sscanf(item.c_str(), "%llu@%n", &a, &used) != 1 || !used)
      a = 0, used = 0;
    int fields =
        std::sscanf(item.c_str() + used, "%llu:%llu:%15s", &r, &s, what);
    if (fields >= 2 && a == attempt &&
        r == static_cast<unsigned long long>(rank) && s == step)
      return what;
  }
  return "";
}

/// Makes every element of the rank's first f32 parameter NaN (the fault
/// tests' corrupted weight).
bool poisonParameter(RankProgram &program, std::string &error) {
  for (const ParameterInfo &p : program.manifest().parameters) {
    if (p.dtype != ElementType::F32 || p.bytes < sizeof(float))
      continue;
    std::vector<float> nan(p.bytes / sizeof(float), std::nanf(""));
    return program.setParameter(p.name, nan.data(), p.bytes, error);
  }
  error = "TANDEM_RUN_KILL: NAN needs an f32 parameter on the rank";
  return false;
}

/// The signal that asked the job to stop after its current step (SIGUSR1,
/// or SIGTERM where no tandem-run launcher uses SIGTERM to stop a rank),
/// or 0.
volatile sig_atomic_t stopSignal = 0;

void onStopSignal(int received) {
  // A second SIGTERM does not wait for the step.
  if (stopSignal && received == SIGTERM) {
    signal(SIGTERM, SIG_DFL);
    raise(SIGTERM);
  }
  stopSignal = received;
}

/// The held-out evaluation: the forward-only program of DIR/eval on the
/// held-out tail, with the training program's current parameters.
class HeldOut {
public:
  /// Loads DIR/eval/rank<r>.json; fails when it is missing (compile with
  /// tandemc --target cpu, which writes it) or cannot take the data.
  static std::unique_ptr<HeldOut>
  create(const Options &o, int rank, uint64_t seed, data::TokenStream tokens,
         const data::ArrayData *arrays, Device &device, std::string &error) {
    std::string path = o.dir + "/eval/rank" + std::to_string(rank) + ".json";
    // On the training program's device: it reads that program's parameters
    // where they are.
    RankProgramOptions options = RankProgramOptions::fromEnvironment();
    options.device = &device;
    std::unique_ptr<RankProgram> program =
        RankProgram::load(path, options, error);
    if (!program) {
      error += " (--eval-every needs the forward-only program tandemc "
               "--target cpu writes to DIR/eval)";
      return nullptr;
    }
    StepInputOptions inputOptions;
    inputOptions.seed = seed;
    inputOptions.heldOutFraction = o.heldOutFraction;
    inputOptions.dataName = o.data;
    inputOptions.heldOut = true;
    inputOptions.holdOut = true;
    std::optional<StepInputs> inputs =
        arrays ? StepInputs::create(program->manifest().inputs, *arrays,
                                    inputOptions, error)
               : StepInputs::create(program->manifest().inputs, tokens,
                                    inputOptions, error);
    if (!inputs)
      return nullptr;
    std::unique_ptr<HeldOut> result(new HeldOut);
    result->program = std::move(program);
    result->inputs = std::move(*inputs);
    return result;
  }

  /// The mean loss over batches 0..batches-1 (on the rank holding it; 0
  /// elsewhere).
  bool run(const RankProgram &train, uint64_t batches, Transport &transport,
           const std::function<void()> &beginStep, double &mean,
           std::string &error) {
    for (const ParameterInfo &p : program->manifest().parameters) {
      const Buffer *value = train.parameter(p.name);
      if (!value) {
        error = "the eval program reads parameter '" + p.name +
                "', which the training program's rank does not hold "
                "(compiled with another partition?)";
        return false;
      }
      // Read where the training program keeps it: no copy per evaluation.
      if (!program->shareParameter(p.name, value->data(), value->size(), error))
        return false;
    }
    double sum = 0;
    for (uint64_t k = 0; k < batches; ++k) {
      if (beginStep)
        beginStep();
      StepResult result;
      if (!program->runStep(inputs->get(k), transport, result, error))
        return false;
      if (std::optional<double> loss =
              lossOutput(program->manifest(), result.outputs))
        sum += *loss;
    }
    mean = sum / static_cast<double>(batches);
    return true;
  }

private:
  HeldOut() = default;
  std::unique_ptr<RankProgram> program;
  std::optional<StepInputs> inputs;
};

/// Whether every pair of ranks sends and receives in one order, in the
/// training program and, when held-out losses are asked for, the eval
/// program (NCCL pairs messages in issue order: TransferOrder.h).
bool checkTransferOrders(const Options &o, int64_t size, std::string &error) {
  std::vector<std::string> folders = {o.dir};
  if (o.evalEvery > 0)
    folders.push_back(o.dir + "/eval");
  for (const std::string &folder : folders) {
    std::vector<Manifest> manifests;
    for (int64_t r = 0; r < size; ++r) {
      std::optional<Manifest> m =
          readManifest(folder + "/rank" + std::to_string(r) + ".json", error);
      if (!m)
        return false;
      manifests.push_back(std::move(*m));
    }
    if (!transferOrdersAgree(manifests, error)) {
      error = folder + ": " + error;
      return false;
    }
  }
  return true;
}

/// TANDEM_NCCL_SHARE_GPU=1: the experiment of ranks in processes of their
/// own sharing a GPU over NCCL (docs/runtime.md, "NCCL"), which NCCL does
/// not support: ranks past the host's GPU count wrap around, and each
/// process presents a host of its own to NCCL (NCCL_HOSTID), so that NCCL
/// treats the ranks as remote peers (over sockets, NCCL_SOCKET_IFNAME=lo)
/// instead of refusing two ranks on one device.
bool ncclSharesGpus(const Options &o, bool ownProcess) {
  const char *value = std::getenv("TANDEM_NCCL_SHARE_GPU");
  return ownProcess && o.transport == "nccl" && value &&
         std::string(value) == "1";
}

/// The NCCL communicator of the job's ranks: rank 0 makes the unique id
/// and the control plane hands it to every rank, then each joins on its
/// GPU (ranks as threads: each on its own thread, on the GPU they share);
/// nullptr with `error`. With `watchPeers` the transport asks the control
/// plane whether a peer's process has ended while it waits, from the
/// communicator's forming on (RankEnvironment::watchPeers).
std::unique_ptr<NcclTransport> joinNccl(const Options &o, ControlPlane &control,
                                        Device &device, bool watchPeers,
                                        std::string &error) {
  int64_t rank = control.rank(), size = control.size();
  // Rank 0 compares every pair's orders (the manifests are the same files
  // for all); a failure ends the job before anyone waits on NCCL.
  if (rank == 0 && !checkTransferOrders(o, size, error))
    return nullptr;
  // Set before NCCL is loaded, so no NCCL thread reads the environment
  // while it changes (NCCL reads NCCL_HOSTID once, at the first
  // communicator's start).
  if (ncclSharesGpus(o, control.ranksAreProcesses())) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    std::string hostId =
        std::string(host) + "-tandem-rank" + std::to_string(rank);
    setenv("NCCL_HOSTID", hostId.c_str(), 1);
    // The "hosts" meet over loopback sockets; a setting of the user's
    // stands.
    setenv("NCCL_SOCKET_IFNAME", "lo", 0);
    setenv("NCCL_IB_DISABLE", "1", 0);
    std::fprintf(
        stderr,
        "tandem-run: rank %lld: NCCL_HOSTID=%s (TANDEM_NCCL_SHARE_GPU: "
        "an experiment NCCL does not support)\n",
        static_cast<long long>(rank), hostId.c_str());
  }
  const NcclLibrary *nccl = NcclLibrary::open(error);
  if (!nccl)
    return nullptr;
  NcclUniqueId id = {};
  if (rank == 0) {
    if (int result = nccl->api().getUniqueId(&id)) {
      error = nccl->failure("ncclGetUniqueId", result);
      return nullptr;
    }
    std::fprintf(stderr, "tandem-run: transport NCCL %s ('%s')\n",
                 NcclLibrary::versionName(nccl->version()).c_str(),
                 nccl->library().c_str());
  }
  control.broadcast(id.internal, sizeof id.internal, 0);
  std::function<std::string()> peerCheck;
  if (watchPeers)
    peerCheck = [&control] { return control.peerEnded(); };
  return NcclTransport::create(*nccl, device, id, rank, size, o.timeout, error,
                               std::move(peerCheck));
}

} // namespace

std::shared_ptr<const data::ArrayData>
tandem::run::readArrays(const Options &o, int64_t ranks, std::string &error) {
  std::vector<InputInfo> inputs;
  for (int64_t r = 0; r < ranks; ++r) {
    std::optional<Manifest> m =
        readManifest(o.dir + "/rank" + std::to_string(r) + ".json", error);
    if (!m)
      return nullptr;
    inputs.insert(inputs.end(), m->inputs.begin(), m->inputs.end());
  }
  std::optional<data::ArrayData> arrays =
      data::ArrayData::read(o.arrays, arrayInputsOf(inputs), error);
  if (!arrays)
    return nullptr;
  if (o.evalEvery > 0 &&
      !data::splitArrays(*arrays, /*holdOut=*/true, o.heldOutFraction, error))
    return nullptr;
  return std::make_shared<const data::ArrayData>(std::move(*arrays));
}

void tandem::run::catchStopSignals() {
  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGUSR1, &action, nullptr);
  if (!std::getenv(kStatusDirVariable))
    sigaction(SIGTERM, &action, nullptr);
}

int tandem::run::runRank(const Options &o, RankEnvironment &env) {
  ControlPlane &control = env.control;
  const int64_t rank = control.rank(), size = control.size();
  // A process of its own: the launcher reads its status after a failure,
  // and the process's memory is the rank's.
  const bool ownProcess = control.ranksAreProcesses();
  Status status(ownProcess ? rank : -1);
  status.set("starting");
  // Stopping after a step with a checkpoint (docs/runtime.md,
  // "Preemption"): SIGUSR1 always; SIGTERM too unless tandem-run's own
  // launcher started this rank, which stops ranks with SIGTERM.
  const bool launchedByTandemRun =
      ownProcess && std::getenv(kStatusDirVariable);
  catchStopSignals();
  std::string prefix = "rank " + std::to_string(rank) + ": ";
  // "step K" while one runs: a failure there may be retried
  // (--restart-on-failure), one before the first step is not.
  std::string currentStep;
  // Set for failures no retry can fix (a non-finite loss): "fatal ...".
  std::string fatalStatus;
  // What the launcher reads of a rank that failed (Launch.cpp, Outcome).
  auto failureStatus = [&]() -> std::string {
    if (!fatalStatus.empty())
      return fatalStatus;
    return currentStep.empty() ? "error" : "error during " + currentStep;
  };
  auto abortJob = [&](const std::string &message) -> int {
    status.set(failureStatus());
    control.abortJob(prefix + message);
    return 1; // Not reached: abortJob ends the job.
  };
  auto setContext = [&](const std::string &text) {
    if (env.setContext)
      env.setContext(text);
  };

  // The process count first: with too many processes, a rank's manifest
  // does not even exist.
  std::string error;
  std::optional<Manifest> first = readManifest(o.dir + "/rank0.json", error);
  if (!first)
    return abortJob(error);
  const GridInfo &grid = first->grid;
  if (grid.stages * grid.replicas != size)
    return abortJob("the job has " + std::to_string(size) +
                    " processes, but the program has " +
                    std::to_string(grid.stages * grid.replicas) +
                    " ranks (start one process per rank)");
  // The baseline of the summary's measured memory: the runtime, the
  // transport with its paths to every peer (MPIRank.cpp), the token data,
  // the rank's manifest, and the rank's library with OpenBLAS and OpenMP
  // warmed up; not yet the step buffers, parameters and optimizer state.
  // Only where the rank is a process of its own: threads share one
  // process's counts.
  std::string manifestPath = o.dir + "/rank" + std::to_string(rank) + ".json";
  // One copy of the data, which the training and held-out samplers share
  // (none with --inputs).
  data::TokenStream tokens = std::make_shared<const std::vector<int32_t>>();
  if (o.data.empty()) {
  } else if (std::optional<std::vector<int32_t>> read =
                 data::readTokens(o.data, error)) {
    tokens = std::make_shared<const std::vector<int32_t>>(std::move(*read));
  } else {
    return abortJob(error);
  }
  // --arrays: every rank's inputs from one file, checked against all ranks'
  // manifests so that every rank finds the same errors.
  std::shared_ptr<const data::ArrayData> arrays = env.arrays;
  if (!o.arrays.empty() && !arrays) {
    arrays = readArrays(o, size, error);
    if (!arrays)
      return abortJob(error);
  }
  uint64_t dataBytes =
      arrays ? arrays->bytes() : tokens->size() * sizeof(int32_t);
  std::optional<Manifest> manifest = readManifest(manifestPath, error);
  if (!manifest)
    return abortJob(error);
  warmUp(*manifest);
  // Hands the heap's free pages (the manifest's parse, the warm-ups'
  // vectors) back to the kernel: left resident, the program's allocations
  // would reuse them and the growth above the baseline would miss those
  // bytes.
  uint64_t baseline = 0, sharedAtBaseline = 0;
  bool peakSinceBaseline = false;
  if (ownProcess) {
    malloc_trim(0);
    baseline = statusBytes("VmRSS:");
    sharedAtBaseline = fileAndSharedBytes();
    peakSinceBaseline = resetPeakResident();
    resetBufferPeak();
  }
  std::unique_ptr<Device> ownDevice;
  Device *device = env.sharedDevice;
  if (device) {
  } else if (o.device == "cuda") {
    // One GPU per rank: the one its index on this host names.
    if (env.localRank < 0)
      return abortJob("--device cuda: the launcher (" + env.launcher +
                      ") does not say the rank's index on its host, which "
                      "picks its GPU");
    const CudaDriver *driver = CudaDriver::open(error);
    if (!driver)
      return abortJob("--device cuda: " + error);
    const bool share = ncclSharesGpus(o, ownProcess) && driver->deviceCount();
    if (env.localRank >= driver->deviceCount() && !share)
      return abortJob(
          "--device cuda: the rank is number " + std::to_string(env.localRank) +
          " on its host, which has " + std::to_string(driver->deviceCount()) +
          (driver->deviceCount() == 1 ? " GPU" : " GPUs") +
          ": place at most one rank per GPU (--ranks-per-host)");
    ownDevice = openCudaDevice(
        *driver, share ? env.localRank % driver->deviceCount() : env.localRank,
        error);
    if (!ownDevice)
      return abortJob("--device cuda: " + error);
    device = ownDevice.get();
  } else {
    ownDevice = makeHostDevice();
    device = ownDevice.get();
  }
  // Non-finite losses and gradients stop the run (--check-finite), unless
  // dynamic loss scaling is on, which skips such steps itself: any rank
  // holding the scale says so for all.
  bool scaled = false;
  for (const ParameterInfo &p : manifest->parameters)
    scaled |= p.name == kLossScaleParameter;
  scaled = control.maxOf(scaled) != 0;
  std::string checkFinite = o.checkFinite;
  // Checking every gradient sum reads them on the host between the
  // launches, which CUDA graphs leave no room for.
  if (checkFinite.empty())
    checkFinite = device->hostAddressable() && !o.cudaGraphs ? "all" : "loss";
  const bool checkLoss = !scaled && checkFinite != "off";
  RankProgramOptions loadOptions = RankProgramOptions::fromEnvironment();
  // A buffer freed mid-step (cuMemFree) may wait for the whole GPU, an
  // NCCL receive whose peer waits for this rank included: a hang no
  // --timeout ends.
  if (loadOptions.separateBuffers && o.transport == "nccl" &&
      !device->hostAddressable())
    return abortJob("TANDEM_SEPARATE_BUFFERS=1 frees buffers within the "
                    "step, which on a GPU may wait for NCCL transfers that "
                    "wait for this rank: use --transport inproc or MPI");
  loadOptions.device = device;
  loadOptions.checkGradients = !scaled && checkFinite == "all";
  loadOptions.cudaGraphs = o.cudaGraphs;
  std::unique_ptr<RankProgram> program =
      RankProgram::load(std::move(*manifest), loadOptions, error);
  if (!program)
    return abortJob(error);
  if (!program->initParameters(o.seed, error))
    return abortJob(error);
  if (!o.params.empty()) {
    std::optional<st::File> file = st::readFile(o.params, error);
    if (!file || !loadParameters(*program, *file, o.params, error))
      return abortJob(error);
  }
  uint64_t firstStep = o.firstStep, seed = o.seed;
  if (!o.resume.empty()) {
    // Every rank checks every rank's files, so all fall back alike.
    std::optional<CheckpointInfo> info =
        loadRankCheckpoint(o.resume, *program, error);
    if (!info)
      return abortJob("cannot resume: " + error);
    if (rank == 0 && !info->warning.empty())
      std::fprintf(stderr, "tandem-run: warning: %s\n", info->warning.c_str());
    if (rank == 0)
      std::printf("resuming from %s/%s (step %llu, seed %llu)\n",
                  o.resume.c_str(), checkpointName(info->step).c_str(),
                  static_cast<unsigned long long>(info->step),
                  static_cast<unsigned long long>(info->seed));
    firstStep = info->step;
    seed = info->seed;
  }
  // A restarted job (Launch.h) runs up to the first attempt's last step,
  // from wherever its checkpoint left it.
  uint64_t steps = o.steps;
  if (const char *end = std::getenv(kEndStepVariable)) {
    uint64_t endStep = std::strtoull(end, nullptr, 10);
    if (endStep <= firstStep)
      return abortJob("the restarted job resumes at step " +
                      std::to_string(firstStep) +
                      ", after the run's last step " + std::to_string(endStep));
    steps = endStep - firstStep;
  }
  if (rank == 0)
    status.note("steps", std::to_string(firstStep) + " " +
                             std::to_string(firstStep + steps));
  StepInputOptions inputOptions;
  inputOptions.seed = seed;
  inputOptions.heldOutFraction = o.heldOutFraction;
  inputOptions.dataName = o.data;
  inputOptions.holdOut = o.evalEvery > 0;
  // The step's inputs: batches of the token data or the arrays, or the
  // saved ones.
  std::optional<StepInputs> inputs;
  std::map<int64_t, Buffer> savedInputs;
  std::map<int64_t, const Buffer *> savedViews;
  if (arrays) {
    inputs = StepInputs::create(program->manifest().inputs, *arrays,
                                inputOptions, error);
    if (!inputs)
      return abortJob(error);
  } else if (o.inputs.empty()) {
    inputs = StepInputs::create(program->manifest().inputs, tokens,
                                inputOptions, error);
    if (!inputs)
      return abortJob(error);
  } else {
    if (!readSavedInputs(o.inputs, program->manifest().inputs, savedInputs,
                         error))
      return abortJob(error);
    for (auto &[index, buffer] : savedInputs)
      savedViews[index] = &buffer;
  }
  auto stepInputs =
      [&](uint64_t step) -> const std::map<int64_t, const Buffer *> & {
    return inputs ? inputs->get(step) : savedViews;
  };

  // The rank that produces the loss prints the progress lines; every rank
  // learns which one it is.
  bool hasLoss = false;
  for (const OutputInfo &out : program->manifest().outputs)
    hasLoss |= out.index == 0;
  int64_t lossRank = std::max<int64_t>(control.maxOf(hasLoss ? rank : -1), 0);
  int64_t allTokens = control.maxOf(inputs ? inputs->tokensPerStep() : 0);

  std::unique_ptr<HeldOut> heldOut;
  if (o.evalEvery > 0) {
    heldOut =
        HeldOut::create(o, rank, seed, tokens, arrays.get(), *device, error);
    if (!heldOut)
      return abortJob(error);
  }

  // Point-to-point traffic over the environment's transport (MPI, or in
  // process), or over NCCL with the control plane handing out its id.
  std::unique_ptr<NcclTransport> nccl;
  if (o.transport == "nccl") {
    nccl = joinNccl(o, control, *device, env.watchPeers, error);
    if (!nccl)
      return abortJob("--transport nccl: " + error);
  } else if (!env.transport) {
    return abortJob("no transport for --transport " + o.transport);
  }
  Transport &transport =
      nccl ? static_cast<Transport &>(*nccl) : *env.transport;
  std::optional<double> firstHeldOut, lastHeldOut;
  auto evaluate = [&](uint64_t step) {
    setContext("held-out loss at step " + std::to_string(step) + ": ");
    double mean = 0;
    if (!heldOut->run(*program, o.evalBatches, transport, env.beginStep, mean,
                      error))
      return false;
    if (rank == lossRank) {
      std::printf("held-out loss at step %llu: %.6f\n",
                  static_cast<unsigned long long>(step), mean);
      std::fflush(stdout);
      if (!firstHeldOut)
        firstHeldOut = mean;
      lastHeldOut = mean;
    }
    return true;
  };
  StepTimer timer(transport, program->manifest(),
                  program->transferWaitPoints(transport.postedOpsMoveAlone()));
  // On a GPU the host's clock times the issue of work: the trace adds the
  // device's own spans.
  if (!o.trace.empty())
    program->traceDevice();
  timer.beforeAbort = [&] { status.set(failureStatus()); };
  double stepSum = 0, waitSum = 0;
  std::map<int64_t, std::shared_ptr<Buffer>> lastOutputs;
  control.barrier();
  if (heldOut && !evaluate(firstStep))
    return abortJob(error);
  // Set once the ranks agreed to stop early on a signal: the step after
  // the last one run.
  std::optional<uint64_t> stoppedAt;
  for (uint64_t step = firstStep; step < firstStep + steps; ++step) {
    currentStep = "step " + std::to_string(step);
    status.set(currentStep);
    std::string fault = injectedFault(rank, step);
    if (fault == "KILL" || fault == "STOP" || fault == "TERM" ||
        fault == "USR1")
      raise(fault == "KILL"   ? SIGKILL
            : fault == "STOP" ? SIGSTOP
            : fault == "TERM" ? SIGTERM
                              : SIGUSR1);
    if (fault == "NAN" && !poisonParameter(*program, error))
      return abortJob(error);
    StepResult result;
    setContext(currentStep + ": ");
    if (env.beginStep)
      env.beginStep();
    timer.beginStep(step);
    if (!program->runStep(stepInputs(step), timer, result, error))
      // The program's errors name this rank first, as abortJob does: once
      // is enough ("rank 0: step 3: run s0.fwd ..."). Another rank's
      // failure seen here keeps its name.
      return abortJob(
          currentStep + ": " +
          (error.rfind(prefix, 0) == 0 ? error.substr(prefix.size()) : error));
    timer.endStep();
    timer.addDeviceSpans(program->deviceSpans());
    std::optional<double> lossValue =
        rank == lossRank ? lossOutput(program->manifest(), result.outputs)
                         : std::nullopt;
    const bool hasLossValue = lossValue.has_value();
    const double loss = hasLossValue ? *lossValue : std::nan("");
    // One agreement per step, before anything is kept: 2 when a rank saw
    // a non-finite loss or gradient, 1 when a rank was asked to stop.
    std::string nonFinite;
    if (checkLoss && hasLossValue && !std::isfinite(loss))
      nonFinite = std::string("the loss is ") + (std::isnan(loss) ? "NaN"
                                                 : loss > 0       ? "+Inf"
                                                                  : "-Inf");
    if (!result.nonFinite.empty())
      nonFinite += (nonFinite.empty() ? "" : "; ") + std::string("rank ") +
                   std::to_string(rank) + ": " + result.nonFinite;
    int64_t verdict = control.maxOf(!nonFinite.empty() ? 2
                                    : stopSignal       ? 1
                                                       : 0);
    if (verdict == 2) {
      std::vector<std::string> found = control.gather(nonFinite, lossRank);
      fatalStatus = "fatal during " + currentStep;
      status.set(fatalStatus);
      if (rank != lossRank)
        control.barrier(); // Ended by the loss rank's abortJob.
      // The loss first (the loss rank's finding), then by rank.
      std::string all = found[lossRank];
      for (size_t r = 0; r < found.size(); ++r)
        if (static_cast<int64_t>(r) != lossRank && !found[r].empty())
          all += (all.empty() ? "" : "; ") + found[r];
      return abortJob(currentStep + ": " + all +
                      "; stopped without saving this step (--check-finite "
                      "off runs on; dynamic loss scaling skips such steps)");
    }
    if (!program->applyUpdates(result, error))
      return abortJob(currentStep + ": " + error);
    if (!o.saveOutputs.empty())
      lastOutputs = result.outputs;
    bool last = step + 1 == firstStep + steps;
    bool stopping = verdict == 1 && !last;
    bool checkpointNow = o.ckptEvery > 0 && (step + 1) % o.ckptEvery == 0;
    if (checkpointNow || (stopping && !o.ckptDir.empty())) {
      // Each rank writes its part; the checkpoint becomes current only
      // once rank 0 has seen every part.
      CheckpointInfo info;
      info.step = info.dataPosition = step + 1;
      info.seed = seed;
      if (!writeRankCheckpoint(o.ckptDir, step + 1, *program, info, error))
        return abortJob(currentStep + ": " + error);
      control.barrier();
      if (rank == 0 && !commitCheckpoint(o.ckptDir, step + 1, size, error,
                                         static_cast<int64_t>(o.ckptKeep)))
        return abortJob(currentStep + ": " + error);
      // Nobody reports the job stopped before the checkpoint is current.
      control.barrier();
    }
    stepSum += timer.stepSeconds();
    waitSum += timer.waitSeconds();
    char bubble[32];
    std::snprintf(bubble, sizeof bubble, " %.2f", timer.bubble());
    std::vector<std::string> bubbles = control.gather(bubble, lossRank);
    bool evalNow =
        heldOut && ((step + 1 - firstStep) % o.evalEvery == 0 || last);
    std::string perRank;
    for (const std::string &b : bubbles)
      perRank += b;
    if (rank == lossRank) {
      std::printf("step %llu loss %.9g time %.4f s tokens/s %.0f bubble%s\n",
                  static_cast<unsigned long long>(step), loss,
                  timer.stepSeconds(), allTokens / timer.stepSeconds(),
                  perRank.c_str());
      std::fflush(stdout);
    }
    if (stopping) {
      stoppedAt = step + 1;
      break;
    }
    if (evalNow && !evaluate(step + 1))
      return abortJob(error);
  }
  currentStep.clear();
  // Past the last transfer. A rank that finishes first ends its process,
  // which the others' watch must not take for a death while they still
  // wait for NCCL: all pass here first, and the watch ends (the
  // communicator's finalizing needs none).
  if (nccl && env.watchPeers) {
    control.barrier();
    nccl->watchPeers(nullptr);
  }
  if (stoppedAt) {
    // Asked to stop (docs/runtime.md, "Preemption"): the step's checkpoint
    // is committed; nothing else is written.
    status.set("preempted after step " + std::to_string(*stoppedAt - 1));
    if (rank == lossRank) {
      const char *name = stopSignal == SIGTERM ? "SIGTERM" : "SIGUSR1";
      if (o.ckptDir.empty())
        std::printf("stopped by %s after step %llu: no --ckpt-dir, nothing "
                    "was saved\n",
                    name, static_cast<unsigned long long>(*stoppedAt - 1));
      else
        std::printf("stopped by %s after step %llu: checkpoint %s/%s "
                    "written; continue with --resume %s\n",
                    name, static_cast<unsigned long long>(*stoppedAt - 1),
                    o.ckptDir.c_str(), checkpointName(*stoppedAt).c_str(),
                    o.ckptDir.c_str());
      std::fflush(stdout);
    }
    nccl.reset();
    return launchedByTandemRun ? 0 : kPreemptedStatus;
  }
  status.set("finishing");
  // The training's peak memory, before --save-params gathers every rank's
  // parameters on rank 0.
  uint64_t peak = statusBytes("VmHWM:");
  uint64_t sharedNow = fileAndSharedBytes();
  uint64_t sharedGrowth =
      sharedNow > sharedAtBaseline ? sharedNow - sharedAtBaseline : 0;
  // The runtime's buffers: host memory, and the device's own allocations
  // off the host.
  uint64_t buffers = bufferBytes().peak;
  if (device->kind() != DeviceKind::Host)
    buffers += device->peakBytes();
  // And the device's own count (a GPU's: its context, cuBLASLt's and
  // NCCL's memory too), at its most after a step.
  std::optional<uint64_t> devicePeak = device->sampleDriverPeak();

  if (!o.saveParams.empty() &&
      !saveParameters(*program, control, o.saveParams, error))
    return abortJob(error);
  if (!o.saveOutputs.empty() && !saveOutputs(program->manifest(), lastOutputs,
                                             control, o.saveOutputs, error))
    return abortJob(error);

  // The summary: each rank's mean bubble and busy time, and its peak memory
  // as the kernel saw it next to what the compiled plan accounts for (the
  // step buffers plus the parameters and optimizer state).
  uint64_t parameterBytes = 0;
  for (const ParameterInfo &p : program->manifest().parameters)
    parameterBytes += p.bytes;
  // Pages of code and shared memory first touched after the baseline (the
  // library's functions, MPI's shared-memory queues) are resident but not
  // memory the program allocates: the growth counts private memory only.
  uint64_t growth =
      peak > baseline + sharedGrowth ? peak - baseline - sharedGrowth : 0;
  const double MiB = 1048576.0;
  char resident[96] = "";
  if (ownProcess)
    std::snprintf(resident, sizeof resident,
                  " peak resident %.1f MiB (%.1f MiB above the baseline),",
                  peak / MiB, growth / MiB);
  char line[512];
  std::snprintf(line, sizeof line,
                "rank %lld (stage %lld): mean step %.4f s, bubble %.3f,%s "
                "planned %.1f MiB (step buffers %.1f%s, parameters and "
                "optimizer state %.1f)",
                static_cast<long long>(rank),
                static_cast<long long>(program->manifest().grid.stage),
                stepSum / steps, stepSum > 0 ? waitSum / stepSum : 0.0,
                resident, (program->stepBufferBytes() + parameterBytes) / MiB,
                program->stepBufferBytes() / MiB,
                program->usesSeparateBuffers() ? " separate at most" : " arena",
                parameterBytes / MiB);
  // The rank that prints the step lines prints the summary too: mpirun
  // forwards each rank's output separately, so lines from two ranks can
  // reach the terminal in any order, whatever each flushed when.
  std::vector<std::string> lines = control.gather(line, lossRank);
  // What the transport moved, per peer: payload bytes of completed sends
  // and receives over the whole run (training and held-out steps).
  std::string traffic = "rank " + std::to_string(rank) + ":";
  for (int64_t peer = 0; peer < size; ++peer) {
    PeerBytes moved = transport.bytesWith(rank, peer);
    if (peer == rank || (!moved.sent && !moved.received))
      continue;
    traffic += " sent " + std::to_string(moved.sent) + " to rank " +
               std::to_string(peer) + ", received " +
               std::to_string(moved.received) + " from rank " +
               std::to_string(peer) + ";";
  }
  if (traffic.back() == ':')
    traffic += " nothing";
  else
    traffic.pop_back();
  std::vector<std::string> trafficLines = control.gather(traffic, lossRank);
  // Measured against predicted: the growth of the peak resident size above
  // the baseline, and the most bytes of runtime buffers allocated at once
  // (the runtime's own count), each over mpmd-memory's peak.
  std::string memory;
  {
    const std::optional<PredictedMemoryInfo> &predicted =
        program->manifest().predictedMemory;
    auto ratio = [&](uint64_t measured) {
      if (!predicted || !predicted->peakBytes)
        return std::string();
      char text[32];
      std::snprintf(text, sizeof text, " (ratio %.3f)",
                    static_cast<double>(measured) / predicted->peakBytes);
      return std::string(text);
    };
    char text[640];
    if (predicted)
      std::snprintf(
          text, sizeof text,
          "rank %lld: predicted %.2f (parameters %.2f, optimizer state %.2f, "
          "copies %.2f, gradients %.2f, stash %.2f, temporaries %.2f), ",
          static_cast<long long>(rank), predicted->peakBytes / MiB,
          predicted->parameters / MiB, predicted->optimizerState / MiB,
          predicted->parameterCopies / MiB, predicted->gradients / MiB,
          predicted->stash / MiB, predicted->temporaries / MiB);
    else
      std::snprintf(text, sizeof text,
                    "rank %lld: predicted none (a manifest without "
                    "predicted_memory: recompile with tandemc), ",
                    static_cast<long long>(rank));
    memory = text;
    std::snprintf(text, sizeof text,
                  "plan %.2f (%s %.2f + parameters and optimizer state %.2f)",
                  (program->stepBufferBytes() + parameterBytes) / MiB,
                  program->usesSeparateBuffers() ? "separate buffers at most"
                                                 : "arena",
                  program->stepBufferBytes() / MiB, parameterBytes / MiB);
    memory += text;
    if (ownProcess) {
      std::snprintf(text, sizeof text, ", buffers %.2f", buffers / MiB);
      memory += text + ratio(buffers);
      std::snprintf(text, sizeof text, ", measured %.2f%s", growth / MiB,
                    peakSinceBaseline ? "" : " (peak since start-up)");
      memory += text + ratio(growth);
      if (devicePeak) {
        std::snprintf(text, sizeof text, ", device %.2f", *devicePeak / MiB);
        memory += text;
      }
    } else {
      memory += ", buffers and measured: not per rank (the ranks share one "
                "process)";
    }
    memory += stepPeakParts(program->manifest());
  }
  std::vector<std::string> memoryLines = control.gather(memory, lossRank);
  if (rank == lossRank && firstHeldOut)
    std::printf("held-out loss %.6f at step %llu -> %.6f at step %llu: "
                "relative drop %.2f%%\n",
                *firstHeldOut, static_cast<unsigned long long>(firstStep),
                *lastHeldOut,
                static_cast<unsigned long long>(firstStep + steps),
                100.0 * (*firstHeldOut - *lastHeldOut) / *firstHeldOut);
  if (rank == lossRank) {
    std::printf("summary: %llu steps on %lld %s\n",
                static_cast<unsigned long long>(steps),
                static_cast<long long>(size),
                ownProcess ? "processes" : "threads of one process");
    for (const std::string &text : lines)
      std::printf("  %s\n", text.c_str());
    std::printf("payload bytes per rank and peer (the transport's count):\n");
    for (const std::string &text : trafficLines)
      std::printf("  %s\n", text.c_str());
    if (ownProcess)
      std::printf("memory per rank, MiB (predicted: mpmd-memory's peak; "
                  "plan: the manifest's; buffers: the most bytes of runtime "
                  "buffers allocated at once; measured: the peak resident "
                  "size above the baseline after MPI, the %s (%.2f "
                  "MiB), the manifest, the library and an OpenBLAS warm-up, "
                  "less code and shared-memory pages first touched since%s):\n",
                  arrays ? "arrays" : "token data", dataBytes / MiB,
                  devicePeak ? "; device: the GPU's memory in use at most "
                               "after a step, the driver's count (its "
                               "context, cuBLASLt and NCCL included)"
                             : "");
    else
      std::printf("memory per rank, MiB (predicted: mpmd-memory's peak; "
                  "plan: the manifest's):\n");
    for (const std::string &text : memoryLines)
      std::printf("  %s\n", text.c_str());
    if (!ownProcess && devicePeak)
      std::printf("device %s: %.2f MiB in use at most after a step (the "
                  "driver's count, every rank on it)\n",
                  device->describe().c_str(), *devicePeak / MiB);
    std::fflush(stdout);
  }

  if (!o.trace.empty()) {
    std::vector<std::string> events =
        control.gather(timer.eventsJson(rank), lossRank);
    if (rank == lossRank) {
      std::ofstream out(o.trace);
      out << "{\"traceEvents\":[\n";
      bool firstEvent = true;
      for (int64_t r = 0; r < size; ++r) {
        out << (firstEvent ? "" : ",\n")
            << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << r
            << ",\"args\":{\"name\":\"rank " << r << "\"}}";
        for (int64_t track = 0; track < StepTimer::kTracks; ++track)
          out << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << r
              << ",\"tid\":" << track << ",\"args\":{\"name\":\""
              << StepTimer::trackName(track) << "\"}}";
        firstEvent = false;
        if (!events[r].empty())
          out << ",\n" << events[r];
      }
      out << "\n]}\n";
      if (!out)
        return abortJob("cannot write the trace '" + o.trace + "'");
      std::printf("trace: %s\n", o.trace.c_str());
    }
  }
  // The communicator goes before the device (and MPI).
  nccl.reset();
  status.set("done");
  return 0;
}
