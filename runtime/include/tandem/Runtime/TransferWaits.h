//===- TransferWaits.h - when posted transfers are waited for -*- C++ -*-===//
//
// A rank posts each group of consecutive sends and receives and goes on
// running its list; it waits for an op only where the list needs it done
// (docs/pipeline-eval.md, "Posting and waiting"). Where that is, is part of
// the compiled program's contract: the memory plan keeps a sent slot's
// bytes until its wait and a received slot's from its post, and the
// executor waits exactly there, so the planner (computeLiveness), the
// manifest reader (checkMemoryPlan), the executor and the step timer all
// take the points from this one function. No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_TRANSFERWAITS_H
#define TANDEM_RUNTIME_TRANSFERWAITS_H

#include "tandem/Runtime/MemoryPlan.h"

#include <cstdint>
#include <vector>

namespace tandem::runtime {

/// Per action of `rank`: for a send or receive, the index of the action
/// after which the rank waits for it; -1 for runs and collectives. With
/// the op's group [first, last] and n the first send, receive or
/// collective after the group (the list's end if none):
///  - a send is waited after action n - 1: before the rank posts anything
///    else, so at most one group's sends are in flight and each sent slot
///    lives at most until the next group;
///  - a receive is waited right before the first action that reads its
///    slot (a run's argument, a send of it, a collective on it; a reader
///    inside a group counts at the group's first action), never later than
///    n' - 1 for the first collective n' after the group, and at the end
///    of the list if nothing reads it; a receive whose slot a runtime
///    sum_microbatches argument adds up is waited after `last`, since the
///    sum takes its slots as they arrive.
/// Every value is in [last, size - 1]. Waiting later than the rendezvous
/// exchange (every op done at `last`) can never block a rank where the
/// exchange would not: ranks only reach their posts sooner.
std::vector<int64_t> transferWaits(const RankDescription &rank);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_TRANSFERWAITS_H
