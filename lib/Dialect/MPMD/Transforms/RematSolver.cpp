//===- RematSolver.cpp - The stash/recompute choice of mpmd-remat ---------===//
//
// Both functions walk the forward ops in reverse program order: by the time
// an op is reached, every consumer of its results has been decided, so the
// set of consumers that need each result is final. A needed op is then
// either kept (its needed results are stashed, once for all consumers) or
// recomputed by each consumer that needs it, which makes its operands
// needed by those consumers.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/Transforms/Remat.h"

#include "llvm/ADT/bit.h"

#include <algorithm>
#include <cassert>

using namespace tandem::mpmd::remat;

namespace {

/// need[n][r]: bit c set when consumer c needs result r of node n.
using NeedMasks = llvm::SmallVector<llvm::SmallVector<uint32_t, 2>>;

NeedMasks initialNeeds(const Graph &graph) {
  assert(graph.needs.size() <= 32 && "at most 32 consumers");
  NeedMasks need(graph.nodes.size());
  for (auto [n, node] : llvm::enumerate(graph.nodes))
    need[n].assign(node.resultBytes.size(), 0);
  for (auto [c, values] : llvm::enumerate(graph.needs))
    for (ValueRef v : values)
      need[v.first][v.second] |= 1u << c;
  return need;
}

uint32_t nodeMask(const NeedMasks &need, int n) {
  uint32_t mask = 0;
  for (uint32_t m : need[n])
    mask |= m;
  return mask;
}

int64_t keptBytes(const Graph &graph, const NeedMasks &need, int n) {
  int64_t bytes = 0;
  for (auto [r, m] : llvm::enumerate(need[n]))
    if (m)
      bytes += graph.nodes[n].resultBytes[r];
  return bytes;
}

struct Search {
  const Graph &graph;
  int64_t cap;
  int64_t nodeLimit;
  int64_t visited = 0;
  bool stopped = false;
  NeedMasks need;
  llvm::SmallVector<bool> stash;
  // The best choice so far: recompute everything until something better.
  llvm::SmallVector<bool> best;
  double bestFlops;
  int64_t bestBytes;

  bool better(double flops, int64_t bytes) const {
    return flops < bestFlops || (flops == bestFlops && bytes < bestBytes);
  }

  void visit(int n, int64_t bytes, double flops) {
    if (stopped)
      return;
    if (++visited > nodeLimit) {
      stopped = true;
      return;
    }
    if (!better(flops, bytes))
      return;
    if (n < 0) {
      best = stash;
      bestFlops = flops;
      bestBytes = bytes;
      return;
    }
    uint32_t mask = nodeMask(need, n);
    if (!mask) {
      visit(n - 1, bytes, flops);
      return;
    }
    // Keeping first finds cheap plans early, which prunes the rest.
    int64_t kept = keptBytes(graph, need, n);
    if (bytes + kept <= cap) {
      stash[n] = true;
      visit(n - 1, bytes + kept, flops);
      stash[n] = false;
    }
    const Node &node = graph.nodes[n];
    llvm::SmallVector<uint32_t, 4> saved;
    for (ValueRef v : node.operands) {
      saved.push_back(need[v.first][v.second]);
      need[v.first][v.second] |= mask;
    }
    visit(n - 1, bytes, flops + node.flops * llvm::popcount(mask));
    // In reverse: an op may read one value twice (x * x), and the first
    // saved mask is the one before both.
    for (int k = static_cast<int>(saved.size()) - 1; k >= 0; --k)
      need[node.operands[k].first][node.operands[k].second] = saved[k];
  }
};

} // namespace

Plan tandem::mpmd::remat::evaluate(const Graph &graph,
                                   llvm::ArrayRef<bool> stash) {
  size_t numConsumers = graph.needs.size();
  Plan plan;
  plan.stash.assign(graph.nodes.size(), false);
  plan.recompute.resize(numConsumers);
  plan.stashed.resize(numConsumers);
  NeedMasks need = initialNeeds(graph);
  for (int n = static_cast<int>(graph.nodes.size()) - 1; n >= 0; --n) {
    uint32_t mask = nodeMask(need, n);
    if (!mask)
      continue;
    const Node &node = graph.nodes[n];
    if (stash[n]) {
      plan.stash[n] = true;
      plan.stashBytes += keptBytes(graph, need, n);
      // Results in reverse so that the reversed lists end up ascending.
      for (int r = static_cast<int>(need[n].size()) - 1; r >= 0; --r)
        for (size_t c = 0; c < numConsumers; ++c)
          if (need[n][r] & (1u << c))
            plan.stashed[c].push_back({n, r});
      continue;
    }
    for (size_t c = 0; c < numConsumers; ++c)
      if (mask & (1u << c)) {
        plan.recompute[c].push_back(n);
        plan.flops += node.flops;
      }
    for (ValueRef v : node.operands)
      need[v.first][v.second] |= mask;
  }
  for (size_t c = 0; c < numConsumers; ++c) {
    std::reverse(plan.recompute[c].begin(), plan.recompute[c].end());
    std::reverse(plan.stashed[c].begin(), plan.stashed[c].end());
  }
  return plan;
}

std::optional<Solution> tandem::mpmd::remat::solve(const Graph &graph,
                                                   int64_t capBytes,
                                                   int64_t nodeLimit) {
  if (capBytes < 0)
    return std::nullopt;
  Search search{graph, capBytes, nodeLimit};
  search.need = initialNeeds(graph);
  search.stash.assign(graph.nodes.size(), false);
  search.best.assign(graph.nodes.size(), false);
  Plan everything = evaluate(graph, search.best);
  search.bestFlops = everything.flops;
  search.bestBytes = everything.stashBytes;
  // The incumbent itself is a leaf the search may reach again; start it
  // just above so that an equal plan found first is not lost.
  search.bestBytes += 1;
  search.visit(static_cast<int>(graph.nodes.size()) - 1, 0, 0.0);
  Solution solution;
  solution.plan = evaluate(graph, search.best);
  solution.optimal = !search.stopped;
  return solution;
}
