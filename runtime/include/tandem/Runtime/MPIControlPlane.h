//===- MPIControlPlane.h - the control plane over MPI -----------*- C++ -*-===//
//
// Ranks that are MPI processes (started by mpirun or srun, or by tandem-run
// through mpirun): ControlPlane's calls over a communicator of its own, so
// that they never meet the MPI transport's messages. Library
// TandemRuntimeMPI.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_MPICONTROLPLANE_H
#define TANDEM_RUNTIME_MPICONTROLPLANE_H

#include "tandem/Runtime/ControlPlane.h"

#include <mpi.h>

namespace tandem::runtime {

class MPIControlPlane final : public ControlPlane {
public:
  /// Duplicates `comm` (after MPI_Init).
  explicit MPIControlPlane(MPI_Comm comm);
  ~MPIControlPlane() override;
  MPIControlPlane(const MPIControlPlane &) = delete;
  MPIControlPlane &operator=(const MPIControlPlane &) = delete;

  int64_t rank() const override { return self; }
  int64_t size() const override { return ranks; }
  bool ranksAreProcesses() const override { return true; }
  void barrier() override;
  int64_t maxOf(int64_t value) override;
  std::vector<std::string> gather(const std::string &bytes,
                                  int64_t root) override;
  void broadcast(void *data, size_t size, int64_t root) override;
  [[noreturn]] void abortJob(const std::string &message) override;

private:
  MPI_Comm comm = MPI_COMM_NULL;
  int self = 0, ranks = 0;
};

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_MPICONTROLPLANE_H
