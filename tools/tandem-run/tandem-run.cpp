//===- tandem-run.cpp - multi-process pipeline training over MPI ----------===//
//
// tandem-run DIR --data FILE [--steps N] [--first-step K] [--seed N]
//            [--params FILE] [--save-params FILE] [--held-out-fraction F]
//            [--timeout SECONDS] [--threads T] [--mpirun PATH]
//            [--print-command]
//
// Trains what `tandemc --target cpu` wrote to DIR with one process per rank.
// Started by mpirun or srun (their environment names the rank, Launcher.h),
// it runs as that rank: loads DIR/rank<r>.json and its library, initializes
// or loads its parameters, builds the step inputs it reads from the token
// data (StepInputs.h: the batches tandem-eval and tandem-run-inproc use), and
// walks its action list each step with send/recv over MPI
// (MPITransport.h). The rank holding the loss prints one line per step.
// Started directly, it runs `mpirun -np S` on itself with the settings for
// one machine: shared memory and loopback only, oversubscription allowed,
// --threads OpenMP/BLAS threads per rank (default 1), root allowed.
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/Launcher.h"
#include "tandem/Runtime/MPITransport.h"
#include "tandem/Runtime/ParameterFiles.h"
#include "tandem/Runtime/RankProgram.h"
#include "tandem/Runtime/StepInputs.h"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace tandem;
using namespace tandem::runtime;

namespace {

struct Options {
  std::string dir, data, params, saveParams, mpirun = "mpirun";
  uint64_t seed = 0, steps = 1, firstStep = 0, threads = 1;
  double heldOutFraction = 0.1, timeout = 300.0;
  bool printCommand = false;
  /// The arguments to pass on to the ranks.
  std::vector<std::string> forwarded;
};

int fail(const std::string &message) {
  std::fprintf(stderr, "tandem-run: error: %s\n", message.c_str());
  return 1;
}

bool parseUnsigned(const std::string &option, const std::string &text,
                   uint64_t &out, std::string &error) {
  char *end = nullptr;
  out = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end || text[0] == '-') {
    error = option + " needs a non-negative integer, found '" + text + "'";
    return false;
  }
  return true;
}

bool parseNumber(const std::string &option, const std::string &text,
                 double &out, std::string &error) {
  char *end = nullptr;
  out = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !(out > 0)) {
    error = option + " needs a positive number, found '" + text + "'";
    return false;
  }
  return true;
}

bool parseOptions(int argc, char **argv, Options &o, std::string &error) {
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
    } else if (arg == "--params") {
      if (!value(o.params))
        return false;
    } else if (arg == "--save-params") {
      if (!value(o.saveParams))
        return false;
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
      if (!parseUnsigned(arg, text, out, error))
        return false;
    } else if (arg == "--held-out-fraction") {
      if (!value(text))
        return false;
      char *end = nullptr;
      o.heldOutFraction = std::strtod(text.c_str(), &end);
      if (text.empty() || *end) {
        error = "--held-out-fraction needs a number, found '" + text + "'";
        return false;
      }
    } else if (arg == "--timeout") {
      if (!value(text) || !parseNumber(arg, text, o.timeout, error))
        return false;
    } else if (arg == "--print-command") {
      o.printCommand = true;
      forward = false;
    } else if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: tandem-run DIR --data FILE [--steps N] [--first-step K] "
          "[--seed N]\n"
          "                  [--params FILE] [--save-params FILE] "
          "[--held-out-fraction F]\n"
          "                  [--timeout SECONDS] [--threads T] [--mpirun "
          "PATH] [--print-command]\n");
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
  if (o.data.empty()) {
    error = "--data is required (a text or token file)";
    return false;
  }
  if (o.steps == 0) {
    error = "--steps must be at least 1";
    return false;
  }
  if (o.threads == 0) {
    error = "--threads must be at least 1";
    return false;
  }
  return true;
}

/// Not started by a launcher: run `mpirun -np S` on this executable.
int launch(const Options &o) {
  std::string error;
  std::optional<Manifest> first = readManifest(o.dir + "/rank0.json", error);
  if (!first)
    return fail(error);
  int64_t ranks = first->grid.stages * first->grid.replicas;
  // Everything a rank needs must be there before any rank starts.
  for (int64_t r = 0; r < ranks; ++r) {
    std::unique_ptr<RankProgram> program =
        RankProgram::load(o.dir + "/rank" + std::to_string(r) + ".json", error);
    if (!program)
      return fail(error);
  }
  if (!data::readTokens(o.data, error))
    return fail(error);

  char self[4096];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0)
    return fail("cannot find this executable's path (/proc/self/exe)");
  self[length] = 0;
  std::string threads = std::to_string(o.threads);
  std::vector<std::string> command = {
      o.mpirun, "-np", std::to_string(ranks),
      // One machine: shared memory and loopback only, however many ranks
      // share its cores, and no binding (ranks may outnumber cores).
      "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader",
      "--mca", "btl_vader_single_copy_mechanism", "none", "--mca",
      "oob_tcp_if_include", "lo", "--mca", "btl_tcp_if_include", "lo", "-x",
      "OMP_NUM_THREADS=" + threads, "-x", "OPENBLAS_NUM_THREADS=" + threads,
      self};
  command.insert(command.end(), o.forwarded.begin(), o.forwarded.end());
  if (o.printCommand) {
    for (size_t i = 0; i < command.size(); ++i)
      std::printf("%s%s", i ? " " : "", command[i].c_str());
    std::printf("\n");
    return 0;
  }
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  std::vector<char *> argv;
  for (std::string &word : command)
    argv.push_back(word.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  execvp(argv[0], argv.data());
  return fail("cannot run '" + o.mpirun + "': " + std::strerror(errno) +
              " (install Open MPI: apt-get install openmpi-bin)");
}

