//===- Indexing.h - index expressions every emitter writes ------*- C++ -*-===//
//
// Row-major strides, NumPy-broadcast strides and the C expressions that
// index with them: what every target's emitter needs to turn an iteration
// index into the offsets of its operands.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LOWERING_INDEXING_H
#define TANDEM_LOWERING_INDEXING_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace tandem::lowering {

llvm::SmallVector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape);

/// Strides of a tensor of `inShape` read at the indices of `outShape` under
/// NumPy broadcasting: aligned from the right, 0 for a size-1 dimension.
llvm::SmallVector<int64_t> broadcastStrides(llvm::ArrayRef<int64_t> inShape,
                                            llvm::ArrayRef<int64_t> outShape);

/// "d0 * 64 + d1" for loop variables d0.. (or `names`, one per stride) and
/// `strides` (terms with stride 0 dropped), plus `base`; "0" when nothing
/// remains.
std::string offsetExpr(llvm::ArrayRef<int64_t> strides, int64_t base = 0,
                       llvm::ArrayRef<std::string> names = {});

} // namespace tandem::lowering

#endif // TANDEM_LOWERING_INDEXING_H
