//===- ModelBuilder.h - shared scaffolding of the model builders -*- C++
//-*-===//
//
// Private to lib/Models. Holds the module under construction, declares
// parameters in first-use order (GPT-2's state_dict order falls out of that)
// and names every op's location after the model part it implements.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LIB_MODELS_MODELBUILDER_H
#define TANDEM_LIB_MODELS_MODELBUILDER_H

#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

namespace tandem::models::detail {

class ModelBuilder {
public:
  /// Starts a module holding `func.func @forward` with the given argument
  /// types and a rank-0 f32 result. `configText` (e.g. "gpt tiny: layers=8
  /// ...") is attached to every location, so a diagnostic on a generated op
  /// says both which part of the model and which configuration it was.
  ModelBuilder(mlir::MLIRContext &context, llvm::StringRef configText,
               llvm::ArrayRef<mlir::Type> argTypes);

  /// A location naming the model part `name` (e.g. "h.3.attn").
  mlir::Location loc(const llvm::Twine &name);

  /// Declares parameter `name` and reads it at the current insertion point.
  mlir::Value param(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                    nn::InitializerAttr init);
  /// Reads an already declared parameter again (a tied weight).
  mlir::Value read(llvm::StringRef name);

  mlir::Value argument(unsigned index) { return body->getArgument(index); }
  mlir::OpBuilder &builder() { return b; }
  mlir::MLIRContext *context() { return b.getContext(); }

  nn::InitializerAttr zeros() {
    return nn::InitializerAttr::getZeros(context());
  }
  nn::InitializerAttr ones() { return nn::InitializerAttr::getOnes(context()); }
  nn::InitializerAttr normal(double stddev) {
    return nn::InitializerAttr::getNormal(context(), stddev);
  }
  nn::InitializerAttr uniform(double low, double high) {
    return nn::InitializerAttr::getUniform(context(), low, high);
  }

  /// Returns `loss` from @forward, verifies the module and hands it over.
  llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>> finish(mlir::Value loss);

private:
  mlir::OpBuilder b;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp forward;
  mlir::Block *body;
  mlir::StringAttr configText;
  /// Inserts parameter declarations before @forward, in creation order.
  mlir::OpBuilder paramBuilder;
};

} // namespace tandem::models::detail

#endif // TANDEM_LIB_MODELS_MODELBUILDER_H
