//===- Options.cpp - tandem-run's command line ----------------------------===//

#include "Options.h"
#include "Hosts.h"

#include "tandem/Runtime/OptionValues.h"

#include <cstdio>
#include <cstdlib>

using namespace tandem::run;
using tandem::runtime::parseCount;
using tandem::runtime::parsePositive;
using tandem::runtime::parsePositiveCount;

static const char *const kUsage =
    R"(usage: tandem-run DIR (--data | --arrays | --inputs) FILE [options]

Trains what `tandemc --target cpu` (or cuda) wrote to DIR (docs/runtime.md):
one MPI process per rank, or with --launcher threads (or --transport inproc)
every rank a thread of this process. Started directly, it runs itself under
mpirun (not as threads).
SIGUSR1 (and SIGTERM to tandem-run itself) stops the job after its current
step with a checkpoint (--ckpt-dir); it then exits with status 75.

  --data FILE            train on a text or binary token file: batches of
                         shuffled windows fill the tokens and targets
                         inputs, generated values every other input
  --arrays FILE          train on arrays: a safetensors file whose tensor
                         input.<i> holds n step batches of step input i
                         (shape [n*b, rest...] for step shape [b, rest...],
                         the same n for all); step K reads batch K mod n in
                         file order (no shuffling, whatever the seed); with
                         --eval-every the last max(1, round(F*n)) batches
                         are held out and training cycles over the others
  --inputs FILE          one step on saved step inputs (input.<i>, as
                         tandem-eval --save-inputs writes)
  --save-outputs FILE    write the last step's outputs (result.<k>)
  --steps N              steps to run (default 1)
  --first-step K         the first step's index (default 0)
  --seed N               initialization and batch order (default 0)
  --params FILE          start from these parameters (safetensors)
  --save-params FILE     write every rank's parameters at the end
  --held-out-fraction F  the corpus tail (or share of --arrays batches)
                         kept for evaluation (default 0.1)
  --eval-every K         held-out loss every K steps (DIR/eval)
  --eval-batches N       eval steps per held-out loss (default 4)
  --ckpt-dir DIR         write checkpoints here ...
  --ckpt-every K         ... every K steps
  --ckpt-keep N          keep the newest N (default 2; 0 keeps all)
  --resume DIR           continue from DIR's latest checkpoint
  --restart-on-failure N when a rank dies or fails during a step, restart
                         the job from the latest checkpoint, up to N times
                         (not when one step fails twice)
  --check-finite all|loss|off
                         stop at a NaN or Inf loss (loss), or loss or
                         gradient sum (all; the default on the CPU, loss
                         on GPUs and with --cuda-graphs); dynamic loss
                         scaling skips such steps
  --timeout SECONDS      fail a send/recv without progress (default 300)
  --link-delay MS        a propagation delay on every send/recv between
                         ranks (MPI; not collectives): each message is
                         held by its receiver until its send time plus MS
                         milliseconds (at most 3600000)
  --threads T            OpenMP/BLAS threads per rank (default 1)
  --trace FILE           a Chrome trace of every rank's steps
  --cuda-graphs          capture each run of a rank's step between its
                         transfers once as a CUDA graph and launch the
                         graphs in every later step (--device cuda)
  --device cpu|cuda      where each rank's memory lives (default cpu, also
                         called host; cuda: the GPU of its local rank on its
                         host; ranks as threads: cuda[:N], GPU N for every
                         rank, default 0)
  --transport mpi|nccl|inproc
                         how ranks exchange activations and gradients
                         (default mpi, or inproc with --launcher threads;
                         nccl needs --device cuda; inproc: the in-process
                         transport, ranks as threads, no MPI needed)
  --launcher mpirun|local|threads
                         who starts the ranks (default mpirun; local:
                         processes on this machine, no MPI, needs
                         --transport nccl, the default without MPI;
                         threads: every rank a thread of this process, over
                         --transport inproc (its default, which implies
                         threads) or nccl: one communicator, a rank per
                         thread, on one GPU)
  --rendezvous HOST:PORT for ranks that srun or mpirun started: rank 0,
                         which runs on HOST, listens on PORT, the others
                         connect to HOST:PORT over TCP, and the ranks
                         exchange over NCCL (implied); no MPI needed
  --mpirun PATH          the mpirun to run (default mpirun)
  --print-command        print the mpirun command instead of running it

