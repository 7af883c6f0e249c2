//===- KernelRegistry.cpp - op name to kernel -----------------------------===//

#include "tandem/Eval/Kernels.h"

#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace tandem::eval;

void KernelRegistry::add(llvm::StringRef opName, Kernel kernel) {
  kernels[opName] = kernel;
}

Kernel KernelRegistry::lookup(llvm::StringRef opName) const {
  auto it = kernels.find(opName);
  return it == kernels.end() ? nullptr : it->second;
}

std::vector<std::string> KernelRegistry::opNames() const {
  std::vector<std::string> names;
  for (const auto &entry : kernels)
    names.push_back(entry.getKey().str());
  llvm::sort(names);
  return names;
}

const KernelRegistry &KernelRegistry::getDefault() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerElementwiseKernels(r);
    registerLinalgKernels(r);
    registerNormalizationKernels(r);
    registerShapeKernels(r);
    registerReductionKernels(r);
    registerModelKernels(r);
    registerCodecKernels(r);
    return r;
  }();
  return registry;
}

std::vector<std::string> tandem::eval::supportedOps() {
  return KernelRegistry::getDefault().opNames();
}

std::string tandem::eval::formatLocation(mlir::Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto fileLoc = llvm::dyn_cast<mlir::FileLineColLoc>(loc)) {
    os << fileLoc.getFilename().getValue() << ":" << fileLoc.getLine() << ":"
       << fileLoc.getColumn();
    return text;
  }
  if (auto nameLoc = llvm::dyn_cast<mlir::NameLoc>(loc))
    return formatLocation(nameLoc.getChildLoc());
  if (auto fused = llvm::dyn_cast<mlir::FusedLoc>(loc))
    if (!fused.getLocations().empty())
      return formatLocation(fused.getLocations().front());
  os << loc;
  return text;
}

llvm::Error tandem::eval::opError(mlir::Operation *op,
                                  const llvm::Twine &message) {
  return llvm::createStringError(formatLocation(op->getLoc()) + ": '" +
                                 op->getName().getStringRef() +
                                 "': " + message);
}
