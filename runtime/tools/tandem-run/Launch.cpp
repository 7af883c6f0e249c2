//===- Launch.cpp - starting the ranks through mpirun ---------------------===//

#include "Launch.h"
#include "Hosts.h"

#include "tandem/Runtime/RankProgram.h"
#include "tandem/Runtime/TokenData.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
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

/// After a failed job: which rank died, from the status folder. Only ranks
/// on this machine can write there; with `allLocal` false, a rank
/// elsewhere may have died or failed unseen.
std::string diagnose(const std::string &statusDir, int64_t ranks,
                     int exitStatus, bool allLocal) {
  std::string died, errors;
  for (int64_t r = 0; r < ranks; ++r) {
    std::string base = statusDir + "/rank" + std::to_string(r);
    std::string status = readText(base);
    bool stopped = std::filesystem::exists(base + ".stopped");
    if (status.rfind("error", 0) == 0)
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

} // namespace

int tandem::run::launch(const Options &o) {
  std::string error;
  std::optional<Manifest> first = readManifest(o.dir + "/rank0.json", error);
  if (!first)
    return fail(error);
  int64_t ranks = first->grid.stages * first->grid.replicas;
  std::vector<std::string> placement;
  bool allLocal = false;
  if (!placementArguments(o, ranks, placement, allLocal, error))
    return fail(error);
  // Everything a rank needs must be there before any rank starts. With
  // --device cuda the GPUs are the ranks' hosts' (this one may have none):
  // here the manifests and the libraries' files, the rest on each rank.
  for (int64_t r = 0; r < ranks; ++r) {
    std::string path = o.dir + "/rank" + std::to_string(r) + ".json";
    if (o.device == "host") {
      if (!RankProgram::load(path, error))
        return fail(error);
      continue;
    }
    std::optional<Manifest> manifest = readManifest(path, error);
    if (!manifest)
      return fail(error);
    std::string library = manifest->library;
    if (library.empty() || library[0] != '/')
      library = manifest->directory + "/" + library;
    if (access(library.c_str(), R_OK) != 0)
      return fail(path + ": cannot read library '" + library + "'");
  }
  if (!data::readTokens(o.data, error))
    return fail(error);

  char self[4096];
  ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0)
    return fail("cannot find this executable's path (/proc/self/exe)");
  self[length] = 0;
  std::string threads = std::to_string(o.threads);
  std::vector<std::string> command = {o.mpirun, "-np", std::to_string(ranks)};
  command.insert(command.end(), placement.begin(), placement.end());
  command.insert(command.end(), {"-x", "OMP_NUM_THREADS=" + threads, "-x",
                                 "OPENBLAS_NUM_THREADS=" + threads, "-x",
                                 kStatusDirVariable, self});
  command.insert(command.end(), o.forwarded.begin(), o.forwarded.end());
  if (o.printCommand) {
    for (size_t i = 0; i < command.size(); ++i)
      std::printf("%s%s", i ? " " : "", command[i].c_str());
    std::printf("\n");
    return 0;
  }

  char pattern[] = "/tmp/tandem-run-XXXXXX";
  if (!mkdtemp(pattern))
    return fail(std::string("cannot create a status folder in /tmp: ") +
                std::strerror(errno));
  std::string statusDir = pattern;
  setenv(kStatusDirVariable, statusDir.c_str(), 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  std::vector<char *> argv;
  for (std::string &word : command)
    argv.push_back(word.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t child = fork();
  if (child < 0)
    return fail(std::string("cannot fork: ") + std::strerror(errno));
  if (child == 0) {
    execvp(argv[0], argv.data());
    std::fprintf(stderr,
                 "tandem-run: error: cannot run '%s': %s (install Open MPI: "
                 "apt-get install openmpi-bin)\n",
                 o.mpirun.c_str(), std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code != 0 && code != 127) {
    std::string message = diagnose(statusDir, ranks, code, allLocal);
    if (!message.empty())
      fail(message);
  }
  std::error_code ignored;
  std::filesystem::remove_all(statusDir, ignored);
  return code == 0 ? 0 : 1;
}
