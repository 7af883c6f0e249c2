//===- TransferOrder.h - one order per rank pair, for NCCL ------*- C++ -*-===//
//
// A transport with tags (MPI, the in-process one) pairs a send with the
// receive of the same channel and sequence number, in whatever order the
// two ranks post them. NCCL has no tags: it pairs the k-th message rank a
// sends to rank b with the k-th receive b posts from a, across channels.
// Before a job runs over NCCL, every directed pair of ranks' programs must
// therefore agree on one order; this check compares the manifests' action
// lists and names the first disagreement. docs/runtime.md, "NCCL".
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_TRANSFERORDER_H
#define TANDEM_RUNTIME_TRANSFERORDER_H

#include "tandem/Runtime/Manifest.h"

#include <string>
#include <vector>

namespace tandem::runtime {

/// Whether, for every directed pair (a, b) of `ranks` (rank r's manifest at
/// index r), a's sends to b and b's receives from a name the same messages
/// (channel and sequence number) in the same order, counting a collective
/// where it carries messages between the two (NcclTransport.h). False with
/// `error` naming both ranks, the position and the two messages.
bool transferOrdersAgree(const std::vector<Manifest> &ranks,
                         std::string &error);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_TRANSFERORDER_H
