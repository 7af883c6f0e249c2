//===- Launch.cpp - starting the ranks: mpirun, or local processes --------===//

#include "Launch.h"
#include "Hosts.h"

#include "RankMain.h"

#include "tandem/Runtime/Checkpoint.h"
#include "tandem/Runtime/RankProgram.h"
#include "tandem/Runtime/Safetensors.h"
#include "tandem/Runtime/SocketControlPlane.h"
#include "tandem/Runtime/TokenData.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>

using namespace tandem;
using namespace tandem::run;
using namespace tandem::runtime;

namespace {

std::string readText(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The rank Open MPI's mpirun says a signal ended ("mpirun noticed that
/// process rank 2 with PID 0 on node vm exited on signal 9"), or -1.
int64_t rankMpirunSawDie(const std::string &output) {
  std::smatch match;
  static const std::regex noticed(
      "mpirun noticed that process rank ([0-9]+) with PID [0-9]+ on node "
      "[^ ]+ exited on signal");
  if (!std::regex_search(output, match, noticed))
    return -1;
  return std::strtoll(match[1].str().c_str(), nullptr, 10);
}

/// After a failed job: which rank died. mpirun's own report names it when
/// a signal ended it; else the status folder: the rank that was in a step
/// and was not stopped (a survivor slow to handle mpirun's SIGTERM may
/// have no marker yet, which is why mpirun's word comes first). Only ranks
/// on this machine can write there; with `allLocal` false, a rank
/// elsewhere may have died or failed unseen.
std::string diagnose(const std::string &statusDir, int64_t ranks,
                     int exitStatus, bool allLocal,
                     const std::string &mpirunOutput) {
  std::string died, errors;
  int64_t noticed = rankMpirunSawDie(mpirunOutput);
  if (noticed >= 0 && noticed < ranks) {
    std::string status =
        readText(statusDir + "/rank" + std::to_string(noticed));
    died = "rank " + std::to_string(noticed) + " died" +
           (status.rfind("step ", 0) == 0 ? " during " + status : "");
  }
  for (int64_t r = 0; r < ranks; ++r) {
    std::string base = statusDir + "/rank" + std::to_string(r);
    std::string status = readText(base);
    bool stopped = std::filesystem::exists(base + ".stopped");
    if (status.rfind("error", 0) == 0 || status.rfind("fatal", 0) == 0)
      errors += (errors.empty() ? "" : ", ") + std::to_string(r);
    else if (status.rfind("step ", 0) == 0 && !stopped && died.empty())
      died = "rank " + std::to_string(r) + " died during " + status;
  }
  if (!died.empty())
    return died + " (mpirun exited with status " + std::to_string(exitStatus) +
           "; the other ranks were stopped)";
  if (!errors.empty())
    return "";
  if (!allLocal)
    return "the job failed (mpirun exited with status " +
           std::to_string(exitStatus) +
           "; ranks on other hosts cannot report their status here)";
  return "the job failed (mpirun exited with status " +
         std::to_string(exitStatus) + ") before any rank reported a step";
}

/// The program's rank count, once everything a rank needs is there, before
/// any rank starts; -1 with `error`. With --device cuda the GPUs are the
/// ranks' hosts' (this one may have none): here the manifests and the
/// libraries' files, the rest on each rank.
int64_t checkRanksCanStart(const Options &o, std::string &error) {
  std::optional<Manifest> first = readManifest(o.dir + "/rank0.json", error);
  if (!first)
    return -1;
  int64_t ranks = first->grid.stages * first->grid.replicas;
  for (int64_t r = 0; r < ranks; ++r) {
    std::string path = o.dir + "/rank" + std::to_string(r) + ".json";
    if (o.device == "host") {
      if (!RankProgram::load(path, error))
        return -1;
      continue;
    }
    std::optional<Manifest> manifest = readManifest(path, error);
    if (!manifest)
      return -1;
    std::string library = manifest->library;
    if (library.empty() || library[0] != '/')
      library = manifest->directory + "/" + library;
    if (access(library.c_str(), R_OK) != 0) {
      error = path + ": cannot read library '" + library + "'";
      return -1;
    }
  }
  if (!o.data.empty() && !data::readTokens(o.data, error))
    return -1;
  if (!o.inputs.empty() && !st::readFile(o.inputs, error))
    return -1;
  if (!o.arrays.empty() && !readArrays(o, ranks, error))
    return -1;
  return ranks;
}

/// This executable's path, or empty.
std::string selfPath() {
  char self[4096];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0)
    return "";
  self[length] = 0;
  return self;
}

/// A fresh status folder, exported to the ranks; empty with `error`.
std::string makeStatusDir(std::string &error) {
  char pattern[] = "/tmp/tandem-run-XXXXXX";
  if (!mkdtemp(pattern)) {
    error = std::string("cannot create a status folder in /tmp: ") +
            std::strerror(errno);
    return "";
  }
  setenv(kStatusDirVariable, pattern, 1);
  return pattern;
}

/// How one run of the job ended, from the ranks' status files.
struct Outcome {
  /// The job failed (the launcher's or a rank's status was not 0).
  bool failedRun = false;
  /// Every rank stopped after a step on a signal (the checkpoint written).
  bool preempted = false;
  /// A failure a restart may get past: a rank died, or failed during a
  /// step. Not one at start-up, nor a non-finite loss.
  bool restartable = false;
  /// The highest step a rank was in when the job failed; -1: none.
  int64_t failedStep = -1;
  /// What went wrong, for the message; empty when the ranks said it.
  std::string reason;
  /// The run's first step and the step it ends before, as rank 0 noted
  /// them once it knew (after resuming); empty before.
  std::string steps;

