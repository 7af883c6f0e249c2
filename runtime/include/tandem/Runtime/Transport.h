//===- Transport.h - point-to-point transport for rank programs -*- C++ -*-===//
//
// The seam between a rank's action list and the machinery that moves slots
// between ranks (docs/pipeline-eval.md, "A step", "Posting and waiting" and
// "Never hanging"). A group of consecutive send/recv actions is posted at
// once with `post`, which returns at once; the ops proceed while the rank
// computes, and `wait` returns when the ops it names have completed. A send
// completes only when the matching receive is posted (rendezvous); messages
// from rank a to rank b on channel c match in posting order.
// `InProcessTransport` runs ranks as threads of one process, over host
// memory or one device's; an MPI or NCCL transport implements the same
// calls. No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_TRANSPORT_H
#define TANDEM_RUNTIME_TRANSPORT_H

#include "tandem/Runtime/Manifest.h"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace tandem::runtime {

/// One send or receive of a group.
struct TransportOp {
  bool send = false;
  int64_t peer = 0;
  int64_t channel = 0;
  ElementType dtype = ElementType::F32;
  ElementType wire = ElementType::F32;
  uint64_t bytes = 0;
  /// Send: the payload (unchanged until the op is waited for). Recv: where
  /// the payload goes (`bytes` long; not read before the op is waited for).
  const void *sendData = nullptr;
  void *recvData = nullptr;
  /// For messages: "send of s0.fwd[3] microbatch 0".
  std::string description;
  /// Set by the transport when the op has completed.
  bool completed = false;
};

/// An all-reduce or broadcast over `group` (docs/pipeline-eval.md, the
/// evaluator's semantics): an all-reduce folds the members' values in
/// `group` order, ((x[g0] op x[g1]) op x[g2])..., rounded to the element
/// type after each step, so every member gets the same bits; a broadcast
/// gives every member the root's value. The n-th collective a rank enters
/// over a set of members matches the n-th of every other member, and they
/// must agree on kind, group order, type, size, reduction and root.
struct CollectiveOp {
  enum class Kind { AllReduce, Broadcast };
  enum class Reduction { Sum, Max };
  Kind kind = Kind::AllReduce;
  std::vector<int64_t> group;
  Reduction reduction = Reduction::Sum;
  int64_t root = 0;
  ElementType dtype = ElementType::F32;
  uint64_t bytes = 0;
  /// This rank's value in, the result out (in the transport's payload
  /// memory; not read on a broadcast's other members).
  void *data = nullptr;
  /// For messages: "all_reduce sum of s0.opt[0]".
  std::string description;
};

/// What each member sends ahead of its value where members cannot
/// otherwise tell whether they agree (over MPI and NCCL): the receiver
/// compares it with its own.
struct CollectiveHeader {
  int32_t kind = 0, reduction = 0, dtype = 0, pad = 0;
  int64_t root = 0;
  uint64_t bytes = 0, groupHash = 0;

  static CollectiveHeader of(const CollectiveOp &op);
  bool operator==(const CollectiveHeader &other) const;
  /// "kind", "group order", "type", "reduction" or "root": the first
  /// field that differs.
  std::string differenceFrom(const CollectiveHeader &other) const;
};

/// FNV-1a of `members` in order.
uint64_t hashMembers(const std::vector<int64_t> &members);

/// `op.group` sorted into `members`; false with `error` (naming `rank`'s
/// op) unless it lists at least two distinct ranks of [0, ranks),
/// including `rank` and, for a broadcast, the root.
bool collectiveMembers(int64_t rank, int64_t ranks, const CollectiveOp &op,
                       std::vector<int64_t> &members, std::string &error);

/// Folds `value` into `acc` (`bytes` of `dtype` each, host memory) by
/// `reduction`, rounding each element to `dtype` (a NaN wins a max): the
/// all-reduce's step. False with `error` for a type it cannot fold.
bool foldCollective(CollectiveOp::Reduction reduction, ElementType dtype,
                    void *acc, const void *value, uint64_t bytes,
                    std::string &error);

class Device;
class DeviceEvent;
class DeviceTimeline;

/// The payload bytes one rank has moved to and from one peer.
struct PeerBytes {
  uint64_t sent = 0, received = 0;
};

