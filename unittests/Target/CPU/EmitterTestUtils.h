//===- EmitterTestUtils.h - run emitted code next to the evaluator -*- C++
//-*-===//

#ifndef TANDEM_UNITTESTS_TARGET_CPU_EMITTERTESTUTILS_H
#define TANDEM_UNITTESTS_TARGET_CPU_EMITTERTESTUTILS_H

#include "tandem/Eval/Interpreter.h"
#include "tandem/Target/CPU/Compiler.h"
#include "tandem/Target/CPU/CppEmitter.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace tandem::cpu::testing {

/// A context with every Tandem dialect loaded.
std::unique_ptr<mlir::MLIRContext> makeContext();

/// Parses `text`, or fails with the parser's diagnostics.
llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
parseModule(mlir::MLIRContext &context, llvm::StringRef text);

/// Runs passes on `module` (`pipeline` lists module passes, e.g.
/// "nn-autodiff,nn-optimizer"), failing with their diagnostics.
llvm::Error runPipeline(mlir::ModuleOp module, llvm::StringRef pipeline);

/// A shared library opened with dlopen, closed on destruction.
class Library {
public:
  static llvm::Expected<std::unique_ptr<Library>> open(const std::string &path);
  ~Library();
  void *lookup(const std::string &symbol) const;

private:
  explicit Library(void *handle) : handle(handle) {}
  void *handle;
};

/// Emitted, compiled and loaded functions.
struct Compiled {
  EmitResult emitted;
  std::unique_ptr<Library> library;
  const EmittedFunction *find(llvm::StringRef name) const;
};

/// Emits `functions` as one translation unit, compiles and loads it.
/// Emitter diagnostics become the error's message. `compile` chooses the
/// compiler's target and flags (default: $TANDEM_CPU_ARCH or native).
llvm::Expected<Compiled>
emitAndCompile(llvm::ArrayRef<mlir::Operation *> functions,
               const EmitOptions &options = {},
               const CompileOptions &compile = {});

/// Calls the compiled `function` on `inputs` (its arguments, then its
/// parameter slots) and returns its results.
llvm::Expected<std::vector<eval::Tensor>>
runCompiled(const Compiled &compiled, const EmittedFunction &function,
            llvm::ArrayRef<eval::Tensor> inputs);

/// How random inputs are drawn.
struct InputRange {
  /// Floats uniformly in [low, high), rounded to the element type.
  double low = -2.0, high = 2.0;
  /// Integers uniformly in [0, intBound).
  int64_t intBound = 4;
};

/// A random tensor of `type`.
eval::Tensor randomTensor(mlir::RankedTensorType type, std::mt19937 &rng,
                          const InputRange &range);

/// The bound on the relative error of `body`'s results between the
/// generated code and the evaluator, by the model of python/tests/
/// tolerance.py ("native", docs/testing.md): only the f32 GEMMs (OpenBLAS,
/// summing in an order that depends on the CPU) differ from the evaluator's
/// arithmetic; each adds the probabilistic bound 3·sqrt(K + 1)·2^-24 of its
/// length-K dot products to the largest error of its operands.
double nativeErrorBound(mlir::Block &body);

/// ‖a − b‖ / ‖b‖ over all elements (‖a − b‖ when b is zero; infinity when
/// the shapes differ or an element is NaN in one tensor only).
double relativeError(const eval::Tensor &a, const eval::Tensor &b);

/// Runs `name` through the evaluator (parameters from `parameters`) and
/// through the compiled code on the same random arguments; returns the
/// relative error of every result.
llvm::Expected<std::vector<double>>
compareWithEvaluator(mlir::ModuleOp module, const Compiled &compiled,
                     llvm::StringRef name, const eval::ParameterMap &parameters,
                     std::mt19937 &rng, const InputRange &range);

/// Runs `name` from two compilations (e.g. fused and unfused) on the same
/// random arguments and `parameters`; returns how many results are not
/// bitwise equal.
llvm::Expected<unsigned>
countDifferingResults(const Compiled &a, const Compiled &b,
                      llvm::StringRef name,
                      const eval::ParameterMap &parameters, std::mt19937 &rng,
                      const InputRange &range);

} // namespace tandem::cpu::testing

#endif // TANDEM_UNITTESTS_TARGET_CPU_EMITTERTESTUTILS_H