  static Outcome failed(const std::string &reason) {
    Outcome outcome;
    outcome.failedRun = true;
    outcome.reason = reason;
    return outcome;
  }
};

/// The step in a status "step K", "error during step K" or "fatal during
/// step K", or -1.
int64_t statusStep(const std::string &status) {
  size_t at = status.rfind("step ");
  if (at == std::string::npos ||
      (at != 0 && status.compare(0, 7, "error d") != 0 &&
       status.compare(0, 7, "fatal d") != 0))
    return -1;
  return std::strtoll(status.c_str() + at + 5, nullptr, 10);
}

Outcome readOutcome(const std::string &statusDir, int64_t ranks,
                    bool failedRun) {
  Outcome outcome;
  outcome.failedRun = failedRun;
  bool permanent = false;
  for (int64_t r = 0; r < ranks; ++r) {
    std::string status = readText(statusDir + "/rank" + std::to_string(r));
    outcome.preempted |= status.rfind("preempted", 0) == 0;
    permanent |= status == "error" || status.rfind("fatal", 0) == 0;
    outcome.failedStep = std::max(outcome.failedStep, statusStep(status));
  }
  outcome.steps = readText(statusDir + "/steps");
  outcome.restartable =
      failedRun && !permanent && !outcome.preempted && outcome.failedStep >= 0;
  // Ranks ending cleanly after a preemption is not a failure.
  if (outcome.preempted && !permanent)
    outcome.failedRun = false;
  return outcome;
}

/// Where tandem-run, as the launcher, passes on SIGTERM and SIGUSR1 (as
/// SIGUSR1: the ranks stop after their step; docs/runtime.md,
/// "Preemption"). Plain arrays: the handler may read nothing else.
constexpr int kMaxForwarded = 4096;
pid_t forwarded[kMaxForwarded];
volatile sig_atomic_t forwardedCount = 0, stopRequested = 0;

void onLauncherStop(int) {
  stopRequested = 1;
  for (sig_atomic_t i = 0; i < forwardedCount; ++i)
    kill(forwarded[i], SIGUSR1);
}

void forwardStopTo(pid_t child) {
  if (forwardedCount == 0) {
    struct sigaction action = {};
    action.sa_handler = onLauncherStop;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGUSR1, &action, nullptr);
  }
  if (forwardedCount < kMaxForwarded)
    forwarded[forwardedCount] = child;
  forwardedCount = forwardedCount + 1;
  // A signal that came before this child existed.
  if (stopRequested)
    kill(child, SIGUSR1);
}

