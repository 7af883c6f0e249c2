//===- RematTest.cpp - mpmd-remat's budget search against brute force ----===//
//
// The budget policy's search (remat::solve) must return, for every cap, a
// plan with the fewest recomputed FLOPs among all closed choices whose stash
// fits. These tests enumerate every choice independently of the solver: a
// recompute set R (any subset of the ops) is closed once every value that
// the backward or an op of R reads and that R does not produce is stashed.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/Transforms/Remat.h"

#include "gtest/gtest.h"

#include <limits>
#include <random>
#include <set>

using namespace tandem::mpmd::remat;

namespace {

/// Fewest FLOPs over all recompute sets of a one-consumer graph whose
/// stash fits `cap`, by enumerating the 2^n subsets.
double bruteForce(const Graph &graph, int64_t cap) {
  int n = graph.nodes.size();
  double best = std::numeric_limits<double>::infinity();
  for (uint32_t r = 0; r < (1u << n); ++r) {
    std::set<ValueRef> stashed;
    double flops = 0;
    auto read = [&](ValueRef v) {
      if (!(r & (1u << v.first)))
        stashed.insert(v);
    };
    for (ValueRef v : graph.needs[0])
      read(v);
    for (int i = 0; i < n; ++i)
      if (r & (1u << i)) {
        flops += graph.nodes[i].flops;
        for (ValueRef v : graph.nodes[i].operands)
          read(v);
      }
    int64_t bytes = 0;
    for (ValueRef v : stashed)
      bytes += graph.nodes[v.first].resultBytes[v.second];
    if (bytes <= cap)
      best = std::min(best, flops);
  }
  return best;
}

/// A plan is closed: every op a consumer recomputes reads only values that
/// consumer recomputes earlier or receives as stash.
void expectClosed(const Graph &graph, const Plan &plan) {
  for (size_t c = 0; c < graph.needs.size(); ++c) {
    std::set<int> recomputed;
    std::set<ValueRef> stashed(plan.stashed[c].begin(), plan.stashed[c].end());
    auto available = [&](ValueRef v) {
      return recomputed.count(v.first) || stashed.count(v);
    };
    for (int n : plan.recompute[c]) {
      for (ValueRef v : graph.nodes[n].operands)
        EXPECT_TRUE(available(v)) << "node " << n << " reads " << v.first;
      recomputed.insert(n);
    }
    for (ValueRef v : graph.needs[c])
      EXPECT_TRUE(available(v));
  }
}

Node node(double flops, std::initializer_list<int64_t> bytes,
          std::initializer_list<ValueRef> operands = {}) {
  Node n;
  n.flops = flops;
  n.resultBytes.assign(bytes);
  n.operands.assign(operands);
  return n;
}

// A layer in miniature: x -> matmul (100 FLOPs) -> cheap (2) -> matmul
// (100) -> cheap (2), the backward reading both cheap results and the
// second matmul's. Each value is 8 bytes.
Graph layer() {
  Graph g;
  g.nodes.push_back(node(100, {8}));           // 0: matmul of the input
  g.nodes.push_back(node(2, {8}, {{0, 0}}));   // 1: gelu
  g.nodes.push_back(node(100, {8}, {{1, 0}})); // 2: matmul
  g.nodes.push_back(node(2, {8}, {{2, 0}}));   // 3: gelu
  g.needs.push_back({{1, 0}, {2, 0}, {3, 0}});
  return g;
}

TEST(RematSolver, MixesStashingAndRecomputing) {
  Graph g = layer();
  // 24 bytes keep all three needed values: nothing to recompute.
  EXPECT_EQ(solve(g, 24)->plan.flops, 0);
  // 16 bytes: keep the two matmul-derived values that are dear to make
  // again, recompute one gelu (2 FLOPs): the answer mixes both.
  std::optional<Solution> s = solve(g, 16);
  ASSERT_TRUE(s && s->optimal);
  EXPECT_EQ(s->plan.flops, 2);
  EXPECT_EQ(s->plan.stashBytes, 16);
  EXPECT_EQ(s->plan.recompute[0], (llvm::SmallVector<int>{3}));
  // 8 bytes: keep the first gelu and recompute the second matmul and gelu
  // from it (102 FLOPs), rather than keep the second matmul's output and
  // recompute the first matmul and both gelus (104).
  s = solve(g, 8);
  EXPECT_EQ(s->plan.flops, 102);
  EXPECT_EQ(s->plan.recompute[0], (llvm::SmallVector<int>{2, 3}));
  EXPECT_EQ(s->plan.stashBytes, 8);
  // 0 bytes: everything (204 FLOPs).
  EXPECT_EQ(solve(g, 0)->plan.flops, 204);
  EXPECT_FALSE(solve(g, -1).has_value());
  for (int64_t cap : {0, 8, 16, 24}) {
    EXPECT_EQ(solve(g, cap)->plan.flops, bruteForce(g, cap)) << cap;
    expectClosed(g, solve(g, cap)->plan);
  }
}

// Random DAGs of 12 ops (some with two results, some reading only
// fragment arguments), random FLOPs and bytes, random needs: for every cap
// from 0 to the full stash, the search equals the enumeration.
TEST(RematSolver, EqualsExhaustiveSearchOnRandomGraphs) {
  std::mt19937 rng(20261130);
  const double flopChoices[] = {0, 1, 4, 30, 100};
  int mixed = 0;
  for (int trial = 0; trial < 40; ++trial) {
    Graph g;
    int n = 12;
    for (int i = 0; i < n; ++i) {
      Node nd;
      nd.flops = flopChoices[rng() % 5];
      nd.resultBytes.push_back(1 + rng() % 16);
      if (rng() % 4 == 0)
        nd.resultBytes.push_back(1 + rng() % 16);
      int operands = i == 0 ? 0 : rng() % 3;
      for (int k = 0; k < operands; ++k) {
        int p = rng() % i;
        nd.operands.push_back(
            {p, static_cast<int>(rng() % g.nodes[p].resultBytes.size())});
      }
      g.nodes.push_back(nd);
    }
    g.needs.emplace_back();
    for (int k = 0; k < 4; ++k) {
      int p = rng() % n;
      ValueRef v{p, static_cast<int>(rng() % g.nodes[p].resultBytes.size())};
      if (llvm::find(g.needs[0], v) == g.needs[0].end())
        g.needs[0].push_back(v);
    }
    llvm::SmallVector<bool> keepAll(n, true);
    int64_t all = evaluate(g, keepAll).stashBytes;
    for (int64_t cap = 0; cap <= all; ++cap) {
      std::optional<Solution> s = solve(g, cap);
      ASSERT_TRUE(s && s->optimal);
      ASSERT_EQ(s->plan.flops, bruteForce(g, cap))
          << "trial " << trial << " cap " << cap;
      EXPECT_LE(s->plan.stashBytes, cap);
      expectClosed(g, s->plan);
      mixed += s->plan.flops > 0 && s->plan.stashBytes > 0;
    }
  }
  // The random caps do exercise plans that both keep and recompute.
  EXPECT_GT(mixed, 0);
}

// Two consumers (bwd_input and bwd_weight) recompute separately: a node
// both need costs twice, kept values count once.
TEST(RematSolver, TwoConsumersPayTwiceKeepOnce) {
  Graph g;
  g.nodes.push_back(node(100, {8}));         // 0
  g.nodes.push_back(node(3, {8}, {{0, 0}})); // 1
  g.needs.push_back({{1, 0}});
  g.needs.push_back({{1, 0}});
  EXPECT_EQ(solve(g, 8)->plan.flops, 0);
  EXPECT_EQ(solve(g, 8)->plan.stashBytes, 8);
  Plan full = solve(g, 0)->plan;
  EXPECT_EQ(full.flops, 206);
  expectClosed(g, full);
  Plan keepFirst = evaluate(g, {true, false});
  EXPECT_EQ(keepFirst.flops, 6);
  EXPECT_EQ(keepFirst.stashBytes, 8);
}

} // namespace