/// The loss (output 0) of a step on the rank that produces it.
std::optional<double> lossOf(const RankProgram &program,
                             const StepResult &result) {
  const Manifest &m = program.manifest();
  for (const OutputInfo &out : m.outputs) {
    if (out.index != 0)
      continue;
    const ResultInfo &res =
        m.fragments[m.findFragment(out.fragment)].results[out.result];
    const Buffer &value = *result.outputs.at(0);
    if (!res.shape.empty())
      return std::nullopt;
    if (res.dtype == ElementType::F32) {
      float loss;
      std::memcpy(&loss, value.data(), sizeof loss);
      return loss;
    }
    if (res.dtype == ElementType::F64) {
      double loss;
      std::memcpy(&loss, value.data(), sizeof loss);
      return loss;
    }
  }
  return std::nullopt;
}

/// Collects every rank's parameters on rank 0 and writes them to `path`.
bool saveParameters(const RankProgram &program, int rank, int size,
                    const std::string &path, std::string &error) {
  st::File mine;
  addParameters(program, mine);
  std::vector<uint8_t> bytes = st::serialize(mine);
  if (rank != 0) {
    uint64_t length = bytes.size();
    MPI_Send(&length, 1, MPI_UINT64_T, 0, 0, MPI_COMM_WORLD);
    MPI_Send(bytes.data(), static_cast<int>(length), MPI_BYTE, 0, 1,
             MPI_COMM_WORLD);
    return true;
  }
  st::File all = std::move(mine);
  for (int r = 1; r < size; ++r) {
    uint64_t length = 0;
    MPI_Recv(&length, 1, MPI_UINT64_T, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    std::vector<uint8_t> theirs(length);
    MPI_Recv(theirs.data(), static_cast<int>(length), MPI_BYTE, r, 1,
             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    std::optional<st::File> file =
        st::parse(theirs, "rank " + std::to_string(r) + "'s parameters", error);
    if (!file)
      return false;
    for (auto &[name, tensor] : file->tensors)
      all.tensors.emplace(name, std::move(tensor));
  }
  return st::writeFile(path, all, error);
}

/// One rank of a launched job.
int runRank(const Options &o, const LaunchInfo &launch) {
  MPI_Init(nullptr, nullptr);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::string prefix = "rank " + std::to_string(rank) + ": ";
  auto abortJob = [&](const std::string &message) {
    std::fprintf(stderr, "tandem-run: error: %s%s\n", prefix.c_str(),
                 message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  };
  if (rank != launch.rank)
    return abortJob("the launcher says rank " + std::to_string(launch.rank) +
                    " but MPI says " + std::to_string(rank));

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
  std::unique_ptr<RankProgram> program = RankProgram::load(
      o.dir + "/rank" + std::to_string(rank) + ".json", error);
  if (!program)
    return abortJob(error);
  if (!program->initParameters(o.seed, error))
    return abortJob(error);
  if (!o.params.empty()) {
    std::optional<st::File> file = st::readFile(o.params, error);
    if (!file || !loadParameters(*program, *file, o.params, error))
      return abortJob(error);
  }
  std::optional<std::vector<int32_t>> tokens = data::readTokens(o.data, error);
  if (!tokens)
    return abortJob(error);
  StepInputOptions inputOptions;
  inputOptions.seed = o.seed;
  inputOptions.heldOutFraction = o.heldOutFraction;
  inputOptions.dataName = o.data;
  std::optional<StepInputs> inputs = StepInputs::create(
      program->manifest().inputs, *tokens, inputOptions, error);
  if (!inputs)
    return abortJob(error);
  // Every rank knows the batch size (tokens per step) only if it reads a
  // token input; the loss rank reads the targets, which have its shape.

  MPITransport transport(MPI_COMM_WORLD, o.timeout);
  MPI_Barrier(MPI_COMM_WORLD);
  for (uint64_t step = o.firstStep; step < o.firstStep + o.steps; ++step) {
    auto start = std::chrono::steady_clock::now();
    StepResult result;
    transport.setContext("step " + std::to_string(step) + ": ");
    if (!program->runStep(inputs->get(step), transport, result, error))
      return abortJob("step " + std::to_string(step) + ": " + error);
    program->applyUpdates(result);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (std::optional<double> loss = lossOf(*program, result)) {
      std::printf("step %llu loss %.9g time %.4f s tokens/s %.0f\n",
                  static_cast<unsigned long long>(step), *loss, seconds,
                  inputs->tokensPerStep() / seconds);
      std::fflush(stdout);
    }
  }
  if (!o.saveParams.empty() &&
      !saveParameters(*program, rank, size, o.saveParams, error))
    return abortJob(error);
  MPI_Finalize();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  std::string error;
  if (!parseOptions(argc, argv, options, error))
    return fail(error);
  std::optional<LaunchInfo> launcher = detectLauncher(error);
  if (!launcher && !error.empty())
    return fail(error);
  if (!launcher)
    return launch(options);
  return runRank(options, *launcher);
}
