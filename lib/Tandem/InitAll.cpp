//===- InitAll.cpp - registration of Tandem dialects and passes -----------===//

#include "tandem/InitAll.h"
#include "tandem/Dialect/MPMD/IR/MPMDDialect.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"
#include "tandem/Dialect/NN/IR/NNDialect.h"
#include "tandem/Dialect/NN/Transforms/Passes.h"
#include "tandem/Lowering/Passes.h"
#include "tandem/Target/CPU/CPUBackend.h"
#include "tandem/Target/CUDA/CUDABackend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void tandem::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<nn::NNDialect, mpmd::MPMDDialect, mlir::func::FuncDialect>();
}

void tandem::registerAllPasses() {
  // Registration is global; calling twice (a tool and a plugin) is harmless
  // but wasteful, so do it once.
  static bool registered = [] {
    mlir::registerTransformsPasses();
    nn::registerNNPasses();
    mpmd::registerMPMDPasses();
    lowering::registerTandemLoweringPasses();
    return true;
  }();
  (void)registered;
}

void tandem::registerAllTargets() {
  static bool registered = [] {
    cpu::registerCPUBackend();
    cuda::registerCUDABackend();
    return true;
  }();
  (void)registered;
}
