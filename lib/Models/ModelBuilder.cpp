//===- ModelBuilder.cpp - shared scaffolding of the model builders --------===//

#include "ModelBuilder.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tandem;
using namespace tandem::models::detail;

ModelBuilder::ModelBuilder(MLIRContext &ctx, llvm::StringRef text,
                           ArrayRef<Type> argTypes)
    : b(&ctx), paramBuilder(&ctx) {
  ctx.loadDialect<nn::NNDialect, func::FuncDialect>();
  configText = b.getStringAttr(text);
  module = ModuleOp::create(loc("model"));
  b.setInsertionPointToEnd(module->getBody());
  auto type =
      b.getFunctionType(argTypes, {RankedTensorType::get({}, b.getF32Type())});
  forward = func::FuncOp::create(b, loc("forward"), "forward", type);
  body = forward.addEntryBlock();
  b.setInsertionPointToStart(body);
  paramBuilder.setInsertionPoint(forward);
}

Location ModelBuilder::loc(const llvm::Twine &name) {
  // fused<"gpt tiny: ...">["h.3.attn"]: the part as a NameLoc, the
  // configuration as metadata, so both survive into any diagnostic.
  return FusedLoc::get(context(), {NameLoc::get(b.getStringAttr(name))},
                       configText);
}

Value ModelBuilder::param(llvm::StringRef name, ArrayRef<int64_t> shape,
                          nn::InitializerAttr init) {
  auto type = RankedTensorType::get(shape, b.getF32Type());
  nn::ParameterOp::create(paramBuilder, loc(name), name, type, init);
  return nn::ParamOp::create(b, loc(name), type, name);
}

Value ModelBuilder::read(llvm::StringRef name) {
  auto parameter = SymbolTable::lookupSymbolIn(*module, name);
  auto type = cast<nn::ParameterOp>(parameter).getTensorType();
  return nn::ParamOp::create(b, loc(name), type, name);
}

llvm::Expected<OwningOpRef<ModuleOp>> ModelBuilder::finish(Value loss) {
  func::ReturnOp::create(b, loc("forward.return"), loss);
  // Collect the verifier's diagnostics into the error instead of letting
  // them reach whatever handler the caller has installed.
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(context(), [&](Diagnostic &diag) {
    os << "\n  " << diag.getLocation() << ": " << diag;
    return success();
  });
  if (failed(verify(*module)))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "internal error: the generated model does not verify:" + diagnostics);
  return std::move(module);
}