Placing the ranks (without these, every rank runs on this machine,
oversubscribed):
  --ranks-per-host N     N ranks on each host, filled in host order; hosts x N
                         must cover the program's ranks
  --hosts H1,H2,...      the hosts (default: this machine only)
When every host is this machine, ranks use shared memory and loopback only.
With another host, ranks on different hosts need TCP: mpirun picks the
interfaces (set OMPI_MCA_btl_tcp_if_include to choose) and starts the
remote ranks over ssh; DIR, the data and this executable must be at the
same paths on every host.
)";

std::string tandem::run::threadsRequest(const Options &o) {
  return o.transport == "inproc" ? "--transport inproc" : "--launcher threads";
}

int tandem::run::fail(const std::string &message) {
  std::fprintf(stderr, "tandem-run: error: %s\n", message.c_str());
  return 1;
}

/// HOST:PORT, or [IPV6]:PORT, into its parts.
static bool parseRendezvous(const std::string &text, std::string &host,
                            std::string &port) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos)
    return false;
  host = text.substr(0, colon);
  port = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  else if (host.find(':') != std::string::npos)
    return false;
  if (host.empty() || port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos)
    return false;
  int number = std::stoi(port);
  return number >= 1 && number <= 65535;
}

bool tandem::run::parseOptions(int argc, char **argv, Options &o,
                               std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string text;
    // The words this option spans, passed on to the ranks unless it only
    // concerns the launch.
    int first = i;
    auto value = [&](std::string &out) {
      if (i + 1 >= argc) {
        error = arg + " needs a value";
        return false;
      }
      out = argv[++i];
      return true;
    };
    bool forward = true;
    if (arg == "--data") {
      if (!value(o.data))
        return false;
    } else if (arg == "--inputs") {
      if (!value(o.inputs))
        return false;
    } else if (arg == "--arrays") {
      if (!value(o.arrays))
        return false;
    } else if (arg == "--save-outputs") {
      if (!value(o.saveOutputs))
        return false;
    } else if (arg == "--params") {
      if (!value(o.params))
        return false;
    } else if (arg == "--save-params") {
      if (!value(o.saveParams))
        return false;
    } else if (arg == "--ckpt-dir") {
      if (!value(o.ckptDir))
        return false;
    } else if (arg == "--resume") {
      if (!value(o.resume))
        return false;
    } else if (arg == "--ckpt-every" || arg == "--ckpt-keep" ||
               arg == "--eval-every" || arg == "--eval-batches") {
      uint64_t &out = arg == "--ckpt-every"   ? o.ckptEvery
                      : arg == "--ckpt-keep"  ? o.ckptKeep
                      : arg == "--eval-every" ? o.evalEvery
                                              : o.evalBatches;
      bool positive = arg == "--eval-batches";
      if (!value(text) ||
          !(positive ? parsePositiveCount : parseCount)(arg, text, out, error))
        return false;
    } else if (arg == "--device") {
      if (!value(o.device))
        return false;
      if (o.device == "cpu")
        o.device = "host";
      bool ordinal = o.device.rfind("cuda:", 0) == 0;
      if (o.device != "host" && o.device != "cuda" && !ordinal) {
        error = "--device takes cpu or cuda, not '" + o.device + "'";
        return false;
      }
    } else if (arg == "--transport") {
      if (!value(o.transport))
        return false;
      o.transportGiven = true;
      if (o.transport != "mpi" && o.transport != "nccl" &&
          o.transport != "inproc") {
        error =
            "--transport takes mpi, nccl or inproc, not '" + o.transport + "'";
        return false;
      }
    } else if (arg == "--check-finite") {
      if (!value(o.checkFinite))
        return false;
      if (o.checkFinite != "all" && o.checkFinite != "loss" &&
          o.checkFinite != "off") {
        error = "--check-finite takes all, loss or off, not '" + o.checkFinite +
                "'";
        return false;
      }
    } else if (arg == "--restart-on-failure") {
      if (!value(text) || !parsePositiveCount(arg, text, o.restarts, error))
        return false;
      forward = false;
    } else if (arg == "--trace") {
      if (!value(o.trace))
        return false;
    } else if (arg == "--cuda-graphs") {
      o.cudaGraphs = true;
    } else if (arg == "--launcher") {
      if (!value(o.launcher))
        return false;
      if (o.launcher != "mpirun" && o.launcher != "local" &&
          o.launcher != "threads") {
        error = "--launcher takes mpirun, local or threads, not '" +
                o.launcher + "'";
        return false;
      }
      o.launcherGiven = true;
      forward = false;
    } else if (arg == "--rendezvous") {
      if (!value(text))
        return false;
      if (!parseRendezvous(text, o.rendezvousHost, o.rendezvousPort)) {
        error = "--rendezvous takes HOST:PORT (an IPv6 address in "
                "brackets, a port from 1 to 65535), not '" +
                text + "'";
        return false;
      }
    } else if (arg == "--mpirun") {
      if (!value(o.mpirun))
        return false;
      forward = false;
    } else if (arg == "--seed" || arg == "--steps" || arg == "--first-step" ||
               arg == "--threads") {
      if (!value(text))
        return false;
      uint64_t &out = arg == "--seed"      ? o.seed
                      : arg == "--steps"   ? o.steps
                      : arg == "--threads" ? o.threads
                                           : o.firstStep;
      bool positive = arg == "--steps" || arg == "--threads";
      if (!(positive ? parsePositiveCount : parseCount)(arg, text, out, error))
        return false;
      o.firstStepGiven |= arg == "--first-step";
    } else if (arg == "--held-out-fraction") {
      if (!value(text))
        return false;
      char *end = nullptr;
      o.heldOutFraction = std::strtod(text.c_str(), &end);
      if (text.empty() || *end) {
        error = "--held-out-fraction needs a number, found '" + text + "'";
        return false;
      }
    } else if (arg == "--link-delay") {
      if (!value(text) || !parsePositive(arg, text, o.linkDelayMs, error))
        return false;
      // Nanoseconds of it must fit the clock's int64 with room to spare.
      if (o.linkDelayMs > 3.6e6) {
        error =
            "--link-delay takes at most 3600000 ms (an hour), found " + text;
        return false;
      }
    } else if (arg == "--timeout") {
      if (!value(text) || !parsePositive(arg, text, o.timeout, error))
        return false;
    } else if (arg == "--ranks-per-host") {
      if (!value(text) || !parsePositiveCount(arg, text, o.ranksPerHost, error))
        return false;
      forward = false;
    } else if (arg == "--hosts") {
      if (!value(text) || !parseHosts(text, o.hosts, error))
        return false;
      forward = false;
    } else if (arg == "--print-command") {
      o.printCommand = true;
      forward = false;
    } else if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (!arg.empty() && arg[0] == '-') {
      error = "unknown option '" + arg + "'";
      return false;
    } else if (o.dir.empty()) {
      o.dir = arg;
    } else {
      error = "more than one directory";
      return false;
    }
    if (forward)
      for (int k = first; k <= i; ++k)
        o.forwarded.push_back(argv[k]);
  }
  if (o.dir.empty()) {
    error = "no directory (the output of tandemc --target cpu)";
    return false;
  }
  int sources = !o.data.empty() + !o.arrays.empty() + !o.inputs.empty();
  if (sources != 1) {
    error = std::string(sources ? "--data, --arrays and --inputs exclude "
                                  "each other: "
                                : "") +
            "give exactly one of --data (training on a text or token file), "
            "--arrays (training on arrays of every step input) and --inputs "
            "(one step on saved step inputs)";
    return false;
  }
  if (!o.inputs.empty() && (o.steps != 1 || o.firstStepGiven || o.evalEvery ||
                            o.ckptEvery || !o.resume.empty())) {
    error = "--inputs runs one step on saved inputs: --steps, --first-step, "
            "--eval-every, --ckpt-every and --resume need --data or --arrays";
    return false;
  }
  if (o.ckptEvery > 0 && o.ckptDir.empty()) {
    error = "--ckpt-every needs --ckpt-dir";
    return false;
  }
  if (!o.ckptDir.empty() && o.ckptEvery == 0) {
    error = "--ckpt-dir needs --ckpt-every K (K >= 1)";
    return false;
  }
  if (!o.resume.empty() && (o.firstStepGiven || !o.params.empty())) {
    error = "--resume takes the step and parameters from the checkpoint; "
            "drop --first-step and --params";
    return false;
  }
  // Ranks as threads: --transport inproc implies --launcher threads, which
  // otherwise takes the in-process transport unless told NCCL.
  if (o.transport == "inproc") {
    if (o.launcherGiven && o.launcher != "threads") {
      error = "--transport inproc runs every rank as a thread of this "
              "process: it takes --launcher threads (implied), not "
              "--launcher " +
              o.launcher;
      return false;
    }
    o.launcher = "threads";
  }
  // Ranks that meet at a --rendezvous address exchange over NCCL.
  if (!o.rendezvousHost.empty()) {
    if (o.launcherGiven) {
      error = "--rendezvous is where ranks that srun or mpirun started meet: "
              "--launcher " +
              o.launcher + " starts the ranks itself";
      return false;
    }
    if (o.transportGiven && o.transport != "nccl") {
      error = "--rendezvous connects ranks that exchange over NCCL: it "
              "needs --transport nccl (the default with it), not --transport " +
              o.transport;
      return false;
    }
    if (o.ranksPerHost || !o.hosts.empty() || o.printCommand ||
        o.restarts > 0) {
      error = "--rendezvous is where ranks that srun or mpirun started meet: "
              "--ranks-per-host, --hosts, --print-command and "
              "--restart-on-failure are for the ranks tandem-run starts";
      return false;
    }
    o.transport = "nccl";
  }
  if (o.launcher == "threads" && !o.transportGiven)
    o.transport = "inproc";
  if (o.launcher.empty()) {
#ifdef TANDEM_RUN_HAS_MPI
    o.launcher = "mpirun";
#else
    o.launcher = "local";
#endif
  }
  const bool threads = o.launcher == "threads";
  if (threads && o.transport == "mpi") {
    error = "--launcher threads runs every rank as a thread of this "
            "process, which MPI does not connect: give --transport inproc "
            "(the default) or --transport nccl (--device cuda)";
    return false;
  }
  if (o.transport == "nccl" && o.device == "host") {
    error = "--transport nccl moves GPU memory: it needs --device cuda";
    return false;
  }
  if (o.device.rfind("cuda:", 0) == 0 && !threads) {
    error = "--device " + o.device +
            ": a GPU number is for ranks as threads (--transport inproc or "
            "--launcher threads); processes take the GPU of their local "
            "rank (--device cuda)";
    return false;
  }
  if (threads && (o.ranksPerHost || !o.hosts.empty() || o.printCommand)) {
    error = threadsRequest(o) +
            " runs every rank in this process: --ranks-per-host, --hosts "
            "and --print-command place MPI ranks";
    return false;
  }
  if (o.launcher == "local" && o.transport == "mpi") {
    error = "--launcher local starts processes that exchange over NCCL: it "
            "needs --transport nccl (--device cuda); --transport inproc runs "
            "the ranks as threads";
    return false;
  }
  if (o.launcher == "local" &&
      (o.ranksPerHost || !o.hosts.empty() || o.printCommand)) {
    error = "--launcher local starts every rank on this machine: "
            "--ranks-per-host, --hosts and --print-command are mpirun's";
    return false;
  }
  if (o.linkDelayMs > 0 && o.transport != "mpi") {
    error = "--link-delay is an option of the MPI transport (--transport "
            "mpi), not of --transport " +
            o.transport;
    return false;
  }
  if (o.restarts > 0 && threads) {
    error = "--restart-on-failure restarts the ranks' processes: with " +
            threadsRequest(o) +
            " there are none (run tandem-run again with --resume)";
    return false;
  }
  if (o.restarts > 0 && o.ckptDir.empty()) {
    error = "--restart-on-failure restarts from the latest checkpoint: it "
            "needs --ckpt-dir and --ckpt-every";
    return false;
  }
  if (!o.hosts.empty() && o.ranksPerHost == 0) {
    error = "--hosts needs --ranks-per-host N (the ranks each host takes)";
    return false;
  }
  return true;
}
