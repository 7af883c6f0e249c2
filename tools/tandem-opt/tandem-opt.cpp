//===- tandem-opt.cpp - Tandem's MLIR optimizer driver --------------------===//
//
// mlir-opt with Tandem's dialects and passes and a curated set of upstream
// ones. --load-pass-plugin and --load-dialect-plugin load out-of-tree passes
// and dialects built against libTandem.so.
//
//===----------------------------------------------------------------------===//

#include "tandem/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  tandem::registerAllPasses();
  mlir::DialectRegistry registry;
  tandem::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Tandem optimizer driver\n", registry));
}
