//===- EvalTestUtils.h - helpers for the evaluator's tests ------*- C++ -*-===//

#ifndef TANDEM_UNITTESTS_EVAL_EVALTESTUTILS_H
#define TANDEM_UNITTESTS_EVAL_EVALTESTUTILS_H

#include "tandem/Eval/Interpreter.h"
#include "tandem/InitAll.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <memory>
#include <string>

namespace tandem::eval::test {

/// A context with Tandem's dialects and a parsed module.
struct Program {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

inline Program parse(const std::string &source) {
  mlir::DialectRegistry registry;
  tandem::registerAllDialects(registry);
  Program program;
  program.context = std::make_unique<mlir::MLIRContext>(registry);
  program.module =
      mlir::parseSourceString<mlir::ModuleOp>(source, program.context.get());
  return program;
}

/// A tensor of `type` (parsed, e.g. "tensor<2x3xf32>") holding `values`.
inline Tensor tensorOf(mlir::MLIRContext *context, const std::string &type,
                       std::vector<double> values) {
  auto parsed =
      llvm::cast<mlir::RankedTensorType>(mlir::parseType(type, context));
  Tensor tensor(parsed);
  tensor.data = std::move(values);
  return tensor;
}

/// Evaluates @f of `source` on `inputs`; fails the test on an error.
inline std::vector<Tensor> evaluate(const Program &program,
                                    std::vector<Tensor> inputs,
                                    EvalOptions options = {},
                                    ParameterMap parameters = {}) {
  Interpreter interpreter(*program.module, options);
  interpreter.setParameters(std::move(parameters));
  auto results = interpreter.run("f", inputs);
  if (!results) {
    ADD_FAILURE() << llvm::toString(results.takeError());
    return {};
  }
  return std::move(*results);
}

/// Evaluates and returns the error message ("" when it succeeds).
inline std::string evaluateError(const Program &program,
                                 std::vector<Tensor> inputs,
                                 const std::string &function = "f") {
  Interpreter interpreter(*program.module);
  auto results = interpreter.run(function, inputs);
  if (results)
    return "";
  return llvm::toString(results.takeError());
}

} // namespace tandem::eval::test

#endif // TANDEM_UNITTESTS_EVAL_EVALTESTUTILS_H