void clearStopForwarding() { forwardedCount = 0; }

/// The words of `args` less the options in `drop` and their values.
std::vector<std::string>
withoutOptions(const std::vector<std::string> &args,
               std::initializer_list<const char *> drop) {
  std::vector<std::string> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    if (std::any_of(drop.begin(), drop.end(),
                    [&](const char *option) { return args[i] == option; })) {
      ++i;
      continue;
    }
    kept.push_back(args[i]);
  }
  return kept;
}

/// Runs the job and, with --restart-on-failure N, runs it again from the
/// latest checkpoint when it fails during a step, up to N times and never
/// twice for the same step. Returns tandem-run's exit status: 0, 1, or
/// kPreemptedStatus.
int supervise(
    const Options &o,
    const std::function<Outcome(const std::vector<std::string> &)> &run) {
  std::vector<std::string> args = o.forwarded;
  std::set<int64_t> failedSteps;
  unsigned long long runFirstStep = 0, runEndStep = 0;
  for (uint64_t attempt = 0;; ++attempt) {
    Outcome outcome = run(args);
    if (outcome.preempted && !outcome.failedRun)
      return kPreemptedStatus;
    if (!outcome.failedRun)
      return 0;
    std::string reason = outcome.reason;
    if (reason.empty() && outcome.failedStep >= 0)
      reason = "the job failed during step " +
               std::to_string(outcome.failedStep) + " (the message above)";
    if (o.restarts == 0 || !outcome.restartable || stopRequested) {
      if (!outcome.reason.empty())
        fail(outcome.reason);
      return 1;
    }
    if (failedSteps.count(outcome.failedStep)) {
      fail(reason + "; step " + std::to_string(outcome.failedStep) +
           " failed twice: not restarting");
      return 1;
    }
    if (attempt == o.restarts) {
      fail(reason + "; no restart left (--restart-on-failure " +
           std::to_string(o.restarts) + ")");
      return 1;
    }
    failedSteps.insert(outcome.failedStep);
    // The run's first and end step, which rank 0 noted in the first
    // attempt; the restarted ranks run up to the same end.
    if (attempt == 0) {
      if (std::sscanf(outcome.steps.c_str(), "%llu %llu", &runFirstStep,
                      &runEndStep) != 2) {
        fail(reason + "; not restarting: the ranks did not say their steps");
        return 1;
      }
      setenv(kEndStepVariable, std::to_string(runEndStep).c_str(), 1);
    }
    setenv(kAttemptVariable, std::to_string(attempt + 1).c_str(), 1);
    // From the newest committed checkpoint this run wrote, else from the
    // run's own start.
    std::vector<uint64_t> steps = listCheckpoints(o.ckptDir);
    std::string from = "the run's first step";
    args = o.forwarded;
    if (!steps.empty() && steps.back() > runFirstStep) {
      args =
          withoutOptions(o.forwarded, {"--resume", "--first-step", "--params"});
      args.insert(args.end(), {"--resume", o.ckptDir});
      from = o.ckptDir + "/" + checkpointName(steps.back());
    }
    std::fprintf(stderr,
                 "tandem-run: %s; restarting from %s (restart %llu of %llu)\n",
                 reason.c_str(), from.c_str(),
                 static_cast<unsigned long long>(attempt + 1),
                 static_cast<unsigned long long>(o.restarts));
    std::fflush(stderr);
  }
}

