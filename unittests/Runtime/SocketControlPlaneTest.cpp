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

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

using namespace tandem::runtime;

namespace {

/// How the test's ranks meet: a local launcher's abstract socket, or a
/// --rendezvous address on the loopback.
enum class Meeting { Local, Tcp };

/// A listening socket for rank 0 and the address the others connect to.
int listenFor(Meeting meeting, ControlAddress &hub, std::string &error) {
  if (meeting == Meeting::Local)
    return listenControlSocket(hub.name, error);
  hub.host = "127.0.0.1";
  hub.job = "4711.0";
  int listener = listenControlTcp(hub.host, "0", error);
  hub.port = std::to_string(controlPort(listener));
  return listener;
}

/// Runs `body` on ranks 0..size-1, rank 0 here and the others as forked
/// processes; true when every child exited with status 0.
template <typename Body>
bool onProcesses(int64_t size, double timeout, Body body,
                 std::vector<int> *statuses = nullptr,
                 Meeting meeting = Meeting::Local) {
  std::string error;
  ControlAddress hub;
  int listener = listenFor(meeting, hub, error);
  EXPECT_GE(listener, 0) << error;
  if (listener < 0)
    return false;
  std::vector<pid_t> children;
  for (int64_t r = 1; r < size; ++r) {
    pid_t child = fork();
    if (child == 0) {
      close(listener);
      std::unique_ptr<SocketControlPlane> plane =
          SocketControlPlane::join(hub, -1, r, size, timeout, error);
      if (!plane)
        _exit(2);
      body(*plane);
      _exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    children.push_back(child);
  }
  std::unique_ptr<SocketControlPlane> plane =
      SocketControlPlane::join(hub, listener, 0, size, timeout, error);
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

TEST(SocketControlPlane, ConformanceOverTcp) {
  for (int64_t size : {2, 4})
    EXPECT_TRUE(onProcesses(
        size, 30,
        [](ControlPlane &c) { tandem::runtime::testing::checkControlPlane(c); },
        nullptr, Meeting::Tcp))
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
  EXPECT_FALSE(
      SocketControlPlane::join({name, "", "", ""}, listener, 0, 3, 0.2, error));
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

/// A free TCP port on the loopback, held for the test: bound (with
/// SO_REUSEADDR, as rank 0 binds it) but not listening, so that no other
/// process takes it meanwhile while rank 0 may still listen on it.
class ReservedPort {
public:
  ReservedPort() {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address),
              0);
    number = std::to_string(controlPort(fd));
  }
  ~ReservedPort() { close(fd); }
  ReservedPort(const ReservedPort &) = delete;
  ReservedPort &operator=(const ReservedPort &) = delete;
  const std::string &port() const { return number; }

private:
  int fd;
  std::string number;
};

/// Rank `rank` of `size` joining `hub` in a forked process, which exits
/// with 0 when it joined and then passed a barrier, 3 when it was not let
/// in, writing the error to `pipe`.
pid_t joinInChild(const ControlAddress &hub, int64_t rank, int64_t size,
                  int pipe = -1) {
  pid_t child = fork();
  if (child == 0) {
    std::string error;
    std::unique_ptr<SocketControlPlane> plane =
        SocketControlPlane::join(hub, -1, rank, size, 10, error);
    if (!plane) {
      if (pipe >= 0 && write(pipe, error.data(), error.size()) < 0)
        _exit(4);
      _exit(3);
    }
    plane->barrier();
    _exit(0);
  }
  return child;
}

int exitStatus(pid_t child) {
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A rank whose process ended without a word is seen at once, by the
// transport's watch (peerEnded) and by the hub waiting for another rank;
// one that sent its last message first is not taken for dead.
TEST(SocketControlPlane, PeerEndedNamesOnlyARankThatLeftNothing) {
  std::string error;
  ControlAddress hub;
  int listener = listenFor(Meeting::Tcp, hub, error);
  ASSERT_GE(listener, 0) << error;
  std::vector<pid_t> children;
  for (int64_t r = 1; r < 3; ++r) {
    pid_t child = fork();
    if (child == 0) {
      std::unique_ptr<SocketControlPlane> plane =
          SocketControlPlane::join(hub, -1, r, 3, 10, error);
      // Rank 1 sends its part of a gather and ends, as ranks do at the end
      // of a job; rank 2 just ends.
      if (plane && r == 1)
        plane->gather("last words", 0);
      _exit(plane ? 0 : 3);
    }
    children.push_back(child);
  }
  std::unique_ptr<SocketControlPlane> plane =
      SocketControlPlane::join(hub, listener, 0, 3, 10, error);
  close(listener);
  ASSERT_TRUE(plane) << error;
  for (pid_t child : children)
    EXPECT_EQ(exitStatus(child), 0);
  // Both are gone and their connections shut; only rank 2 left nothing.
  EXPECT_EQ(plane->peerEnded(),
            "rank 2's process ended (its control connection closed)");
}

TEST(SocketControlPlane, TheHubNamesADeadRankWhileItWaitsForAnother) {
  // Rank 1 is slow to come to the barrier (as if waiting on rank 2 in a
  // transfer); rank 2 dies. The hub, waiting for rank 1, names rank 2 at
  // once rather than when rank 1 comes.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        onProcesses(3, 30, [](ControlPlane &c) {
          if (c.rank() == 2)
            _exit(9);
          if (c.rank() == 1) {
            // Until the hub's process ends (or 20 s), then quietly: an
            // orphan must not hold the test's output open.
            pid_t hubProcess = getppid();
            for (int i = 0; i < 2000 && getppid() == hubProcess; ++i)
              std::this_thread::sleep_for(std::chrono::milliseconds(10));
            _exit(0);
          }
          c.barrier();
        });
        std::exit(0);
      },
      ::testing::ExitedWithCode(1),
      "tandem-run: error: rank 0: the control connection to rank 2 closed "
      "\\(its process ended\\)");
}

