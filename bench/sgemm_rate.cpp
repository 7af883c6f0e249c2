// sgemm_rate M N K [REPS]: the rate of OpenBLAS's cblas_sgemm (row-major,
// C = A B) on M x K times K x N, in GFLOP/s (2 M N K per call), the best of
// REPS timed calls after one warm-up call. bench/throughput.sh compares the
// generated training step against this rate measured in the same run.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: sgemm_rate M N K [REPS]\n");
    return 2;
  }
  long m = std::atol(argv[1]), n = std::atol(argv[2]), k = std::atol(argv[3]);
  int reps = argc > 4 ? std::atoi(argv[4]) : 5;
  std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f), c(m * n, 0.0f);
  auto call = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f,
                a.data(), k, b.data(), n, 0.0f, c.data(), n);
  };
  call();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto start = std::chrono::steady_clock::now();
    call();
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    best = std::min(best, s);
  }
  std::printf("%.3f\n", 2.0 * m * n * k / best / 1e9);
  return 0;
}
