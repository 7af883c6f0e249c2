//===- Options.h - tandem-run's command line --------------------*- C++ -*-===//

#ifndef TANDEM_TOOLS_TANDEM_RUN_OPTIONS_H
#define TANDEM_TOOLS_TANDEM_RUN_OPTIONS_H

#include <cstdint>
#include <string>
#include <vector>

namespace tandem::run {

struct Options {
  std::string dir, data, params, saveParams, trace, mpirun = "mpirun";
  /// One step on saved step inputs (`input.<i>`, tandem-eval
  /// --save-inputs) instead of --data; the last step's outputs to a file.
  std::string inputs, saveOutputs;
  /// Training on arrays instead of token data: `input.<i>` holds n step
  /// batches of every step input, read in file order (docs/runtime.md,
  /// "Arrays").
  std::string arrays;
  /// Checkpoints: where to write them and how often, where to resume from.
  std::string ckptDir, resume;
  uint64_t ckptEvery = 0, ckptKeep = 2;
  /// Held-out loss every `evalEvery` steps (0: never) over `evalBatches`
  /// batches of the eval program in DIR/eval (tandemc --target cpu).
  uint64_t evalEvery = 0, evalBatches = 4;
  uint64_t seed = 0, steps = 1, firstStep = 0, threads = 1;
  bool firstStepGiven = false;
  double heldOutFraction = 0.1, timeout = 300.0;
  /// A propagation delay on every link, in milliseconds (MPI transport):
  /// the receiver holds each message until its send time plus the delay.
  double linkDelayMs = 0.0;
  bool printCommand = false;
  /// Capture a GPU library's step as a CUDA graph (RankProgramOptions).
  bool cudaGraphs = false;
  /// What a non-finite value stops: "all" (the loss and every gradient
  /// sum), "loss", or "off"; empty: "all" where the host can read the
  /// device's memory, else "loss" (docs/runtime.md, "Non-finite values").
  std::string checkFinite;
  /// Restart a failed job from its latest checkpoint up to this many times
  /// (Launch.h).
  uint64_t restarts = 0;
  /// Where each rank's memory lives: "host" (--device cpu), or "cuda" (the
  /// GPU its local rank names, docs/runtime.md, "Devices"), or with ranks
  /// as threads "cuda:N" (GPU N for every rank; "cuda" is GPU 0).
  std::string device = "host";
  /// How ranks exchange activations and gradients: "mpi", "nccl" (GPU
  /// memory; docs/runtime.md, "NCCL"), or "inproc" (the in-process
  /// transport, ranks as threads of this process). The default is "mpi",
  /// or "inproc" with --launcher threads.
  std::string transport = "mpi";
  bool transportGiven = false;
  /// Where the ranks go (Hosts.h): `ranksPerHost` slots on each of `hosts`
  /// (empty: this machine), filled in order. 0: not given, and every rank
  /// runs here, oversubscribed.
  std::vector<std::string> hosts;
  uint64_t ranksPerHost = 0;
  /// Who starts the ranks when no launcher started this one: "mpirun",
  /// "local" (processes on this machine, no MPI, NCCL between them;
  /// Launch.h), or "threads" (every rank a thread of this process, over
  /// the in-process transport or one NCCL communicator; RankMain.h). The
  /// default is "threads" with --transport inproc, else mpirun where
  /// tandem-run was built with MPI, else local.
  std::string launcher;
  bool launcherGiven = false;
  /// --rendezvous HOST:PORT: ranks that srun or mpirun started meet rank 0
  /// there, over TCP, and exchange over NCCL (no MPI; SocketControlPlane.h).
  /// Empty when not given.
  std::string rendezvousHost, rendezvousPort;
  /// The arguments passed on to the ranks (all but the launch-only ones).
  std::vector<std::string> forwarded;
};

/// Parses argv; on an error returns false with `error` set. --help prints
/// the usage and exits.
bool parseOptions(int argc, char **argv, Options &options, std::string &error);

/// How the command line asked for ranks as threads (--launcher threads),
/// as errors name it: "--transport inproc" or "--launcher threads".
std::string threadsRequest(const Options &options);

/// Prints "tandem-run: error: MESSAGE" and returns 1.
int fail(const std::string &message);

} // namespace tandem::run

#endif // TANDEM_TOOLS_TANDEM_RUN_OPTIONS_H
