//===- CpuFeaturesTest.cpp - refusing libraries this CPU cannot run ------===//

#include "tandem/Runtime/CpuFeatures.h"

#include <gtest/gtest.h>

using namespace tandem::runtime;

namespace {

TEST(CpuFeatures, NothingListedNothingMissing) {
  EXPECT_TRUE(missingCpuFeatures("").empty());
  EXPECT_TRUE(missingCpuFeatures("   ").empty());
}

TEST(CpuFeatures, UnknownNamesCountAsMissing) {
  EXPECT_EQ(missingCpuFeatures(" avx9000 quantum"),
            (std::vector<std::string>{"avx9000", "quantum"}));
}

#if defined(__x86_64__)
TEST(CpuFeatures, AgreesWithTheCompilersView) {
  // Every x86-64 CPU has SSE2-era features; what this test binary was
  // compiled for (the baseline) the CPU certainly has. SSE4.2 and AVX2 are
  // answered by the CPU: each name is missing exactly when cpuid says so.
  __builtin_cpu_init();
  EXPECT_EQ(missingCpuFeatures("avx2").empty(),
            static_cast<bool>(__builtin_cpu_supports("avx2")));
  EXPECT_EQ(missingCpuFeatures("sse4.2 avx2 avx512f").size(),
            static_cast<size_t>(!__builtin_cpu_supports("sse4.2")) +
                !__builtin_cpu_supports("avx2") +
                !__builtin_cpu_supports("avx512f"));
}
#endif

} // namespace
