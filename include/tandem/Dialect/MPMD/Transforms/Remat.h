//===- Remat.h - The stash/recompute choice of mpmd-remat -------*- C++ -*-===//
//
// mpmd-remat decides, for each (stage, chunk), which values of the forward
// fragment the backward fragments receive as a stash and which they
// recompute. This header is the decision itself, on a graph that abstracts
// the forward fragment's ops (FLOPs to recompute, bytes of each result,
// operands), so that the budget search can be tested against exhaustive
// enumeration without building IR. docs/mpmd.md, "mpmd-remat".
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_MPMD_TRANSFORMS_REMAT_H
#define TANDEM_DIALECT_MPMD_TRANSFORMS_REMAT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace tandem::mpmd::remat {

/// A value of the forward fragment: (node, result number).
using ValueRef = std::pair<int, int>;

/// One op of the forward fragment.
struct Node {
  /// FLOPs of running the op once (the cost model's).
  double flops = 0.0;
  /// Bytes of each result.
  llvm::SmallVector<int64_t> resultBytes;
  /// The operands that ops of the fragment define. Operands that are
  /// fragment arguments (stage inputs, parameters) are available to every
  /// backward fragment anyway and are not listed.
  llvm::SmallVector<ValueRef> operands;
};

struct Graph {
  /// The ops in program order, which is a topological order.
  llvm::SmallVector<Node> nodes;
  /// For each backward fragment (consumer), the values it reads from the
  /// forward fragment. At most 32 consumers.
  llvm::SmallVector<llvm::SmallVector<ValueRef>> needs;
};

/// What a stash choice costs. `stash[n]` says that node n's results are
/// kept from the forward; every value a consumer needs that is not kept is
/// recomputed by that consumer, along with what it needs in turn, so the
/// recomputed set is closed by construction.
struct Plan {
  llvm::SmallVector<bool> stash;
  /// Per consumer, the nodes it recomputes, in program order.
  llvm::SmallVector<llvm::SmallVector<int>> recompute;
  /// Per consumer, the kept values it reads, in program order.
  llvm::SmallVector<llvm::SmallVector<ValueRef>> stashed;
  /// Bytes of the distinct kept values (one microbatch's stash).
  int64_t stashBytes = 0;
  /// FLOPs recomputed per microbatch, summed over the consumers (a node two
  /// consumers recompute counts twice).
  double flops = 0.0;
};

/// The plan of a stash choice (one flag per node; flags of nodes nothing
/// needs are ignored and cleared in the result).
Plan evaluate(const Graph &graph, llvm::ArrayRef<bool> stash);

struct Solution {
  Plan plan;
  /// False when the search stopped at its node limit: the plan fits but
  /// may not be the one with the fewest FLOPs.
  bool optimal = true;
};

/// The stash choice with the fewest recomputed FLOPs whose stash bytes are
/// at most `capBytes` (ties: fewer bytes, then the first found); nullopt
/// only for a negative cap, since recomputing everything stashes nothing.
/// Branch and bound over the nodes in reverse program order, each needed
/// node kept or recomputed; it prunes a branch whose bytes exceed the cap
/// or whose FLOPs already reach the best found (both only grow), and stops
/// after `nodeLimit` branches.
std::optional<Solution> solve(const Graph &graph, int64_t capBytes,
                              int64_t nodeLimit = int64_t(1) << 22);

} // namespace tandem::mpmd::remat

#endif // TANDEM_DIALECT_MPMD_TRANSFORMS_REMAT_H
