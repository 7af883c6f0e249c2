// Embeddings and copies: the gather reads each id's row (NaN for an id
// outside the vocabulary, reported by the row's first element through the
// program's TK_CHECK, the entry of the manifest's index_checks); the
// gradient lists each id's positions in order
// (count, scan, fill) and sums their rows in that order, with no atomics;
// transpose and concat are copy kernels at the source's strides.
//
// RUN: tandem-translate %s --tandem-to-source --target cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// RUN: c++ -x c++ -std=c++17 -fsyntax-only -Wall -Werror %t.cu

// CHECK-LABEL: // nn.embedding: rows of 8 from 37
// CHECK: const int64_t id = tk_load(i1, i / 8);
// CHECK-NEXT: if (i % 8 == 0 && !(id >= 0 && id < 37))
// CHECK-NEXT: tk_report(tk_c, i / 8, id);
// CHECK-NEXT: tk_store(o0, i, id >= 0 && id < 37 ? tk_load(i0, id * 8 + i % 8) : NAN);
// CHECK-LABEL: // nn.embedding_grad: positions per id
// CHECK: c += tk_load(i0, p) == v;
// CHECK: o0[v + 1] = c;
// The scan by one block: a chunk of ids per thread (37 ids: one each, the
// others none), the chunks' starts by thread 0, each chunk's running sums.
// CHECK-LABEL: // nn.embedding_grad: where each id's positions start
// CHECK-NEXT: TK_SHARED(int64_t, tk_sums, 256);
// CHECK: for (int64_t v = TK_THREAD * 1; v < ((TK_THREAD + 1) * 1 < 37 ? (TK_THREAD + 1) * 1 : 37); ++v)
// CHECK-NEXT: tk_sum += o0[v + 1];
// CHECK-NEXT: tk_sums[TK_THREAD] = tk_sum;
// CHECK: if (TK_THREAD == 0) {
// CHECK: tk_sums[t] = tk_run;
// CHECK-NEXT: tk_run += tk_sum;
// CHECK: o0[0] = 0;
// CHECK: int64_t tk_run = tk_sums[TK_THREAD];
// CHECK: tk_run += o0[v + 1];
// CHECK-NEXT: o0[v + 1] = tk_run;
// CHECK-LABEL: // nn.embedding_grad: positions in order
// CHECK: o0[k++] = p;
// CHECK-LABEL: // nn.embedding_grad: each id's rows summed
// CHECK: for (int64_t k = i1[v]; k < i1[v + 1]; ++k)
// CHECK-NEXT: tk_acc = tk_acc + tk_load(i0, i2[k] * 8 + d);
// CHECK-LABEL: // copy of 36 elements
// CHECK: o0[d0 * 4 + d1] = i0[d0 + d1 * 9];
// The gradient's counts (38 of 8 bytes) in scratch at 0, its list of
// positions at 512: count, scan, fill, sum.
// The gradient checks nothing: the forward gather of the same ids reports.
// CHECK-LABEL: static const int64_t tandem_gather_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 2, 256, TK_RESULT(0), TK_ARG(0), TK_ARG(1), TK_CHECK(0),
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_SCRATCH(0), TK_ARG(1),
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_SCRATCH(512), TK_SCRATCH(0), TK_ARG(1),
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 2, 256, TK_RESULT(1), TK_ARG(2), TK_SCRATCH(0), TK_SCRATCH(512),
func.func @gather(%w: tensor<37x8xf32>, %t: tensor<4x9xi32>, %c: tensor<4x9x8xf32>)
    -> (tensor<4x9x8xf32>, tensor<37x8xf32>, tensor<9x4xi32>) {
  %e = nn.embedding %w, %t : tensor<37x8xf32>, tensor<4x9xi32> -> tensor<4x9x8xf32>
  %g = nn.embedding_grad %c, %t : tensor<4x9x8xf32>, tensor<4x9xi32> -> tensor<37x8xf32>
  %tt = nn.transpose %t, [1, 0] : tensor<4x9xi32> -> tensor<9x4xi32>
  return %e, %g, %tt : tensor<4x9x8xf32>, tensor<37x8xf32>, tensor<9x4xi32>
}
