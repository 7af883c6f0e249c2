//===- MPIControlPlane.cpp - the control plane over MPI -------------------===//

#include "tandem/Runtime/MPIControlPlane.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>

using namespace tandem::runtime;

MPIControlPlane::MPIControlPlane(MPI_Comm parent) {
  MPI_Comm_dup(parent, &comm);
  MPI_Comm_rank(comm, &self);
  MPI_Comm_size(comm, &ranks);
}

MPIControlPlane::~MPIControlPlane() {
  // No MPI call is allowed after MPI_Finalize.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm != MPI_COMM_NULL)
    MPI_Comm_free(&comm);
}

void MPIControlPlane::barrier() { MPI_Barrier(comm); }

int64_t MPIControlPlane::maxOf(int64_t value) {
  int64_t most = value;
  MPI_Allreduce(&value, &most, 1, MPI_INT64_T, MPI_MAX, comm);
  return most;
}

std::vector<std::string> MPIControlPlane::gather(const std::string &bytes,
                                                 int64_t root) {
  // Lengths first, then the bytes, in pieces MPI's int counts can take.
  int64_t length = static_cast<int64_t>(bytes.size());
  std::vector<int64_t> lengths(self == root ? ranks : 0);
  MPI_Gather(&length, 1, MPI_INT64_T, lengths.data(), 1, MPI_INT64_T,
             static_cast<int>(root), comm);
  const int64_t piece = INT_MAX;
  std::vector<std::string> all;
  if (self != root) {
    for (int64_t at = 0; at < length; at += piece)
      MPI_Send(bytes.data() + at,
               static_cast<int>(std::min(piece, length - at)), MPI_BYTE,
               static_cast<int>(root), 0, comm);
    return all;
  }
  all.resize(ranks);
  all[self] = bytes;
  for (int r = 0; r < ranks; ++r) {
    if (r == self)
      continue;
    all[r].resize(static_cast<size_t>(lengths[r]));
    for (int64_t at = 0; at < lengths[r]; at += piece)
      MPI_Recv(all[r].data() + at,
               static_cast<int>(std::min(piece, lengths[r] - at)), MPI_BYTE, r,
               0, comm, MPI_STATUS_IGNORE);
  }
  return all;
}

void MPIControlPlane::broadcast(void *data, size_t size, int64_t root) {
  MPI_Bcast(data, static_cast<int>(size), MPI_BYTE, static_cast<int>(root),
            comm);
}

void MPIControlPlane::abortJob(const std::string &message) {
  std::fprintf(stderr, "tandem-run: error: %s\n", message.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}
