//===- Interpreter.h - the reference evaluator ------------------*- C++ -*-===//
//
// Evaluates a func.func of a module on the host: ops run one at a time in
// program order through the kernel registry, in double, each result rounded
// to its element type. Parameters (nn.parameter symbols) are an environment
// the caller provides, so training, finite differences and later the
// in-process execution of every pipeline rank reuse one interpreter.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_EVAL_INTERPRETER_H
#define TANDEM_EVAL_INTERPRETER_H

#include "tandem/Eval/Kernels.h"
#include "tandem/Eval/Tensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace tandem::eval {

/// Parameter values by parameter name (without '@').
using ParameterMap = std::map<std::string, Tensor>;

struct EvalOptions {
  /// Evaluate f32 ops in f64: results are not rounded to f32 (for
  /// finite-difference checks). Narrower types still round.
  bool f64 = false;
};

class Interpreter {
public:
  explicit Interpreter(
      mlir::ModuleOp module, EvalOptions options = {},
      const KernelRegistry &registry = KernelRegistry::getDefault());

  const EvalOptions &getOptions() const { return options; }
  mlir::ModuleOp getModule() const { return module; }

  void setParameters(ParameterMap values) { parameters = std::move(values); }
  const ParameterMap &getParameters() const { return parameters; }
  ParameterMap &getParameters() { return parameters; }

  /// Evaluates the function named `name` on `inputs`.
  llvm::Expected<std::vector<Tensor>> run(llvm::StringRef name,
                                          llvm::ArrayRef<Tensor> inputs);
  /// Evaluates `function` on `inputs` (checked against its signature).
  llvm::Expected<std::vector<Tensor>> call(mlir::func::FuncOp function,
                                           llvm::ArrayRef<Tensor> inputs);

  /// Evaluates the ops of `body` in order, its arguments bound to
  /// `arguments` (the caller has checked their types), and returns the
  /// values of the terminator's operands. Function calls and mpmd fragments
  /// both run through it. It only reads the IR, the parameters and the
  /// options, so several threads may evaluate blocks of one interpreter at
  /// once as long as nobody changes its parameters meanwhile.
  llvm::Expected<std::vector<Tensor>>
  evaluateBlock(mlir::Block &body, llvm::ArrayRef<Tensor> arguments);

private:
  mlir::ModuleOp module;
  EvalOptions options;
  const KernelRegistry &registry;
  ParameterMap parameters;
};

} // namespace tandem::eval

#endif // TANDEM_EVAL_INTERPRETER_H