// srun starts the ranks in no order: the others try again until rank 0
// listens on the --rendezvous address itself.
TEST(SocketControlPlane, RanksWaitForRankZeroToListen) {
  ReservedPort reserved;
  ControlAddress hub{"", "127.0.0.1", reserved.port(), "7.0"};
  std::vector<pid_t> children;
  for (int64_t r = 1; r < 3; ++r)
    children.push_back(joinInChild(hub, r, 3));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::string error;
  std::unique_ptr<SocketControlPlane> plane =
      SocketControlPlane::join(hub, -1, 0, 3, 10, error);
  ASSERT_TRUE(plane) << error;
  plane->barrier();
  for (pid_t child : children)
    EXPECT_EQ(exitStatus(child), 0);
}

// A rank of another job pointed at the same address is told so and turned
// away; a connection that is no rank at all is dropped; this job's rank
// still joins.
TEST(SocketControlPlane, StrangersAreTurnedAway) {
  std::string error;
  ControlAddress hub{"", "127.0.0.1", "", "7.0"};
  int listener = listenControlTcp(hub.host, "0", error);
  ASSERT_GE(listener, 0) << error;
  hub.port = std::to_string(controlPort(listener));

  int noRank = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(std::stoi(hub.port)));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(
      connect(noRank, reinterpret_cast<sockaddr *>(&address), sizeof address),
      0);
  ASSERT_EQ(write(noRank, "GET / HTTP/1.0\r\n\r\n", 18), 18);

  // Rank 0 listens on a thread of its own, so that the stranger is turned
  // away before this job's rank comes.
  std::unique_ptr<SocketControlPlane> plane;
  std::thread rankZero([&] {
    plane = SocketControlPlane::join(hub, listener, 0, 2, 10, error);
  });
  int pipes[2];
  ASSERT_EQ(pipe(pipes), 0);
  ControlAddress otherJob = hub;
  otherJob.job = "8.0";
  pid_t stranger = joinInChild(otherJob, 1, 2, pipes[1]);
  close(pipes[1]);
  EXPECT_EQ(exitStatus(stranger), 3);
  pid_t member = joinInChild(hub, 1, 2);
  rankZero.join();
  close(listener);
  ASSERT_TRUE(plane) << error;
  plane->barrier();
  EXPECT_EQ(exitStatus(member), 0);
  char text[256] = {};
  EXPECT_GT(read(pipes[0], text, sizeof text - 1), 0);
  close(pipes[0]);
  close(noRank);
  EXPECT_STREQ(text, "rank 0 refused this rank: rank 0 belongs to job '7.0', "
                     "this rank to job '8.0'");
}

