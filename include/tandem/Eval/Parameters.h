//===- Parameters.h - parameter values for the evaluator --------*- C++ -*-===//
//
// Parameter values come from each nn.parameter's initializer (through the
// runtime's counter-based generator, so tandem-eval and the runtime produce
// bitwise the same values) or from a safetensors file whose tensors must
// match the module's parameters exactly: same names, shapes and dtypes.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_EVAL_PARAMETERS_H
#define TANDEM_EVAL_PARAMETERS_H

#include "tandem/Eval/Interpreter.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace tandem::st {
struct Tensor;
enum class DType;
} // namespace tandem::st

namespace tandem::eval {

/// Initializes every nn.parameter of `module` from its initializer with
/// `seed`. f32 parameters are filled by tandem::rng::initFill's float form
/// (what the runtime does); other float types by its double form, rounded to
/// nearest even.
llvm::Expected<ParameterMap> initializeParameters(mlir::ModuleOp module,
                                                  uint64_t seed);

/// Reads `path` and checks it holds exactly the module's parameters with
/// their shapes and dtypes.
llvm::Expected<ParameterMap> loadParameters(mlir::ModuleOp module,
                                            const std::string &path);

/// Writes `parameters` to `path` in their element types.
llvm::Error saveParameters(const ParameterMap &parameters,
                           const std::string &path);

/// The safetensors dtype of an element type, or an error.
llvm::Expected<st::DType> dtypeOf(mlir::Type elementType);
/// Encodes a tensor as safetensors bytes (values rounded to its type).
llvm::Expected<st::Tensor> toSafetensors(const Tensor &tensor);
/// Decodes safetensors bytes into a tensor of `elementType`.
Tensor fromSafetensors(const st::Tensor &tensor, mlir::Type elementType);

} // namespace tandem::eval

#endif // TANDEM_EVAL_PARAMETERS_H
