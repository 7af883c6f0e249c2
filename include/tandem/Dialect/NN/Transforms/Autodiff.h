//===- Autodiff.h - what nn-autodiff can differentiate ----------*- C++ -*-===//

#ifndef TANDEM_DIALECT_NN_TRANSFORMS_AUTODIFF_H
#define TANDEM_DIALECT_NN_TRANSFORMS_AUTODIFF_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <utility>
#include <vector>

namespace tandem::nn {

/// Unit attribute on the adds nn-autodiff creates to sum the contributions
/// of several reads of one parameter into its gradient.
constexpr llvm::StringLiteral kGradSumAttrName = "nn.grad_sum";

/// The op names ("nn.add", ...) nn-autodiff has a gradient rule for, sorted.
/// nn.attention is differentiated through its decomposition.
std::vector<std::string> opsWithGradientRules();

/// The nn ops nn-autodiff deliberately does not differentiate, each with the
/// reason, sorted by name.
std::vector<std::pair<std::string, std::string>> nonDifferentiableOps();

} // namespace tandem::nn

#endif // TANDEM_DIALECT_NN_TRANSFORMS_AUTODIFF_H