class Transport {
public:
  virtual ~Transport();
  /// What `rank` has sent to and received from `peer` in completed ops
  /// since the transport was made (every implementation counts).
  PeerBytes bytesWith(int64_t rank, int64_t peer) const;
  /// The device whose memory payloads may be in (the transport moves them
  /// with that device's copies), or nullptr: host memory only, and a rank
  /// on another device stages its payloads through host memory.
  virtual const Device *payloadDevice() const { return nullptr; }
  /// The stream `rank`'s kernels run on (its fragment context's; nullptr,
  /// the default, is the device's default stream). A transport over device
  /// memory orders its work after the rank's work issued on it before a
  /// post, and the rank's work issued after a wait after the ops waited
  /// for, by events, without the host waiting for either; with a
  /// `timeline`, it marks its device work for the rank there too (a
  /// receive's copy, a group). Set before the rank posts; the host
  /// transports ignore it.
  virtual void setRankStream(int64_t rank, void *stream,
                             DeviceTimeline *timeline) {}
  /// Posts `group` for `rank` and returns without waiting: the ops go on
  /// while the rank runs other actions. The ops must stay where they are
  /// (the vector unchanged) until each has been waited for. False with
  /// `error` set when an op is refused or the transport was aborted.
  virtual bool post(int64_t rank, std::vector<TransportOp> &group,
                    std::string &error) = 0;
  /// Returns when every op in `ops` (posted by `rank`, not yet waited for)
  /// has completed, setting their `completed`. A transport may complete
  /// more of the rank's posted ops than asked (NCCL waits for its stream).
  /// False with `error` set on a mismatch, a deadlock, a timeout or an
  /// abort.
  virtual bool wait(int64_t rank, const std::vector<TransportOp *> &ops,
                    std::string &error) = 0;
  /// Whether posted ops move on while the rank computes. Where they move
  /// only inside the transport's own calls (MPI over shared memory pushes
  /// a large message in fragments from the sender's calls), the executor
  /// waits for each group at its end instead, which was measured faster
  /// (docs/benchmarks.md, "Posting transfers").
  virtual bool postedOpsMoveAlone() const { return true; }
  /// Posts `group` and waits for all of it: the rendezvous exchange.
  bool exchange(int64_t rank, std::vector<TransportOp> &group,
                std::string &error);
  /// Runs `op` for `rank`, returning when every member has reached it and
  /// `op.data` holds the result. False with `error` set on a disagreement,
  /// a deadlock, a timeout or an abort.
  virtual bool collective(int64_t rank, CollectiveOp &op,
                          std::string &error) = 0;
  /// `rank` has finished its list.
  virtual void finish(int64_t rank) = 0;
  /// Ends the step: every waiting rank wakes up and fails with `reason`.
  virtual void abort(const std::string &reason) = 0;

protected:
  /// Adds a completed op of `rank` to the counts.
  void countCompleted(int64_t rank, const TransportOp &op);

private:
  mutable std::mutex countMutex;
  std::map<std::pair<int64_t, int64_t>, PeerBytes> counts;
};

/// Ranks as threads of one process. All state sits behind one mutex; a
/// send and a receive pair when the second of them is posted. When every
/// rank that has not finished waits for incomplete ops (or in a
/// collective), nothing can change any more and the step fails with
/// "deadlock under rendezvous semantics", one line per blocked rank. With a
/// `device` that is not the host, payloads are in that device's memory and
/// each pair is one device-to-device copy on the transport's own stream,
/// ordered by events: after the work both ranks issued on their streams
/// before posting, and before the work each issues after waiting. The host
/// waits only for the partner's post, never for a copy.
class InProcessTransport final : public Transport {
public:
  explicit InProcessTransport(int64_t ranks, Device *device = nullptr);
  ~InProcessTransport() override;
  const Device *payloadDevice() const override { return device; }
  void setRankStream(int64_t rank, void *stream,
                     DeviceTimeline *timeline) override;
  bool post(int64_t rank, std::vector<TransportOp> &group,
            std::string &error) override;
  bool wait(int64_t rank, const std::vector<TransportOp *> &ops,
            std::string &error) override;
  bool collective(int64_t rank, CollectiveOp &op, std::string &error) override;
  void finish(int64_t rank) override;
  void abort(const std::string &reason) override;
  /// Starts another step: forgets every rank's list position, pending op
  /// and collective of the last one (the deadlock check knows one step: a
  /// rank that finished its list never posts again). Only while no rank is
  /// inside the transport; the byte counts stay.
  void reset();

private:
  /// The n-th collective over one set of members.
  struct Instance {
    CollectiveOp first;
    int64_t firstRank = 0;
    /// Each member's op, as it arrives.
    std::map<int64_t, CollectiveOp *> arrived;
    bool complete = false;
  };
  /// Called with the lock held by the last member to arrive: computes the
  /// result into every member's data.
  bool completeCollective(Instance &instance, std::string &error);
  /// Called with the lock held: fails the transport with `reason`.
  void abortLocked(const std::string &reason);

  struct Pending {
    int64_t rank;
    TransportOp *op;
    /// On a device: marks the rank's work issued before the post.
    std::shared_ptr<DeviceEvent> posted;
  };
  using Key = std::tuple<int64_t, int64_t, int64_t>; // src, dst, channel

  /// Pairs a send with a receive: copies the payload and completes both.
  /// Returns false with `error` set when they disagree.
  bool complete(Pending send, Pending recv, std::string &error);
  /// On a device: issues the pair's copy on the copy stream between its
  /// events (see the class comment).
  bool copyOnStream(const Pending &send, const Pending &recv,
                    std::string &error);
  /// Called with the lock held: aborts with a deadlock report when every
  /// unfinished rank waits.
  void checkDeadlock();

  std::mutex mutex;
  std::condition_variable changed;
  int64_t ranks;
  /// Where payloads live when not in host memory (see the class comment).
  Device *device;
  /// On a device: each rank's stream, the copies' stream (made by the first
  /// copy), and for each op paired but not yet waited for, the event after
  /// its copy.
  std::vector<void *> rankStreams;
  std::vector<DeviceTimeline *> timelines;
  void *copyStream = nullptr;
  std::map<const TransportOp *, std::shared_ptr<DeviceEvent>> copied;
  /// Called with the lock held: fails the transport with `error` (a post
  /// that cannot go on) and returns false.
  bool refuse(const std::string &error);

  std::vector<bool> finished;
  /// Per rank: the ops it waits for (nullptr when it is not in `wait`).
  std::vector<const std::vector<TransportOp *> *> waitingFor;
  /// Per rank: its posted ops that have not completed, in posting order.
  std::vector<std::vector<TransportOp *>> incomplete;
  std::map<Key, std::deque<Pending>> sends, recvs;
  /// Member set (sorted) -> its collectives in entry order; how many of
  /// them each rank has entered; the instance each rank waits in.
  std::map<std::vector<int64_t>, std::vector<std::unique_ptr<Instance>>>
      collectives;
  std::map<std::pair<int64_t, std::vector<int64_t>>, size_t> entered;
  std::vector<Instance *> inCollective;
  bool aborted = false;
  std::string abortReason;
};

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_TRANSPORT_H
