//===- NcclTransport.h - send/recv groups over NCCL -------------*- C++ -*-===//
//
// The transport for ranks with one GPU each, across processes and hosts:
// one NCCL communicator for the pipeline's point-to-point traffic, made
// non-blocking so that no NCCL call can hang the rank. The transfers run on
// a stream of their own, ordered by events (Device.h): a group's sends and
// receives are one ncclGroupStart/ncclGroupEnd on that stream after the
// work the rank issued on its stream before posting, so the rank's next
// kernels run while the group moves; a wait makes the rank's later work
// wait for the groups. The host still waits too, polling against the
// timeout: the communicator's state (ncclCommGetAsyncError) and the last
// group's event; a wait that takes longer fails with a message naming
// every op in flight, and the communicator is aborted, so a dead or silent
// peer ends the job instead of hanging it.
//
// NCCL has no tags: messages between two ranks match in issue order, not
// by channel. The compiled rank programs must therefore send and receive
// in one order per directed rank pair (transferOrdersAgree in
// RankProgram.h checks two ranks' orders before a job starts); the channel
// here only names the op. docs/runtime.md, "NCCL".
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_NCCLTRANSPORT_H
#define TANDEM_RUNTIME_NCCLTRANSPORT_H

#include "tandem/Runtime/NcclLibrary.h"
#include "tandem/Runtime/Transport.h"

#include <functional>
#include <memory>

namespace tandem::runtime {

class NcclTransport final : public Transport {
public:
  /// Joins communicator `id` as `rank` of `ranks` on `device` (whose memory
  /// the payloads are in), waiting at most `timeoutSeconds` for every rank
  /// to join; nullptr with `error` naming the rank and what failed. Call
  /// on the thread that runs the rank. `peerCheck`: as watchPeers, from the
  /// start.
  static std::unique_ptr<NcclTransport>
  create(const NcclLibrary &nccl, Device &device, const NcclUniqueId &id,
         int64_t rank, int64_t ranks, double timeoutSeconds, std::string &error,
         std::function<std::string()> peerCheck = nullptr);
  /// Finalizes and destroys the communicator (an aborted one is gone).
  ~NcclTransport() override;

  const Device *payloadDevice() const override { return &device; }
  void setRankStream(int64_t rank, void *stream,
                     DeviceTimeline *timeline) override;
  /// One group on the transfer stream, enqueued before it returns.
  bool post(int64_t rank, std::vector<TransportOp> &group,
            std::string &error) override;
  /// Polls until the last group is done: every op posted so far completes.
  bool wait(int64_t rank, const std::vector<TransportOp *> &ops,
            std::string &error) override;
  /// Over point-to-point messages in one group: every member sends a
  /// header and its value to the members that need it; an all-reduce folds
  /// the values in group order on the host (copied out of and back into
  /// device memory). Temporary device buffers per call: no pass produces
  /// collectives yet, so nothing is tuned for them.
  bool collective(int64_t rank, CollectiveOp &op, std::string &error) override;
  void finish(int64_t rank) override {}
  /// Aborts the communicator: this rank's pending NCCL work ends, and the
  /// transport refuses further groups with `reason`.
  void abort(const std::string &reason) override;
  /// While it waits, the transport asks `check` now and then whether a
  /// peer's process has ended (ControlPlane::peerEnded): a non-empty answer
  /// aborts the communicator and fails the wait with it, instead of a
  /// timeout after --timeout seconds.
  void watchPeers(std::function<std::string()> check) {
    peerCheck = std::move(check);
  }

private:
  NcclTransport(const NcclLibrary &nccl, Device &device, int64_t rank,
                int64_t ranks, double timeoutSeconds)
      : nccl(nccl), device(device), rank(rank), ranks(ranks),
        timeoutSeconds(timeoutSeconds) {}
  /// Polls the communicator (and, with `groups`, the last group's event)
  /// until its work is done, an error, or the timeout: "" when done, else
  /// what went wrong (the communicator is then aborted).
  std::string pollDone(bool groups);
  /// Starts a group on the transfer stream after the rank's work so far
  /// (and its span on the timeline, named `name`); "" or what failed.
  std::string orderAfterRank(const std::string &name);
  /// Marks the end of the group just enqueued; "" or what failed.
  std::string markGroup();
  /// After the stream went idle: every op in flight has completed.
  void completeInFlight();
  void abortCommunicator();
  /// The error of an op (`what`) after an abort: the abort's own reason.
  std::string abortedError(const std::string &what) const;

  const NcclLibrary &nccl;
  Device &device;
  NcclApi::Comm comm = nullptr;
  int64_t rank, ranks;
  double timeoutSeconds;
  bool aborted = false;
  std::string abortReason;
  /// Posted ops not yet seen complete, in posting order.
  std::vector<TransportOp *> inFlight;
  /// The rank's stream, the transfers' stream, the event a group waits for
  /// on the rank's stream, and the event after the last group enqueued on
  /// the transfer stream (which runs the groups in order).
  void *rankStream = nullptr;
  void *transferStream = nullptr;
  DeviceTimeline *timeline = nullptr;
  /// The group's span on the timeline, or -1.
  int64_t groupSpan = -1;
  std::shared_ptr<DeviceEvent> posted, lastGroup;
  std::function<std::string()> peerCheck;
};

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_NCCLTRANSPORT_H
