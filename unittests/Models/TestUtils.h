//===- TestUtils.h - helpers for the model builder tests --------*- C++ -*-===//

#ifndef TANDEM_UNITTESTS_MODELS_TESTUTILS_H
#define TANDEM_UNITTESTS_MODELS_TESTUTILS_H

#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace tandem::models::testing {

/// The error's message, or "" for success (consumes the error).
inline std::string message(llvm::Error err) {
  if (!err)
    return "";
  return llvm::toString(std::move(err));
}

/// The parameter's type printed, e.g. "tensor<256x32xf32>", or "missing".
inline std::string paramType(mlir::ModuleOp module, llvm::StringRef name) {
  auto param = llvm::dyn_cast_or_null<nn::ParameterOp>(
      mlir::SymbolTable::lookupSymbolIn(module, name));
  if (!param)
    return "missing";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << param.getType();
  return text;
}

inline nn::InitializerAttr paramInit(mlir::ModuleOp module,
                                     llvm::StringRef name) {
  auto param = llvm::dyn_cast_or_null<nn::ParameterOp>(
      mlir::SymbolTable::lookupSymbolIn(module, name));
  return param ? param.getInit() : nn::InitializerAttr();
}

template <typename OpTy> int64_t countOps(mlir::ModuleOp module) {
  int64_t count = 0;
  module.walk([&](OpTy) { ++count; });
  return count;
}

/// For each nn.stage_end in program order, how many `OpTy` ops (layers)
/// precede it: tells after which layer each marker sits.
template <typename OpTy>
std::vector<int64_t> layersBeforeMarkers(mlir::ModuleOp module) {
  std::vector<int64_t> result;
  int64_t seen = 0;
  module.walk([&](mlir::Operation *op) {
    if (llvm::isa<OpTy>(op))
      ++seen;
    else if (llvm::isa<nn::StageEndOp>(op))
      result.push_back(seen);
  });
  return result;
}

} // namespace tandem::models::testing

#endif // TANDEM_UNITTESTS_MODELS_TESTUTILS_H
