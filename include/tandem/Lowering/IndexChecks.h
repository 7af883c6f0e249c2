//===- IndexChecks.h - indices generated code checks ------------*- C++ -*-===//
//
// The ops that read an index (an embedding's id, a loss's target) and must
// find it in [0, bound): every target checks it where its code reads it and
// reports a failure in the fragment's status word (FragmentABI.h), naming
// an entry of the rank manifest's `index_checks`, so the runtime's message
// names the op, its source location, the position and the value on every
// target alike (docs/targets.md, "Index checks"). The descriptions live in
// the manifest, not the library: a library's code stays independent of
// source locations, so the compile cache still finds it.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LOWERING_INDEXCHECKS_H
#define TANDEM_LOWERING_INDEXCHECKS_H

#include "tandem/Runtime/Manifest.h"

#include "mlir/IR/Operation.h"

#include <vector>

namespace tandem::lowering {

/// The checks of one generated translation unit, numbered in the order the
/// code reaches them: the numbering depends on the code alone.
class IndexCheckTable {
public:
  /// The number of the check of the index `op` reads (nn.embedding and
  /// its gradient, nn.one_hot, nn.cross_entropy and its gradient).
  unsigned add(mlir::Operation *op);
  const std::vector<runtime::IndexCheckInfo> &entries() const { return checks; }

private:
  std::vector<runtime::IndexCheckInfo> checks;
};

} // namespace tandem::lowering

#endif // TANDEM_LOWERING_INDEXCHECKS_H
