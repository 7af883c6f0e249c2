//===- Launcher.cpp - which rank a launcher started us as -----------------===//

#include "tandem/Runtime/Launcher.h"

#include <cstdlib>

using namespace tandem::runtime;

std::optional<LaunchInfo> tandem::runtime::detectLauncher(
    std::string &error,
    const std::function<const char *(const char *)> &getenvFn) {
  auto get = [&](const char *name) -> const char * {
    return getenvFn ? getenvFn(name) : std::getenv(name);
  };
  // In order of precedence: the most specific variables first, so that an
  // Open MPI job inside a Slurm allocation is read as Open MPI's.
  struct Source {
    const char *launcher, *rank, *size, *localRank;
    /// What names the job, the same on each of its ranks (LaunchInfo::job),
    /// and a second part (a Slurm job's step), or null.
    const char *job, *jobPart;
  };
  static const Source sources[] = {
      // tandem-run's own local launcher (--launcher local): one host, so
      // the local rank is the rank.
      {"tandem-run", "TANDEM_RUN_LOCAL_RANK", "TANDEM_RUN_LOCAL_SIZE",
       "TANDEM_RUN_LOCAL_RANK", nullptr, nullptr},
      // Open MPI 5 runs over PMIx, whose namespace names the job.
      {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
       "OMPI_COMM_WORLD_LOCAL_RANK", "PMIX_NAMESPACE", nullptr},
      // MPICH's Hydra says the local rank in MPI_LOCALRANKID.
      {"pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", nullptr, nullptr},
      {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_JOB_ID",
       "SLURM_STEP_ID"},
  };
  auto number = [&](const char *name, int64_t &out) {
    const char *text = get(name);
    char *end = nullptr;
    long long value = text ? std::strtoll(text, &end, 10) : 0;
    if (!text || !*text || *end || value < 0) {
      error = std::string("the launcher variable ") + name + " is '" +
              (text ? text : "") + "', not a non-negative integer";
      return false;
    }
    out = value;
    return true;
  };
  for (const Source &source : sources) {
    if (!get(source.rank))
      continue;
    LaunchInfo info;
    info.launcher = source.launcher;
    if (!get(source.size)) {
      error =
          std::string(source.rank) + " is set but " + source.size + " is not";
      return std::nullopt;
    }
    if (!number(source.rank, info.rank) || !number(source.size, info.size))
      return std::nullopt;
    if (info.rank >= info.size) {
      error = std::string(source.rank) + " = " + std::to_string(info.rank) +
              " is not below " + source.size + " = " +
              std::to_string(info.size);
      return std::nullopt;
    }
    if (get(source.localRank) && !number(source.localRank, info.localRank))
      return std::nullopt;
    if (source.job && get(source.job)) {
      info.job = get(source.job);
      if (source.jobPart && get(source.jobPart))
        info.job += std::string(".") + get(source.jobPart);
    }
    error.clear();
    return info;
  }
  error.clear();
  return std::nullopt;
}
