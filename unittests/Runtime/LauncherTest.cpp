//===- LauncherTest.cpp - launcher environment detection ------------------===//

#include "tandem/Runtime/Launcher.h"

#include <gtest/gtest.h>

#include <map>

using namespace tandem::runtime;

namespace {

std::optional<LaunchInfo> detect(const std::map<std::string, std::string> &env,
                                 std::string &error) {
  return detectLauncher(error, [&](const char *name) -> const char * {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

} // namespace

TEST(Launcher, NoLauncher) {
  std::string error;
  EXPECT_FALSE(detect({{"HOME", "/root"}}, error));
  EXPECT_TRUE(error.empty());
}

TEST(Launcher, OpenMpiWinsInsideSlurm) {
  std::string error;
  auto info = detect({{"OMPI_COMM_WORLD_RANK", "2"},
                      {"OMPI_COMM_WORLD_SIZE", "4"},
                      {"SLURM_PROCID", "0"},
                      {"SLURM_NTASKS", "1"}},
                     error);
  ASSERT_TRUE(info) << error;
  EXPECT_EQ(info->launcher, "openmpi");
  EXPECT_EQ(info->rank, 2);
  EXPECT_EQ(info->size, 4);
}

TEST(Launcher, PmiAndSlurm) {
  std::string error;
  auto pmi = detect({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}, error);
  ASSERT_TRUE(pmi) << error;
  EXPECT_EQ(pmi->launcher, "pmi");
  EXPECT_EQ(pmi->rank, 1);
  auto slurm = detect({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "8"}}, error);
  ASSERT_TRUE(slurm) << error;
  EXPECT_EQ(slurm->launcher, "slurm");
  EXPECT_EQ(slurm->rank, 3);
  EXPECT_EQ(slurm->size, 8);
}

TEST(Launcher, Errors) {
  std::string error;
  EXPECT_FALSE(detect({{"PMI_RANK", "x"}, {"PMI_SIZE", "2"}}, error));
  EXPECT_NE(error.find("PMI_RANK is 'x'"), std::string::npos) << error;
  EXPECT_FALSE(detect({{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}}, error));
  EXPECT_NE(error.find("SLURM_PROCID = 4 is not below SLURM_NTASKS = 4"),
            std::string::npos)
      << error;
  EXPECT_FALSE(detect({{"OMPI_COMM_WORLD_RANK", "0"}}, error));
  EXPECT_NE(error.find("OMPI_COMM_WORLD_SIZE is not"), std::string::npos)
      << error;
}

// The rank's index on its host, which picks its GPU: each launcher's own
// variable, -1 when it says nothing, an error when it is no number.
TEST(Launcher, LocalRank) {
  std::string error;
  auto ompi = detect({{"OMPI_COMM_WORLD_RANK", "5"},
                      {"OMPI_COMM_WORLD_SIZE", "8"},
                      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}},
                     error);
  ASSERT_TRUE(ompi) << error;
  EXPECT_EQ(ompi->localRank, 1);
  auto slurm = detect(
      {{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "3"}},
      error);
  ASSERT_TRUE(slurm) << error;
  EXPECT_EQ(slurm->localRank, 3);
  auto pmi = detect(
      {{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "0"}}, error);
  ASSERT_TRUE(pmi) << error;
  EXPECT_EQ(pmi->localRank, 0);
  auto silent = detect({{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}}, error);
  ASSERT_TRUE(silent) << error;
  EXPECT_EQ(silent->localRank, -1);
  EXPECT_FALSE(detect(
      {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}, {"SLURM_LOCALID", "-1"}},
      error));
  EXPECT_NE(error.find("SLURM_LOCALID is '-1'"), std::string::npos) << error;
}

// tandem-run's own local launcher: its variables win (its ranks may run
// inside a Slurm allocation), and the local rank is the rank.
TEST(Launcher, TandemRunLocal) {
  std::string error;
  auto local = detect({{"TANDEM_RUN_LOCAL_RANK", "2"},
                       {"TANDEM_RUN_LOCAL_SIZE", "4"},
                       {"SLURM_PROCID", "0"},
                       {"SLURM_NTASKS", "1"}},
                      error);
  ASSERT_TRUE(local) << error;
  EXPECT_EQ(local->launcher, "tandem-run");
  EXPECT_EQ(local->rank, 2);
  EXPECT_EQ(local->size, 4);
  EXPECT_EQ(local->localRank, 2);
}

// What names the job, compared by ranks meeting at a --rendezvous address:
// Slurm's job and step, Open MPI's PMIx namespace, nothing where the
// launcher says nothing.
TEST(Launcher, JobName) {
  std::string error;
  auto step = detect({{"SLURM_PROCID", "1"},
                      {"SLURM_NTASKS", "2"},
                      {"SLURM_JOB_ID", "4711"},
                      {"SLURM_STEP_ID", "3"}},
                     error);
  ASSERT_TRUE(step) << error;
  EXPECT_EQ(step->job, "4711.3");
  auto noStep = detect(
      {{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"SLURM_JOB_ID", "4711"}},
      error);
  ASSERT_TRUE(noStep) << error;
  EXPECT_EQ(noStep->job, "4711");
  auto ompi = detect({{"OMPI_COMM_WORLD_RANK", "0"},
                      {"OMPI_COMM_WORLD_SIZE", "2"},
                      {"PMIX_NAMESPACE", "prterun-host-123@1"},
                      {"SLURM_JOB_ID", "4711"}},
                     error);
  ASSERT_TRUE(ompi) << error;
  EXPECT_EQ(ompi->job, "prterun-host-123@1");
  auto pmi = detect({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}, error);
  ASSERT_TRUE(pmi) << error;
  EXPECT_EQ(pmi->job, "");
}
