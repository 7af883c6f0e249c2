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
  /// What a non-finite value stops: "all" (the loss and every gradient
  /// sum), "loss", or "off"; empty: "all" where the host can read the
  /// device's memory, else "loss" (docs/runtime.md, "Non-finite values").
  std::string checkFinite;
  /// Restart a failed job from its latest checkpoint up to this many times
  /// (Launch.h).
  uint64_t restarts = 0;
  /// Where each rank's memory lives: "host" (--device cpu), or "cuda" (the
  /// GPU its local rank names, docs/runtime.md, "Devices"), or with inproc
  /// "cuda:N" (GPU N for every rank).
  std::string device = "host";
  /// How ranks exchange activations and gradients: "mpi", "nccl" (GPU
  /// memory; docs/runtime.md, "NCCL"), both with MPI processes as ranks,
  /// or "inproc" (ranks as threads of this process, no MPI).
  std::string transport = "mpi";
  /// Where the ranks go (Hosts.h): `ranksPerHost` slots on each of `hosts`
  /// (empty: this machine), filled in order. 0: not given, and every rank
  /// runs here, oversubscribed.
  std::vector<std::string> hosts;
  uint64_t ranksPerHost = 0;
  /// Who starts the processes when no launcher started this one: "mpirun",
  /// or "local" (this machine, no MPI, NCCL between them; Launch.h). The
  /// default is mpirun where tandem-run was built with MPI.
  std::string launcher;
  bool launcherGiven = false;
  /// The arguments passed on to the ranks (all but the launch-only ones).
  std::vector<std::string> forwarded;
};

/// Parses argv; on an error returns false with `error` set. --help prints
/// the usage and exits.
bool parseOptions(int argc, char **argv, Options &options, std::string &error);

/// Prints "tandem-run: error: MESSAGE" and returns 1.
int fail(const std::string &message);

} // namespace tandem::run

#endif // TANDEM_TOOLS_TANDEM_RUN_OPTIONS_H
