//===- Transport.h - message passing between pipeline ranks -----*- C++ -*-===//
//
// What the pipeline executor needs from communication, and nothing more:
// posting a group of sends and receives and waiting for all of them,
// collectives over a group of ranks, and a way to stop every rank. The
// in-process transport below runs all ranks of a step as threads of one
// process; an MPI or NCCL transport implements the same interface later.
//
// Semantics (docs/mpmd.md): a send completes only when the matching receive
// is posted (rendezvous); messages from rank a to rank b on channel c match
// in the order they are posted; a rank moves past a group when all of its
// ops have completed; a collective completes when every member reached it,
// and the n-th collective a rank enters over a set of members matches the
// n-th of every other member.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_EVAL_TRANSPORT_H
#define TANDEM_EVAL_TRANSPORT_H

#include "tandem/Eval/Rounding.h"
#include "tandem/Eval/Tensor.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace tandem::eval {

/// One send or receive of a group.
struct Message {
  enum class Kind { Send, Recv };
  Kind kind = Kind::Send;
  /// The other rank, and the ordered stream the message belongs to.
  int64_t peer = 0;
  int64_t channel = 0;
  /// The static type both ends declare and the element type on the wire;
  /// a paired send and receive must agree on both.
  mlir::RankedTensorType type;
  mlir::Type wire;
  /// The slot both ends name ("@f[0] microbatch 1"); they must agree.
  std::string slot;
  /// For a send, the value as it travels (the sender has rounded it to the
  /// wire type); for a receive, filled in when it completes.
  Tensor payload;
  /// The op for messages: "send of @f[0] microbatch 1 to rank 1 on
  /// channel 0 (file:line:col)".
  std::string what;
  /// Set by the transport when the op has completed.
  bool completed = false;
};

enum class Reduction { Sum, Max };

/// One collective as a member enters it.
struct Collective {
  enum class Kind { AllReduce, Broadcast };
  Kind kind = Kind::AllReduce;
  /// All-reduce only.
  Reduction reduction = Reduction::Sum;
  /// The members, in reduction order.
  llvm::SmallVector<int64_t> group;
  /// Broadcast only: the member whose value everyone receives.
  int64_t root = 0;
  mlir::RankedTensorType type;
  /// How each partial reduction is rounded to the element type.
  RoundingOptions rounding;
  /// The op, for messages.
  std::string what;
};

/// `acc = round(acc op x)` elementwise, rounded to acc's element type as the
/// evaluator's nn.add / nn.maximum kernels would (NaN wins a max).
void combineInto(Tensor &acc, const Tensor &x, Reduction reduction,
                 RoundingOptions rounding);

class Transport {
public:
  virtual ~Transport();

  /// Posts every op of `group` for `rank` at once and returns when all of
  /// them have completed; received payloads are then in the receives'
  /// messages. Fails if the step is aborted, on a deadlock, or when a pair
  /// disagrees on type, wire type or slot.
  virtual llvm::Error exchange(int64_t rank,
                               llvm::MutableArrayRef<Message> group) = 0;

  /// Enters `op` with this rank's `value` (its contribution, or for a
  /// broadcast the root's value) and returns when every member has entered
  /// it; `value` then holds the result, bitwise the same on every member.
  virtual llvm::Error collective(int64_t rank, const Collective &op,
                                 Tensor &value) = 0;

  /// `rank` reached the end of its action list.
  virtual void finish(int64_t rank) = 0;

  /// Stops the step: every pending and later operation of every rank fails
  /// with the first reason given.
  virtual void abort(const std::string &reason) = 0;
  virtual bool isAborted() const = 0;
};

/// All ranks as threads of this process, synchronized by one mutex and one
/// condition variable. When every rank that has not finished waits for
/// something that cannot happen any more, the step fails with a message
/// naming each blocked rank and what it waits for, instead of hanging.
class InProcessTransport : public Transport {
public:
  explicit InProcessTransport(int64_t numRanks);
  ~InProcessTransport() override;

  llvm::Error exchange(int64_t rank,
                       llvm::MutableArrayRef<Message> group) override;
  llvm::Error collective(int64_t rank, const Collective &op,
                         Tensor &value) override;
  void finish(int64_t rank) override;
  void abort(const std::string &reason) override;
  bool isAborted() const override;

private:
  struct State;
  std::unique_ptr<State> state;
};

} // namespace tandem::eval

#endif // TANDEM_EVAL_TRANSPORT_H
