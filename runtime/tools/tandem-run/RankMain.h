//===- RankMain.h - one rank of a tandem-run job ----------------*- C++ -*-===//

#ifndef TANDEM_TOOLS_TANDEM_RUN_RANKMAIN_H
#define TANDEM_TOOLS_TANDEM_RUN_RANKMAIN_H

#include "Options.h"

#include "tandem/Runtime/ArrayData.h"
#include "tandem/Runtime/ControlPlane.h"
#include "tandem/Runtime/Device.h"
#include "tandem/Runtime/Launcher.h"
#include "tandem/Runtime/Transport.h"

#include <functional>

namespace tandem::run {

/// The exit status of a job that stopped early on SIGTERM or SIGUSR1 after
/// writing a checkpoint (docs/runtime.md, "Preemption"): EX_TEMPFAIL, the
/// job is to be continued. Ranks tandem-run's own launcher started exit
/// with 0 and leave the status to it.
constexpr int kPreemptedStatus = 75;

/// What the code that starts a rank (an MPI process, or a thread of
/// `runRanksInProcess`) gives it.
struct RankEnvironment {
  explicit RankEnvironment(runtime::ControlPlane &control) : control(control) {}
  runtime::ControlPlane &control;
  /// The rank's index among the job's ranks on its host, which picks its
  /// GPU under --device cuda (-1: unknown), and who said so.
  int64_t localRank = -1;
  std::string launcher;
  /// Ranks as threads: the device they all use (else each rank opens its
  /// own from --device).
  runtime::Device *sharedDevice = nullptr;
  /// The step transport unless --transport nccl (which the rank joins, as
  /// a process or as a thread).
  runtime::Transport *transport = nullptr;
  /// Called by every rank before each step of the training or held-out
  /// program (the in-process transport starts each step afresh).
  std::function<void()> beginStep;
  /// Ranks as threads with --arrays: the file, read once for all (else
  /// each rank reads it).
  std::shared_ptr<const data::ArrayData> arrays;
  /// Whether the NCCL transport ends a wait when the control plane sees a
  /// peer's process end (ControlPlane::peerEnded): for ranks no launcher
  /// of tandem-run's watches (--rendezvous).
  bool watchPeers = false;
  /// Text the transport puts before its abort messages ("step 3: ").
  std::function<void(const std::string &)> setContext;
};

/// From now on SIGUSR1, and SIGTERM unless tandem-run's launcher started
/// this process (it stops ranks with SIGTERM), ask the job to stop after
/// its current step (docs/runtime.md, "Preemption"). Called before a rank
/// process starts MPI, so that a signal during its start-up is kept.
void catchStopSignals();

/// The --arrays file, checked against the step inputs of all `ranks` ranks'
/// manifests and, with --eval-every, against the held-out split; null with
/// `error`.
std::shared_ptr<const data::ArrayData>
readArrays(const Options &options, int64_t ranks, std::string &error);

/// Loads, trains, reports. Returns the exit status; errors end the whole
/// job through the control plane.
int runRank(const Options &options, RankEnvironment &environment);

/// Every rank as a thread of this process (--launcher threads): one device
/// for all, a ThreadControlPlane, and the in-process transport
/// (--transport inproc) or one NCCL communicator with a rank per thread
/// (--transport nccl), which each rank joins on its own thread.
int runRanksInProcess(const Options &options);

/// As the rank `launch` names, an MPI process (MPI_Init to MPI_Finalize);
/// a tandem-run built without MPI says so.
int runMPIRank(const Options &options, const runtime::LaunchInfo &launch);

/// As the rank `launch` names, a process tandem-run --launcher local
/// started (Launch.h): the socket control plane, NCCL.
int runLocalRank(const Options &options, const runtime::LaunchInfo &launch);

/// As the rank `launch` names, a process srun or mpirun started, that meets
/// the others at --rendezvous (rank 0 listens there): the socket control
/// plane over TCP, NCCL.
int runRendezvousRank(const Options &options,
                      const runtime::LaunchInfo &launch);

} // namespace tandem::run

#endif // TANDEM_TOOLS_TANDEM_RUN_RANKMAIN_H
