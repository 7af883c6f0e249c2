//===- PtxasReportTest.cpp - the CUDA build's register and spill report --===//
//
// tandemc reports, per CUDA library, what ptxas -v said of its kernels
// (summarizePtxas): the kernel count, the most registers one uses and the
// spill stores of all. The log's lines as nvcc 13 writes them.
//
//===----------------------------------------------------------------------===//

#include "tandem/Target/CUDA/CUDABackend.h"

#include "gtest/gtest.h"

namespace {

const char *const kLog =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z1av' for 'sm_90a'\n"
    "ptxas info    : Function properties for _Z1av\n"
    "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 32 registers, used 1 barriers\n"
    "ptxas info    : Compiling entry function '_Z1bv' for 'sm_90a'\n"
    "ptxas info    : Function properties for _Z1bv\n"
    "    1728 bytes stack frame, 2544 bytes spill stores, 2992 bytes spill "
    "loads\n"
    "ptxas info    : Used 255 registers, used 1 barriers, 168 bytes "
    "cumulative stack size\n"
    "ptxas info    : Compiling entry function '_Z1cv' for 'sm_90a'\n"
    "ptxas info    : Function properties for _Z1cv\n"
    "    168 bytes stack frame, 172 bytes spill stores, 312 bytes spill "
    "loads\n"
    "ptxas info    : Used 177 registers, used 1 barriers, 40 bytes smem\n";

TEST(PtxasReport, CountsKernelsRegistersAndSpills) {
  EXPECT_EQ(tandem::cuda::summarizePtxas(kLog),
            "3 kernels, at most 255 registers, 2716 bytes spilled");
}

TEST(PtxasReport, NoKernelsNoReport) {
  EXPECT_EQ(tandem::cuda::summarizePtxas(""), "");
  EXPECT_EQ(tandem::cuda::summarizePtxas("nvcc warning : something\n"), "");
}

} // namespace
