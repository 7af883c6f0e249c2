//===- ControlPlane.h - what a job's ranks tell each other ------*- C++ -*-===//
//
// The job's control traffic, apart from the step's transfers (Transport.h):
// the rank and the job's size, barriers, agreeing on a value, gathering
// summaries and parameters on one rank, handing the NCCL unique id from
// rank 0 to the others, and ending the whole job on an error. tandem-run's
// rank main uses only this, so one main serves ranks that are MPI processes
// (MPIControlPlane.h) and ranks that are threads of one process
// (`ThreadControlPlane`), whichever transport carries the data. Every rank
// makes the same calls in the same order, as with MPI's collectives. No
// MLIR, no MPI.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_CONTROLPLANE_H
#define TANDEM_RUNTIME_CONTROLPLANE_H

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tandem::runtime {

class ControlPlane {
public:
  virtual ~ControlPlane();
  virtual int64_t rank() const = 0;
  virtual int64_t size() const = 0;
  /// Whether each rank is a process of its own (so that process-wide
  /// measurements such as the peak resident size are the rank's own).
  virtual bool ranksAreProcesses() const = 0;
  /// Returns once every rank has called it.
  virtual void barrier() = 0;
  /// The largest of the ranks' `value`s, on every rank.
  virtual int64_t maxOf(int64_t value) = 0;
  /// Every rank's `bytes` in rank order on `root`; empty on the others.
  virtual std::vector<std::string> gather(const std::string &bytes,
                                          int64_t root) = 0;
  /// `root`'s `size` bytes at `data` into every rank's `data`.
  virtual void broadcast(void *data, size_t size, int64_t root) = 0;
  /// Prints "tandem-run: error: MESSAGE" and ends every rank of the job
  /// with exit status 1: the others may wait on this one.
  [[noreturn]] virtual void abortJob(const std::string &message) = 0;
  /// Without waiting: "rank R's process ended ..." when this rank can see
  /// that another rank's process has ended, else empty. A transport
  /// waiting on a peer asks, so that a dead rank ends the job at once
  /// rather than at the --timeout. Empty where ranks are no processes.
  virtual std::string peerEnded() { return ""; }
};

/// `size` ranks as threads of one process. The ranks' planes share a
/// `ThreadControlPlane::Group`; each thread uses its own plane. Aborting
/// prints the first message only and ends the process.
class ThreadControlPlane final : public ControlPlane {
public:
  /// What the ranks of one process share.
  class Group {
  public:
    explicit Group(int64_t size);
    int64_t size() const { return static_cast<int64_t>(slots.size()); }

  private:
    friend class ThreadControlPlane;
    /// Waits until all ranks have arrived (a generation barrier).
    void arrive();
    std::mutex mutex;
    std::condition_variable changed;
    int64_t arrived = 0;
    uint64_t generation = 0;
    /// One slot per rank for the value being exchanged.
    std::vector<std::string> slots;
    bool aborting = false;
  };

  ThreadControlPlane(Group &group, int64_t rank) : group(group), self(rank) {}
  int64_t rank() const override { return self; }
  int64_t size() const override { return group.size(); }
  bool ranksAreProcesses() const override { return false; }
  void barrier() override { group.arrive(); }
  int64_t maxOf(int64_t value) override;
  std::vector<std::string> gather(const std::string &bytes,
                                  int64_t root) override;
  void broadcast(void *data, size_t size, int64_t root) override;
  [[noreturn]] void abortJob(const std::string &message) override;

private:
  /// Every rank's `bytes`, on every rank.
  std::vector<std::string> exchange(const std::string &bytes);
  Group &group;
  int64_t self;
};

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_CONTROLPLANE_H
