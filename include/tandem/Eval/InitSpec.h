//===- InitSpec.h - an nn.parameter's runtime initializer -------*- C++ -*-===//
//
// The one translation of an nn.parameter's initializer into the runtime's
// InitSpec (kind, a, b, its padding, its matrix shape, its own seed): the
// evaluator initializes with it and the rank lowering writes it into the
// manifest, so both draw the same bits. Needs the runtime's headers
// (runtime/include) on the include path.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_EVAL_INITSPEC_H
#define TANDEM_EVAL_INITSPEC_H

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Runtime/Init.h"

namespace tandem::eval {

/// `parameter`'s InitSpec. The verifier checked what setPadding and
/// setMatrix need.
rng::InitSpec initSpecOf(nn::ParameterOp parameter);

} // namespace tandem::eval

#endif // TANDEM_EVAL_INITSPEC_H
