//===- CpuFeatures.h - does this CPU run a library's instructions? -------===//
//
// Generated libraries are compiled with -march (native by default) and
// list the instruction-set extensions they use in `tandem_cpu_features`.
// A rank started on a CPU without one of them would die of SIGILL in the
// middle of a step; the runtime checks the list when it loads the library
// and stops with the names instead.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_CPUFEATURES_H
#define TANDEM_RUNTIME_CPUFEATURES_H

#include <string>
#include <vector>

namespace tandem::runtime {

/// The names in `features` (space-separated, as in tandem_cpu_features)
/// that this CPU lacks. A name the runtime does not know counts as lacking:
/// it cannot promise the CPU has it.
std::vector<std::string> missingCpuFeatures(const std::string &features);

/// The names missingCpuFeatures knows, as GCC and LLVM spell them
/// ("avx2", "avx512f", ...): what a manifest's target features may hold.
const std::vector<std::string> &knownCpuFeatures();

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_CPUFEATURES_H
