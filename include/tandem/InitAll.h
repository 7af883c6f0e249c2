//===- InitAll.h - registration of Tandem dialects and passes ---*- C++ -*-===//
//
// The one place that lists what Tandem tools register: the Tandem dialects,
// the upstream dialects they build on, Tandem's passes and a curated set of
// upstream passes. Tools and tests call these instead of registering
// piecemeal, so every tool accepts the same IR and pass names.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_INITALL_H
#define TANDEM_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace tandem {

/// Adds the nn and mpmd dialects and the upstream dialects Tandem IR uses
/// (builtin is always present; func holds model functions).
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers every Tandem pass and the upstream transforms (canonicalize,
/// cse, inline, symbol-dce, ...) with the global pass registry.
void registerAllPasses();

/// Registers every target backend (tandem/Lowering/TargetBackend.h) under
/// its --target name.
void registerAllTargets();

} // namespace tandem

#endif // TANDEM_INITALL_H
