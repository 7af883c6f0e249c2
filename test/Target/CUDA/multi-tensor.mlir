// Multi-tensor launches: consecutive flat elementwise kernels that are
// independent of each other and have the same text (an optimizer's update
// of each parameter) run as one launch over a table of tensors
// (tk_tensors), each tensor with its own steps and blocks. A kernel reading
// a waiting kernel's output, even through a view, launches after it; a
// kernel with other text (another vector width) launches alone. The
// emulation runs the same table (train-emulated.test trains with it).
//
// RUN: tandem-translate %s --tandem-to-source --target cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// RUN: c++ -x c++ -std=c++17 -fsyntax-only -Wall -Werror %t.cu

// The table's kernel: tensor tk_which's buffers, then its own grid-stride loop
// over 16-byte vectors.
// CHECK: TK_KERNEL [[$TABLE:tk_k[0-9a-f]+]](TK_KERNEL_ARGS const tk_tensors<4, 32> tk_m) {
// CHECK-NEXT: // nn.mul, nn.sub
// CHECK-NEXT: TK_PHASE
// CHECK-NEXT: const int32_t tk_which = tk_tensor_of(tk_m, TK_BLOCK);
// CHECK-NEXT: float *__restrict__ o0 = (float *)tk_m.ptr[tk_which][0];
// CHECK-NEXT: const float *__restrict__ i0 = (const float *)tk_m.ptr[tk_which][1];
// CHECK-NEXT: const float *__restrict__ i1 = (const float *)tk_m.ptr[tk_which][2];
// CHECK-NEXT: const float *__restrict__ i2 = (const float *)tk_m.ptr[tk_which][3];
// CHECK-NEXT: const int64_t tk_first = tk_m.first[tk_which], tk_blocks = tk_m.first[tk_which + 1] - tk_first;
// CHECK-NEXT: for (int64_t tk_v = (TK_BLOCK - tk_first) * TK_BLOCK_DIM + TK_THREAD; tk_v < tk_m.steps[tk_which]; tk_v += tk_blocks * TK_BLOCK_DIM) {
// CHECK-NEXT: alignas(16) float tk_i0[4];
// CHECK-NEXT: tk_load_vec<4>(i0 + tk_v * 4, tk_i0);
// CHECK:      tk_store_vec<4>(o0 + tk_v * 4, tk_o0);
// CHECK-NEXT: }
// CHECK-NEXT: TK_END_PHASE

// CHECK-LABEL: static const int64_t tandem_updates_program[] = {
// Three tensors of 16, 48 and 5000 elements: 4, 12 and 1250 vectors, in
// 1, 1 and 5 blocks (first blocks 0, 1, 2, the end 7), each with its four
// buffers.
// CHECK-NEXT: TK_OP_LAUNCH, [[$TABLE]]_id, 7, 256, TK_TABLE(3), 0, 1, 2, 7, 4, TK_RESULT(0), TK_ARG(1), TK_ARG(6), TK_ARG(0), 12, TK_RESULT(1), TK_ARG(3), TK_ARG(6), TK_ARG(2), 1250, TK_RESULT(2), TK_ARG(5), TK_ARG(6), TK_ARG(4),
// The square of the first update reads its output through a view: after
// the table's launch, alone.
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(3), TK_RESULT(0),
// 3 x 333 elements are not whole vectors: another text, alone.
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_RESULT(4), TK_ARG(8), TK_ARG(6), TK_ARG(7),
// CHECK-NEXT: TK_OP_END};
func.func @updates(%p1: tensor<16xf32>, %g1: tensor<16xf32>,
                   %p2: tensor<48xf32>, %g2: tensor<48xf32>,
                   %p3: tensor<5000xf32>, %g3: tensor<5000xf32>,
                   %lr: tensor<f32>,
                   %p4: tensor<3x333xf32>, %g4: tensor<3x333xf32>)
    -> (tensor<16xf32>, tensor<48xf32>, tensor<5000xf32>, tensor<4x4xf32>,
        tensor<3x333xf32>) {
  %s1 = nn.mul %g1, %lr : tensor<16xf32>, tensor<f32> -> tensor<16xf32>
  %n1 = nn.sub %p1, %s1 : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
  %s2 = nn.mul %g2, %lr : tensor<48xf32>, tensor<f32> -> tensor<48xf32>
  %n2 = nn.sub %p2, %s2 : tensor<48xf32>, tensor<48xf32> -> tensor<48xf32>
  %s3 = nn.mul %g3, %lr : tensor<5000xf32>, tensor<f32> -> tensor<5000xf32>
  %n3 = nn.sub %p3, %s3 : tensor<5000xf32>, tensor<5000xf32> -> tensor<5000xf32>
  %v = nn.reshape %n1 : tensor<16xf32> to tensor<4x4xf32>
  %q = nn.mul %v, %v : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %s4 = nn.mul %g4, %lr : tensor<3x333xf32>, tensor<f32> -> tensor<3x333xf32>
  %n4 = nn.sub %p4, %s4 : tensor<3x333xf32>, tensor<3x333xf32> -> tensor<3x333xf32>
  return %n1, %n2, %n3, %q, %n4
      : tensor<16xf32>, tensor<48xf32>, tensor<5000xf32>, tensor<4x4xf32>,
        tensor<3x333xf32>
}
