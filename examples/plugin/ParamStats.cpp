//===- ParamStats.cpp - example Tandem pass plugin ------------------------===//
//
// An out-of-tree pass over the nn dialect, loaded into tandem-opt with
// --load-pass-plugin. example-param-stats annotates every function with the
// parameters it reads: how many, how many elements, how many bytes.
//
// The plugin links libTandem.so (and through it libMLIR.so); the tool that
// loads it holds the same libraries, so the nn ops, their TypeIDs and the
// pass registry are the tool's.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/NN/IR/NNDialect.h"
#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/ADT/SetVector.h"

namespace tandem::example {
#define GEN_PASS_DECL
#define GEN_PASS_DEF_EXAMPLEPARAMSTATS
#define GEN_PASS_REGISTRATION
#include "Passes.h.inc"
} // namespace tandem::example

using namespace mlir;

namespace tandem::example {
namespace {

/// What one function reads.
struct ParamStats {
  int64_t params = 0;
  int64_t elements = 0;
  int64_t bytes = 0;
};

struct ExampleParamStatsPass
    : impl::ExampleParamStatsBase<ExampleParamStatsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    Builder builder(&getContext());
    for (auto func : module.getOps<FunctionOpInterface>()) {
      FailureOr<ParamStats> stats = countParams(func, symbols);
      if (failed(stats))
        return signalPassFailure();
      func->setAttr("example.params", builder.getI64IntegerAttr(stats->params));
      func->setAttr("example.param_elements",
                    builder.getI64IntegerAttr(stats->elements));
      func->setAttr("example.param_bytes",
                    builder.getI64IntegerAttr(stats->bytes));
      if (remarks)
        func.emitRemark() << "reads " << stats->params
                          << (stats->params == 1 ? " parameter, "
                                                 : " parameters, ")
                          << stats->elements << " elements, " << stats->bytes
                          << " bytes";
    }
  }

  /// Sums the distinct parameters `func` reads; a parameter read in several
  /// places counts once.
  static FailureOr<ParamStats> countParams(FunctionOpInterface func,
                                           SymbolTable &symbols) {
    llvm::SetVector<nn::ParameterOp> seen;
    WalkResult walk = func.walk([&](nn::ParamOp read) {
      auto param = symbols.lookup<nn::ParameterOp>(read.getName());
      if (!param) {
        read.emitError() << "expected '" << read.getName()
                         << "' to name an nn.parameter in the module";
        return WalkResult::interrupt();
      }
      seen.insert(param);
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    ParamStats stats;
    for (nn::ParameterOp param : seen) {
      RankedTensorType type = param.getTensorType();
      int64_t bits = type.getElementType().getIntOrFloatBitWidth();
      ++stats.params;
      stats.elements += type.getNumElements();
      stats.bytes += (type.getNumElements() * bits + 7) / 8;
    }
    return stats;
  }
};

} // namespace
} // namespace tandem::example

/// The entry point tandem-opt looks up after loading the library.
extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "TandemExamplePlugin", "0.1",
          [] { tandem::example::registerExamplePasses(); }};
}
