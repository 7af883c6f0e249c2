//===- tandem-translate.cpp - Tandem's translation driver -----------------===//
//
// mlir-translate with Tandem's translations: a target's source for a
// module's functions and fragments (--tandem-to-source --target cpu) and
// the library compiled from it (--tandem-to-library). -o, -split-input-file
// and -verify-diagnostics work as in mlir-translate; the tool, not the
// translation, writes the output.
//
//===----------------------------------------------------------------------===//

#include "tandem/InitAll.h"
#include "tandem/Lowering/Translations.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  // Targets first: the translations' options are the targets' options.
  tandem::registerAllTargets();
  tandem::lowering::registerTargetTranslations();
  return mlir::failed(
             mlir::mlirTranslateMain(argc, argv, "Tandem translation driver"))
             ? 1
             : 0;
}
