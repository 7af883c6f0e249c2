//===- MPITransport.cpp - send/recv groups over MPI -----------------------===//

#include "tandem/Runtime/MPITransport.h"

#include <chrono>
#include <cstdio>
#include <thread>

using namespace tandem::runtime;

MPITransport::MPITransport(MPI_Comm comm, double timeoutSeconds)
    : comm(comm), timeoutSeconds(timeoutSeconds) {
  // Errors come back as codes, reported with the op that failed, instead
  // of MPI's default of aborting with its own message.
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int *bound = nullptr, found = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &bound, &found);
  if (found && bound)
    tagUpperBound = *bound;
}

static std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, length);
}

static std::string describe(int64_t rank, const TransportOp &op) {
  return "rank " + std::to_string(rank) + " " + op.description +
         (op.send ? " to rank " : " from rank ") + std::to_string(op.peer) +
         " on channel " + std::to_string(op.channel);
}

bool MPITransport::exchange(int64_t rank, std::vector<TransportOp> &group,
                            std::string &error) {
  std::vector<MPI_Request> requests(group.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < group.size(); ++i) {
    TransportOp &op = group[i];
    if (op.wire != op.dtype) {
      error = describe(rank, op) + ": wire conversion is not supported";
      return false;
    }
    if (op.channel < 0 || op.channel > tagUpperBound) {
      error = describe(rank, op) + ": the channel exceeds MPI_TAG_UB (" +
              std::to_string(tagUpperBound) + ")";
      return false;
    }
    if (op.bytes > static_cast<uint64_t>(INT32_MAX)) {
      error = describe(rank, op) + ": " + std::to_string(op.bytes) +
              " bytes exceed one MPI message";
      return false;
    }
    int count = static_cast<int>(op.bytes);
    int tag = static_cast<int>(op.channel), peer = static_cast<int>(op.peer);
    int code = op.send ? MPI_Issend(op.sendData, count, MPI_BYTE, peer, tag,
                                    comm, &requests[i])
                       : MPI_Irecv(op.recvData, count, MPI_BYTE, peer, tag,
                                   comm, &requests[i]);
    if (code != MPI_SUCCESS) {
      error = describe(rank, op) + ": " + mpiError(code);
      return false;
    }
  }

  std::vector<MPI_Status> statuses(group.size());
  auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(1);
  while (true) {
    int done = 0;
    int code = MPI_Testall(static_cast<int>(requests.size()), requests.data(),
                           &done, statuses.data());
    if (code != MPI_SUCCESS) {
      for (size_t i = 0; i < group.size(); ++i)
        if (code != MPI_ERR_IN_STATUS ||
            (statuses[i].MPI_ERROR != MPI_SUCCESS &&
             statuses[i].MPI_ERROR != MPI_ERR_PENDING)) {
          int opCode = code == MPI_ERR_IN_STATUS ? statuses[i].MPI_ERROR : code;
          error = describe(rank, group[i]) + ": " + mpiError(opCode) +
                  (opCode == MPI_ERR_TRUNCATE
                       ? " (the sender's message is larger than the " +
                             std::to_string(group[i].bytes) + " bytes expected)"
                       : "");
          return false;
        }
      error = "rank " + std::to_string(rank) + ": " + mpiError(code);
      return false;
    }
    if (done)
      break;
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (waited > timeoutSeconds) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", timeoutSeconds);
      error = std::string("no progress for ") + seconds +
              " s (the --timeout); still waiting:";
      for (size_t i = 0; i < group.size(); ++i) {
        int flag = 0;
        MPI_Request_get_status(requests[i], &flag, MPI_STATUS_IGNORE);
        if (!flag)
          error += "\n  " + describe(rank, group[i]);
      }
      return false;
    }
    // Back off to at most 1 ms between polls: ranks often share cores.
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i].send) {
      group[i].completed = true;
      countCompleted(rank, group[i]);
      continue;
    }
    int received = 0;
    MPI_Get_count(&statuses[i], MPI_BYTE, &received);
    if (static_cast<uint64_t>(received) != group[i].bytes) {
      error = describe(rank, group[i]) + ": received " +
              std::to_string(received) + " bytes, expected " +
              std::to_string(group[i].bytes);
      return false;
    }
    group[i].completed = true;
    countCompleted(rank, group[i]);
  }
  return true;
}

void MPITransport::abort(const std::string &reason) {
  std::fprintf(stderr, "tandem-run: error: %s%s\n", context.c_str(),
               reason.c_str());
  std::fflush(stderr);
  MPI_Abort(comm, 1);
}
