//===- SocketControlPlaneTest.cpp - ranks as local processes --------------===//
//
// The control plane conformance body over SocketControlPlane: the test
// forks the other ranks as processes (as tandem-run's local launcher
// starts them) and runs rank 0 itself; each child exits with its own
// verdict, which rank 0 collects.
//
//===----------------------------------------------------------------------===//

#include "ControlPlaneConformance.h"

#include "tandem/Runtime/SocketControlPlane.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

using namespace tandem::runtime;

namespace {

/// Runs `body` on ranks 0..size-1, rank 0 here and the others as forked
/// processes; true when every child exited with status 0.
template <typename Body>
bool onProcesses(int64_t size, double timeout, Body body,
                 std::vector<int> *statuses = nullptr) {
  std::string name, error;
  int listener = listenControlSocket(name, error);
  EXPECT_GE(listener, 0) << error;
  if (listener < 0)
    return false;
  std::vector<pid_t> children;
  for (int64_t r = 1; r < size; ++r) {
    pid_t child = fork();
    if (child == 0) {
      close(listener);
      std::unique_ptr<SocketControlPlane> plane =
          SocketControlPlane::join(name, -1, r, size, timeout, error);
      if (!plane)
        _exit(2);
      body(*plane);
      _exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    children.push_back(child);
  }
  std::unique_ptr<SocketControlPlane> plane =
      SocketControlPlane::join(name, listener, 0, size, timeout, error);
  close(listener);
  EXPECT_TRUE(plane) << error;
  if (plane)
    body(*plane);
  plane.reset();
  bool ok = true;
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    if (statuses)
      statuses->push_back(status);
    ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  return ok;
}

TEST(SocketControlPlane, Conformance) {
  for (int64_t size : {2, 3, 5})
    EXPECT_TRUE(onProcesses(size, 30,
                            [](ControlPlane &c) {
                              EXPECT_TRUE(c.ranksAreProcesses());
                              tandem::runtime::testing::checkControlPlane(c);
                            }))
        << "a rank's process failed its side (size " << size << ")";
}

TEST(SocketControlPlane, LargeGatherArrivesWhole) {
  // --save-params gathers whole parameter files: 8 MiB each.
  EXPECT_TRUE(onProcesses(3, 30, [](ControlPlane &c) {
    std::string mine(8 << 20, static_cast<char>('a' + c.rank()));
    std::vector<std::string> all = c.gather(mine, 1);
    if (c.rank() != 1)
      return;
    ASSERT_EQ(all.size(), 3u);
    for (int64_t r = 0; r < 3; ++r)
      EXPECT_EQ(all[r], std::string(8 << 20, static_cast<char>('a' + r)));
  }));
}

TEST(SocketControlPlane, ARankThatNeverJoinsIsNamed) {
  std::string name, error;
  int listener = listenControlSocket(name, error);
  ASSERT_GE(listener, 0) << error;
  EXPECT_FALSE(SocketControlPlane::join(name, listener, 0, 3, 0.2, error));
  EXPECT_EQ(error, "ranks 1, 2 did not join the control plane within 0.2 s "
                   "(the --timeout)");
  close(listener);
}

TEST(SocketControlPlane, ADeadRankEndsTheOthersWithItsName) {
  // Rank 1 dies without a word; rank 2, waiting at the hub's barrier,
  // is let go by rank 0's abort.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        onProcesses(3, 30, [](ControlPlane &c) {
          if (c.rank() == 1)
            _exit(9);
          c.barrier();
        });
        std::exit(0);
      },
      ::testing::ExitedWithCode(1),
      "tandem-run: error: rank 0: the control connection to rank 1 closed "
      "\\(its process ended\\)");
}

} // namespace
