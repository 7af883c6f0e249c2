//===- CpuFeatures.cpp - does this CPU run a library's instructions? -----===//

#include "tandem/Runtime/CpuFeatures.h"

#include <sstream>

using namespace tandem::runtime;

namespace {

/// Whether this CPU has `name`, one of the names the emitter's prelude
/// writes into tandem_cpu_features. __builtin_cpu_supports takes literals
/// only, hence the list.
bool hasFeature(const std::string &name) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
#define TANDEM_FEATURE(N)                                                      \
  if (name == N)                                                               \
    return __builtin_cpu_supports(N);
  TANDEM_FEATURE("sse4.2")
  TANDEM_FEATURE("avx")
  TANDEM_FEATURE("avx2")
  TANDEM_FEATURE("fma")
  TANDEM_FEATURE("f16c")
  TANDEM_FEATURE("bmi2")
  TANDEM_FEATURE("avx512f")
  TANDEM_FEATURE("avx512dq")
  TANDEM_FEATURE("avx512bw")
  TANDEM_FEATURE("avx512vl")
#undef TANDEM_FEATURE
#endif
  return false;
}

} // namespace

const std::vector<std::string> &tandem::runtime::knownCpuFeatures() {
  static const std::vector<std::string> names = {
      "sse4.2", "avx",     "avx2",     "fma",      "f16c",
      "bmi2",   "avx512f", "avx512dq", "avx512bw", "avx512vl"};
  return names;
}

std::vector<std::string>
tandem::runtime::missingCpuFeatures(const std::string &features) {
  std::vector<std::string> missing;
  std::istringstream names(features);
  std::string name;
  while (names >> name)
    if (!hasFeature(name))
      missing.push_back(name);
  return missing;
}
