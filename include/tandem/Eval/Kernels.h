//===- Kernels.h - the evaluator's op kernels -------------------*- C++ -*-===//
//
// One kernel per op, looked up by op name ("nn.add", "func.return"). A
// kernel computes its results in double; the interpreter then checks their
// shapes against the op's result types and rounds them to the result element
// types, so kernels never round (except nn.cast, which applies its own
// `saturate` choice). New dialects (mpmd, autodiff helpers) add kernels by
// registering more names.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_EVAL_KERNELS_H
#define TANDEM_EVAL_KERNELS_H

#include "tandem/Eval/Tensor.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tandem::eval {

class Interpreter;

/// What a kernel sees: the op, its evaluated operands, and the interpreter
/// (for parameters, options and calls).
struct KernelCall {
  mlir::Operation *op;
  llvm::ArrayRef<const Tensor *> operands;
  Interpreter &interpreter;
};

using KernelResult = llvm::Expected<std::vector<Tensor>>;
using Kernel = KernelResult (*)(const KernelCall &call);

class KernelRegistry {
public:
  /// The registry with every built-in kernel.
  static const KernelRegistry &getDefault();

  void add(llvm::StringRef opName, Kernel kernel);
  /// The kernel of `opName`, or nullptr.
  Kernel lookup(llvm::StringRef opName) const;
  /// Every op name with a kernel, sorted.
  std::vector<std::string> opNames() const;

private:
  llvm::StringMap<Kernel> kernels;
};

/// The op names the evaluator supports (the default registry's), sorted.
std::vector<std::string> supportedOps();

/// An error "<file:line:col>: '<op name>': <message>" for `op`.
llvm::Error opError(mlir::Operation *op, const llvm::Twine &message);

/// "file:line:col" of `loc` where it has one, else its printed form.
std::string formatLocation(mlir::Location loc);

// Each kernel file registers its kernels.
void registerElementwiseKernels(KernelRegistry &registry);
void registerLinalgKernels(KernelRegistry &registry);
void registerNormalizationKernels(KernelRegistry &registry);
void registerShapeKernels(KernelRegistry &registry);
void registerReductionKernels(KernelRegistry &registry);
void registerModelKernels(KernelRegistry &registry);
void registerCodecKernels(KernelRegistry &registry);

} // namespace tandem::eval

#endif // TANDEM_EVAL_KERNELS_H
