//===- CPUBackend.h - the cpu target ----------------------------*- C++ -*-===//
//
// The CPU target behind the rank lowering's TargetBackend interface: C++
// from the CPU emitter (CppEmitter.h), compiled by the system C++ compiler
// through the compile cache (Compiler.h), host memory, the runtime summing
// microbatch gradients. Registered as "cpu"; its option is --cpu-arch.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_TARGET_CPU_CPUBACKEND_H
#define TANDEM_TARGET_CPU_CPUBACKEND_H

#include "tandem/Lowering/TargetBackend.h"
#include "tandem/Target/CPU/Compiler.h"

#include <memory>

namespace tandem::cpu {

/// A CPU backend compiling with `options` (--cpu-arch sets options.arch).
std::unique_ptr<lowering::TargetBackend>
createCPUBackend(const CompileOptions &options = {});

/// Registers createCPUBackend as the target "cpu".
void registerCPUBackend();

} // namespace tandem::cpu

#endif // TANDEM_TARGET_CPU_CPUBACKEND_H
