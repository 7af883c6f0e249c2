//===- ControlPlaneConformance.h - one body for every control plane -------===//
//
// What every ControlPlane must do, checked from one rank's side: every rank
// of the job runs `checkControlPlane` on its own plane (threads of one test,
// or MPI processes under mpirun), and each checks what it receives against
// what the others must have sent. Past the first checks every rank makes
// every call, whatever it found: a failure never strands the others.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_UNITTESTS_RUNTIME_CONTROLPLANECONFORMANCE_H
#define TANDEM_UNITTESTS_RUNTIME_CONTROLPLANECONFORMANCE_H

#include "tandem/Runtime/ControlPlane.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace tandem::runtime::testing {

/// Rank r's gather payload: r * 1000 bytes (rank 0's is empty) of a pattern
/// that depends on r, so lengths, order and contents are all checked.
inline std::string gatherPayload(int64_t rank) {
  std::string bytes(static_cast<size_t>(rank) * 1000, '\0');
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>((i * 7 + static_cast<size_t>(rank)) & 0xff);
  return bytes;
}

inline void checkControlPlane(ControlPlane &c) {
  const int64_t rank = c.rank(), size = c.size();
  ASSERT_GE(size, 2);
  ASSERT_TRUE(rank >= 0 && rank < size);

  // The largest value, negative ones included, on every rank.
  EXPECT_EQ(c.maxOf(rank == 1 ? 41 : -5 - rank), 41);
  EXPECT_EQ(c.maxOf(-1 - rank), -1);

  // Gathered on the last rank, then on rank 0: every payload in rank order
  // on the root, nothing elsewhere.
  for (int64_t root : {size - 1, int64_t(0)}) {
    std::vector<std::string> all = c.gather(gatherPayload(rank), root);
    if (rank != root) {
      EXPECT_TRUE(all.empty());
      continue;
    }
    ASSERT_EQ(static_cast<int64_t>(all.size()), size);
    for (int64_t r = 0; r < size; ++r)
      EXPECT_EQ(all[r], gatherPayload(r)) << "rank " << r << "'s payload";
  }

  // A broadcast from a root other than 0 overwrites every other rank's
  // bytes with the root's.
  unsigned char id[128];
  for (size_t i = 0; i < sizeof id; ++i)
    id[i] = static_cast<unsigned char>(rank == size - 1 ? 255 - i : rank);
  c.broadcast(id, sizeof id, size - 1);
  int64_t wrongBytes = 0;
  for (size_t i = 0; i < sizeof id; ++i)
    wrongBytes += id[i] != static_cast<unsigned char>(255 - i);
  EXPECT_EQ(wrongBytes, 0);

  // Many rounds back to back: no round reads another's values. Every rank
  // makes every call whatever it finds, so a failure fails the test
  // instead of leaving the other ranks waiting.
  int64_t wrongRounds = 0;
  for (int64_t round = 0; round < 50; ++round)
    wrongRounds += c.maxOf(round * size + rank) != round * size + size - 1;
  EXPECT_EQ(wrongRounds, 0);
  c.barrier();
}

} // namespace tandem::runtime::testing

#endif // TANDEM_UNITTESTS_RUNTIME_CONTROLPLANECONFORMANCE_H