// Ranks that disagree on the job's size end the join on both sides.
TEST(SocketControlPlane, ADifferentSizeIsRefused) {
  std::string error;
  ControlAddress hub{"", "127.0.0.1", "", ""};
  int listener = listenControlTcp(hub.host, "0", error);
  ASSERT_GE(listener, 0) << error;
  hub.port = std::to_string(controlPort(listener));
  int pipes[2];
  ASSERT_EQ(pipe(pipes), 0);
  pid_t child = joinInChild(hub, 1, 3, pipes[1]);
  close(pipes[1]);
  EXPECT_FALSE(SocketControlPlane::join(hub, listener, 0, 2, 10, error));
  close(listener);
  EXPECT_EQ(error, "rank 1 says the job has 3 ranks, rank 0 says 2");
  EXPECT_EQ(exitStatus(child), 3);
  char text[256] = {};
  EXPECT_GT(read(pipes[0], text, sizeof text - 1), 0);
  close(pipes[0]);
  EXPECT_STREQ(text, "rank 0 refused this rank: rank 1 says the job has 3 "
                     "ranks, rank 0 says 2");
}

TEST(SocketControlPlane, NoRankZeroAtTheAddressIsNamed) {
  ReservedPort reserved;
  std::string port = reserved.port(), error;
  EXPECT_FALSE(SocketControlPlane::join({"", "127.0.0.1", port, ""}, -1, 1, 2,
                                        0.3, error));
  EXPECT_EQ(error, "cannot reach rank 0 at 127.0.0.1:" + port +
                       " within 0.3 s (the --timeout): Connection refused");
}

// Debian's /etc/hosts maps a host's own name to 127.0.1.1: rank 0 resolves
// it to that loopback address while the other hosts reach it by another,
// so rank 0 listens on every interface (here 127.0.0.1 reaches it).
TEST(SocketControlPlane, RankZeroListensOnEveryInterface) {
  ReservedPort reserved;
  std::string port = reserved.port(), error;
  pid_t child = joinInChild({"", "127.0.0.1", port, ""}, 1, 2);
  std::unique_ptr<SocketControlPlane> plane = SocketControlPlane::join(
      {"", "127.0.1.1", port, ""}, -1, 0, 2, 10, error);
  ASSERT_TRUE(plane) << error;
  plane->barrier();
  EXPECT_EQ(exitStatus(child), 0);
}

TEST(SocketControlPlane, RankZeroMustRunOnTheNamedHost) {
  // 192.0.2.1 (TEST-NET-1) is no address of this machine.
  std::string error;
  EXPECT_FALSE(SocketControlPlane::join({"", "192.0.2.1", "29500", ""}, -1, 0,
                                        2, 1, error));
  EXPECT_EQ(error, "rank 0 cannot listen on 192.0.2.1:29500: Cannot assign "
                   "requested address (the address is not this host's: "
                   "--rendezvous names the host of rank 0)");
  int holder = listenControlTcp("127.0.0.1", "0", error);
  ASSERT_GE(holder, 0) << error;
  std::string held = std::to_string(controlPort(holder));
  EXPECT_FALSE(SocketControlPlane::join({"", "127.0.0.1", held, ""}, -1, 0, 2,
                                        1, error));
  close(holder);
  EXPECT_EQ(error, "rank 0 cannot listen on 127.0.0.1:" + held +
                       ": Address already in use (another process holds the "
                       "port: choose another)");
  EXPECT_FALSE(SocketControlPlane::join({"", "no-such-host.invalid", "1", ""},
                                        -1, 1, 2, 1, error));
  EXPECT_NE(error.find("cannot resolve no-such-host.invalid:1"),
            std::string::npos)
      << error;
}

} // namespace