/// One run of the job under mpirun with the ranks' arguments `forwarded`.
Outcome runMpirun(const Options &o, int64_t ranks,
                  const std::vector<std::string> &forwarded) {
  std::string error;
  std::vector<std::string> placement;
  bool allLocal = false;
  if (!placementArguments(o, ranks, placement, allLocal, error))
    return Outcome::failed(error);
  std::string self = selfPath();
  if (self.empty())
    return Outcome::failed(
        "cannot find this executable's path (/proc/self/exe)");
  std::string threads = std::to_string(o.threads);
  std::vector<std::string> command = {o.mpirun, "-np", std::to_string(ranks)};
  command.insert(command.end(), placement.begin(), placement.end());
  command.insert(command.end(),
                 {"-x", "OMP_NUM_THREADS=" + threads, "-x",
                  "OPENBLAS_NUM_THREADS=" + threads, "-x", kStatusDirVariable});
  for (const char *restart : {kAttemptVariable, kEndStepVariable})
    if (std::getenv(restart))
      command.insert(command.end(), {"-x", restart});
  command.push_back(self);
  command.insert(command.end(), forwarded.begin(), forwarded.end());
  if (o.printCommand) {
    for (size_t i = 0; i < command.size(); ++i)
      std::printf("%s%s", i ? " " : "", command[i].c_str());
    std::printf("\n");
    return Outcome();
  }

  std::string statusDir = makeStatusDir(error);
  if (statusDir.empty())
    return Outcome::failed(error);
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  std::vector<char *> argv;
  for (std::string &word : command)
    argv.push_back(word.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  // mpirun's standard error (the ranks' too) passes through a pipe: it is
  // copied on as it comes, and its tail is kept for the diagnosis.
  int errors[2];
  if (pipe(errors) != 0)
    return Outcome::failed(std::string("cannot create a pipe: ") +
                           std::strerror(errno));
  pid_t child = fork();
  if (child < 0)
    return Outcome::failed(std::string("cannot fork: ") + std::strerror(errno));
  if (child == 0) {
    dup2(errors[1], STDERR_FILENO);
    close(errors[0]);
    close(errors[1]);
    execvp(argv[0], argv.data());
    std::fprintf(stderr,
                 "tandem-run: error: cannot run '%s': %s (install Open MPI: "
                 "apt-get install openmpi-bin)\n",
                 o.mpirun.c_str(), std::strerror(errno));
    _exit(127);
  }
  close(errors[1]);
  // mpirun forwards SIGUSR1 to every rank.
  forwardStopTo(child);
  std::string tail;
  char buffer[4096];
  for (ssize_t got; (got = read(errors[0], buffer, sizeof buffer)) != 0;) {
    if (got < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    for (ssize_t at = 0; at < got;) {
      ssize_t wrote = write(STDERR_FILENO, buffer + at, got - at);
      if (wrote <= 0)
        break;
      at += wrote;
    }
    tail.append(buffer, got);
    if (tail.size() > (1 << 16))
      tail.erase(0, tail.size() - (1 << 15));
  }
  close(errors[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  clearStopForwarding();
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  Outcome outcome = readOutcome(statusDir, ranks, code != 0);
  if (code != 0 && code != 127)
    outcome.reason = diagnose(statusDir, ranks, code, allLocal, tail);
  std::error_code ignored;
  std::filesystem::remove_all(statusDir, ignored);
  return outcome;
}

/// One run of the job as local processes with the ranks' arguments
/// `forwarded`.
Outcome runLocal(const Options &o, int64_t ranks,
                 const std::vector<std::string> &forwarded) {
  std::string error;
  std::string self = selfPath();
  if (self.empty())
    return Outcome::failed(
        "cannot find this executable's path (/proc/self/exe)");
  // The hub's socket listens before any rank starts (SocketControlPlane.h).
  std::string name;
  int listener = listenControlSocket(name, error);
  if (listener < 0)
    return Outcome::failed(error);
  std::string statusDir = makeStatusDir(error);
  if (statusDir.empty())
    return Outcome::failed(error);
  std::string threads = std::to_string(o.threads);
  std::vector<std::string> words = {self};
  words.insert(words.end(), forwarded.begin(), forwarded.end());
  std::vector<char *> argv;
  for (std::string &word : words)
    argv.push_back(word.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);

  std::vector<pid_t> children;
  for (int64_t r = 0; r < ranks; ++r) {
    pid_t child = fork();
    if (child < 0) {
      clearStopForwarding();
      for (pid_t started : children)
        kill(started, SIGTERM);
      return Outcome::failed(std::string("cannot fork: ") +
                             std::strerror(errno));
    }
    if (child == 0) {
      setenv("TANDEM_RUN_LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("TANDEM_RUN_LOCAL_SIZE", std::to_string(ranks).c_str(), 1);
      setenv(kControlVariable, name.c_str(), 1);
      if (r == 0)
        setenv(kControlFdVariable, std::to_string(listener).c_str(), 1);
      else
        close(listener);
      setenv("OMP_NUM_THREADS", threads.c_str(), 1);
      setenv("OPENBLAS_NUM_THREADS", threads.c_str(), 1);
      execv(self.c_str(), argv.data());
      std::fprintf(stderr, "tandem-run: error: cannot run '%s': %s\n",
                   self.c_str(), std::strerror(errno));
      _exit(127);
    }
    children.push_back(child);
    forwardStopTo(child);
  }
  close(listener);

  // The first rank to fail stops the others (they may wait on it): its
  // SIGTERM handler exits with 143 (RankMain.cpp). Which rank to report is
  // decided once all are gone: ranks that lost a peer exit quietly with
  // status 1 and may be reaped before the rank that caused it.
  std::vector<int> statuses(children.size(), 0);
  bool stopping = false;
  for (size_t running = children.size(); running > 0;) {
    int status = 0;
    pid_t done = waitpid(-1, &status, 0);
    if (done < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    auto it = std::find(children.begin(), children.end(), done);
    if (it == children.end())
      continue;
    --running;
    statuses[it - children.begin()] = status;
    *it = -1;
    if (stopping || (WIFEXITED(status) && WEXITSTATUS(status) == 0))
      continue;
    stopping = true;
    // SIGCONT too: a stopped rank (SIGSTOP) takes SIGTERM only once it
    // runs again.
    for (pid_t other : children)
      if (other > 0) {
        kill(other, SIGTERM);
        kill(other, SIGCONT);
      }
  }
  clearStopForwarding();
  // A rank killed by a signal died; one that exited with another status
  // than 0, 1 (its own error, printed), 127 (could not start, printed) or
  // 143 (stopped) is reported with it.
  int64_t first = -1;
  for (size_t r = 0; r < statuses.size() && first < 0; ++r)
    if (WIFSIGNALED(statuses[r]))
      first = static_cast<int64_t>(r);
  for (size_t r = 0; r < statuses.size() && first < 0; ++r) {
    int code = WEXITSTATUS(statuses[r]);
    if (code != 0 && code != 1 && code != 127 && code != 143)
      first = static_cast<int64_t>(r);
  }
  Outcome outcome = readOutcome(statusDir, ranks, stopping);
  if (first >= 0 && WIFSIGNALED(statuses[first])) {
    std::string step = readText(statusDir + "/rank" + std::to_string(first));
    outcome.reason = "rank " + std::to_string(first) + " died" +
                     (step.rfind("step ", 0) == 0 ? " during " + step : "") +
                     " (killed by signal " +
                     std::to_string(WTERMSIG(statuses[first])) +
                     "; the other ranks were stopped)";
  } else if (first >= 0) {
    outcome.reason = "rank " + std::to_string(first) +
                     "'s process exited with status " +
                     std::to_string(WEXITSTATUS(statuses[first])) +
                     " (the other ranks were stopped)";
  }
  std::error_code ignored;
  std::filesystem::remove_all(statusDir, ignored);
  return outcome;
}

} // namespace

int tandem::run::launch(const Options &o) {
  std::string error;
  int64_t ranks = checkRanksCanStart(o, error);
  if (ranks < 0)
    return fail(error);
  return supervise(o, [&](const std::vector<std::string> &forwarded) {
    return runMpirun(o, ranks, forwarded);
  });
}

int tandem::run::launchLocal(const Options &o) {
  std::string error;
  int64_t ranks = checkRanksCanStart(o, error);
  if (ranks < 0)
    return fail(error);
  return supervise(o, [&](const std::vector<std::string> &forwarded) {
    return runLocal(o, ranks, forwarded);
  });
}
