// nn.one_hot: a thread per element writes 1 where the element's class is
// its row's id and 0 elsewhere, and NaN across the row of an id outside the
// classes (as nn.embedding's gather does), reported by the row's first
// element; with mul and reduce_sum it is jnp.take_along_axis.
//
// RUN: tandem-translate %s --tandem-to-source --target cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// RUN: c++ -x c++ -std=c++17 -fsyntax-only -Wall -Werror %t.cu

// CHECK-LABEL: TK_KERNEL {{tk_k[0-9a-f]+}}(TK_KERNEL_ARGS float *__restrict__ o0, const int32_t *__restrict__ i0, const tk_check tk_c) {
// CHECK-NEXT: // nn.one_hot: rows of 5 classes
// CHECK-NEXT: TK_PHASE
// CHECK-NEXT: for (int64_t i = TK_BLOCK * TK_BLOCK_DIM + TK_THREAD; i < 60; i += TK_GRID_DIM * TK_BLOCK_DIM) {
// CHECK-NEXT: const int64_t id = tk_load(i0, i / 5);
// CHECK-NEXT: if (i % 5 == 0 && !(id >= 0 && id < 5))
// CHECK-NEXT: tk_report(tk_c, i / 5, id);
// CHECK-NEXT: tk_store(o0, i, id >= 0 && id < 5 ? (i % 5 == id ? 1.0f : 0.0f) : NAN);
// CHECK-LABEL: TK_KERNEL {{tk_k[0-9a-f]+}}(TK_KERNEL_ARGS tk_bf16 *__restrict__ o0, const int64_t *__restrict__ i0, const tk_check tk_c) {
// CHECK-NEXT: // nn.one_hot: rows of 3 classes
// CHECK: tk_store(o0, i, id >= 0 && id < 3 ? (i % 3 == id ? 1.0f : 0.0f) : NAN);
// CHECK-LABEL: static const int64_t tandem_one_hot_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(0), TK_ARG(0), TK_CHECK(0),
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_SCRATCH(0), TK_ARG(1), TK_CHECK(1),
func.func @one_hot(%t: tensor<4x3xi32>, %l: tensor<2xi64>, %x: tensor<2x3xbf16>)
    -> (tensor<4x3x5xf32>, tensor<2xbf16>) {
  %h = nn.one_hot %t {classes = 5 : i64} : tensor<4x3xi32> -> tensor<4x3x5xf32>
  %g = nn.one_hot %l {classes = 3 : i64} : tensor<2xi64> -> tensor<2x3xbf16>
  %m = nn.mul %g, %x : tensor<2x3xbf16>, tensor<2x3xbf16> -> tensor<2x3xbf16>
  %p = nn.reduce_sum %m [1] : tensor<2x3xbf16> -> tensor<2xbf16>
  return %h, %p : tensor<4x3x5xf32>, tensor<2xbf16>
}
