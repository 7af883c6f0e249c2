// Row kernels: one block per row; each pass a strided partial per thread,
// the warp butterfly (TK_WARP_REDUCE), the warps' results through shared
// memory and thread 0 combining them in order; statistics feed the later
// passes and the output. A reduction over leading axes is one thread per
// output instead.
//
// RUN: tandem-translate %s --tandem-to-source --target cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// RUN: FileCheck %s --check-prefix=CE --input-file=%t.cu
// RUN: FileCheck %s --check-prefix=NG --input-file=%t.cu
// RUN: FileCheck %s --check-prefix=RES --input-file=%t.cu
// RUN: tandem-opt %s --tandem-form-kernels=target=cuda | FileCheck %s --check-prefix=IR
// RUN: c++ -x c++ -std=c++17 -fsyntax-only -Wall -Werror %t.cu

// CHECK-LABEL: // nn.softmax: 4 rows of 300
// CHECK-NEXT: TK_LOCAL(float, tk_v);
// CHECK-NEXT: TK_SHARED(float, tk_warps, 8);
// CHECK-NEXT: TK_SHARED(float, tk_stats, 2);
// CHECK-NEXT: for (int64_t row = TK_BLOCK; row < 4; row += TK_GRID_DIM) {
// CHECK-NEXT: TK_PHASE
// CHECK-NEXT: float tk_acc = (-INFINITY);
// CHECK-NEXT: for (int64_t j = TK_THREAD; j < 300; j += TK_BLOCK_DIM) {
// CHECK-NEXT: const float x = tk_load(i0, row * 300 + j);
// CHECK-NEXT: tk_acc = tk_op_max::apply(tk_acc, x);
// CHECK: TK_WARP_REDUCE(tk_v, tk_op_max);
// CHECK: tk_warps[TK_THREAD / 32] = TK_AT(tk_v);
// CHECK: for (int64_t w = 1; w < TK_BLOCK_DIM / 32; ++w)
// CHECK-NEXT: tk_acc = tk_op_max::apply(tk_acc, tk_warps[w]);
// CHECK-NEXT: tk_stats[0] = tk_acc;
// CHECK: const float s0 = tk_stats[0];
// CHECK: tk_acc = tk_op_add::apply(tk_acc, tk_exp(x - s0));
// CHECK: TK_WARP_REDUCE(tk_v, tk_op_add);
// CHECK: tk_stats[1] = tk_acc;
// CHECK: tk_store(o0, row * 300 + j, tk_round(tk_exp(x - s0) / s1, (tk_bf16 *)0));

// CHECK-LABEL: // nn.rms_norm: 4 rows of 300
// CHECK: tk_acc = tk_op_add::apply(tk_acc, x * x);
// CHECK: tk_stats[0] = 1.0f / tk_sqrt(tk_acc / (0x1.2cp+8f) + (0x1.4f8b58p-17f));
// CHECK: const auto p1 = tk_load(i1, j);
// CHECK-NEXT: tk_store(o0, row * 300 + j, x * s0 * p1);

// CHECK-LABEL: // nn.reduce_mean: 4 rows of 300
// CHECK: tk_stats[0] = tk_acc / (0x1.2cp+8f);
// CHECK: if (TK_THREAD == 0)
// CHECK-NEXT: tk_store(o0, row, s0);

// CHECK-LABEL: // nn.reduce_sum: 300 outputs of 4 strided inputs
// CHECK: tk_base += (tk_r % 300) * 1;
// CHECK: tk_offset += (tk_q % 4) * 300;
// CHECK: tk_acc = tk_op_add::apply(tk_acc, tk_load(i0, tk_offset));

// CHECK-LABEL: static const int64_t tandem_rows_program[] = {
// CHECK: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_RESULT(0), TK_ARG(0),
// CHECK: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_RESULT(1), TK_ARG(1), TK_ARG(2),
// CHECK: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_RESULT(2), TK_ARG(1),
// CHECK: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 2, 256, TK_RESULT(3), TK_ARG(1),
func.func @rows(%x: tensor<4x300xbf16>, %y: tensor<4x300xf32>, %w: tensor<300xf32>)
    -> (tensor<4x300xbf16>, tensor<4x300xf32>, tensor<4xf32>, tensor<300xf32>) {
  %s = nn.softmax %x {axis = 1 : i64} : tensor<4x300xbf16>
  %r = nn.rms_norm %y, %w {epsilon = 1.0e-05 : f64} : tensor<4x300xf32>, tensor<300xf32>
  %m = nn.reduce_mean %y [1] : tensor<4x300xf32> -> tensor<4xf32>
  %c = nn.reduce_sum %y [0] : tensor<4x300xf32> -> tensor<300xf32>
  return %s, %r, %m, %c : tensor<4x300xbf16>, tensor<4x300xf32>, tensor<4xf32>, tensor<300xf32>
}

// Cross-entropy: each position's loss into scratch, then a one-block mean;
// the gradient in one row kernel. Each row's thread 0 reports a target
// outside the classes (its row is its position) through the check the
// program passes (TK_CHECK: the entry of the manifest's index_checks).
// CE-LABEL: // nn.cross_entropy: 4 rows of 300
// CE: const float s1 = tk_stats[1];
// CE-NEXT: if (TK_THREAD == 0) {
// CE-NEXT: const auto p1 = tk_load(i1, row);
// CE-NEXT: if (!(p1 >= 0 && p1 < 300))
// CE-NEXT: tk_report(tk_c, row, p1);
// CE-NEXT: tk_store(o0, row, p1 >= 0 && p1 < 300 ? s0 + tk_log(s1) - tk_load(i0, row * 300 + p1) : NAN);
// CE-LABEL: // the mean of the positions' losses: 1 rows of 4
// CE: tk_stats[0] = tk_acc / (0x1p+2f);
// CE-LABEL: // nn.cross_entropy_grad: 4 rows of 300
// CE: const float s1 = tk_stats[1];
// CE-NEXT: if (TK_THREAD == 0) {
// CE-NEXT: const auto p1 = tk_load(i1, row);
// CE-NEXT: if (!(p1 >= 0 && p1 < 300))
// CE-NEXT: tk_report(tk_c, row, p1);
// CE-NEXT: }
// CE: const auto p1 = tk_load(i1, row);
// CE-NEXT: const auto p2 = tk_load(i2, 0);
// CE-NEXT: tk_store(o0, row * 300 + j, (tk_exp(x - s0) / s1 - (j == p1 ? 1.0f : 0.0f)) * (p2 / (0x1p+2f)));
// CE-LABEL: static const int64_t tandem_loss_program[] = {
// CE-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_SCRATCH(0), TK_ARG(0), TK_ARG(1), TK_CHECK(0),
// CE-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(0), TK_SCRATCH(0),
// CE-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_RESULT(1), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_CHECK(1),
func.func @loss(%l: tensor<4x300xf32>, %t: tensor<4xi32>, %g: tensor<f32>) -> (tensor<f32>, tensor<4x300xf32>) {
  %y = nn.cross_entropy %l, %t : tensor<4x300xf32>, tensor<4xi32> -> tensor<f32>
  %d = nn.cross_entropy_grad %l, %t, %g : tensor<4x300xf32>, tensor<4xi32>, tensor<f32> -> tensor<4x300xf32>
  return %y, %d : tensor<f32>, tensor<4x300xf32>
}

// Softmax along another axis than the last: one thread per column, the
// axis's elements at a stride, summed in order.
// RUN: FileCheck %s --check-prefix=AXIS --input-file=%t.cu
// AXIS-LABEL: // nn.log_softmax along axis 1: a column of 5 at stride 7 per thread
// AXIS: for (int64_t c = TK_BLOCK * TK_BLOCK_DIM + TK_THREAD; c < 21; c += TK_GRID_DIM * TK_BLOCK_DIM) {
// AXIS-NEXT: const int64_t tk_base = c / 7 * 35 + c % 7;
// AXIS: s0 = tk_op_max::apply(s0, tk_load(i0, tk_base + j * 7));
// AXIS: s1 += tk_exp(tk_load(i0, tk_base + j * 7) - s0);
// AXIS: tk_store(o0, tk_base + j * 7, (x - s0) - tk_log(s1));
// AXIS-LABEL: static const int64_t tandem_axis_program[] = {
// AXIS-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(0), TK_ARG(0),
func.func @axis(%x: tensor<3x5x7xf16>) -> tensor<3x5x7xf16> {
  %y = nn.log_softmax %x {axis = 1 : i64} : tensor<3x5x7xf16>
  return %y : tensor<3x5x7xf16>
}

// The normalizations' gradients: one row kernel each, the forward's
// statistics recomputed, then the sums of g·w and g·w·x̂ (rms: only the
// latter); dx and dy·x̂ stored per element, each rounded to its type. The
// cotangent is read per element (the rows' index), the weight per column.
// NG-LABEL: // nn.layer_norm_grad: 4 rows of 300
// NG: TK_SHARED(float, tk_stats, 4);
// NG: tk_stats[1] = 1.0f / tk_sqrt(tk_acc / (0x1.2cp+8f) + (0x1.4f8b58p-17f));
// NG: float tk_acc = 0.0f;
// NG-NEXT: for (int64_t j = TK_THREAD; j < 300; j += TK_BLOCK_DIM) {
// NG-NEXT: const auto p1 = tk_load(i1, j);
// NG-NEXT: const auto p2 = tk_load(i2, row * 300 + j);
// NG-NEXT: tk_acc = tk_op_add::apply(tk_acc, p2 * p1);
// NG: tk_acc = tk_op_add::apply(tk_acc, (p2 * p1) * ((x - s0) * s1));
// NG: tk_stats[3] = tk_acc / (0x1.2cp+8f);
// NG: tk_store(o0, row * 300 + j, tk_round(s1 * ((p2 * p1 - s2) - ((x - s0) * s1) * s3), (tk_bf16 *)0));
// NG-NEXT: tk_store(o1, row * 300 + j, tk_round(p2 * ((x - s0) * s1), (tk_bf16 *)0));
// NG-LABEL: // nn.rms_norm_grad: 4 rows of 300
// NG: TK_SHARED(float, tk_stats, 2);
// NG: tk_acc = tk_op_add::apply(tk_acc, (p2 * p1) * (x * s0));
// NG: tk_store(o0, row * 300 + j, s0 * (p2 * p1 - (x * s0) * s1));
// NG-NEXT: tk_store(o1, row * 300 + j, p2 * (x * s0));
// NG-LABEL: static const int64_t tandem_norm_grads_program[] = {
// NG-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_RESULT(0), TK_RESULT(1), TK_ARG(0), TK_ARG(1), TK_ARG(2),
// NG-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_RESULT(2), TK_RESULT(3), TK_ARG(3), TK_ARG(4), TK_ARG(5),
func.func @norm_grads(%x: tensor<4x300xbf16>, %w: tensor<300xbf16>, %dy: tensor<4x300xbf16>,
                      %y: tensor<4x300xf32>, %v: tensor<300xf32>, %dz: tensor<4x300xf32>)
    -> (tensor<4x300xbf16>, tensor<4x300xbf16>, tensor<4x300xf32>, tensor<4x300xf32>) {
  %dx, %terms = nn.layer_norm_grad %x, %w, %dy {epsilon = 1.0e-05 : f64} : tensor<4x300xbf16>, tensor<300xbf16>, tensor<4x300xbf16>
  %dy2, %yhat = nn.rms_norm_grad %y, %v, %dz {epsilon = 1.0e-05 : f64} : tensor<4x300xf32>, tensor<300xf32>, tensor<4x300xf32>
  return %dx, %terms, %dy2, %yhat : tensor<4x300xbf16>, tensor<4x300xbf16>, tensor<4x300xf32>, tensor<4x300xf32>
}

// The residual stream's gradient: a norm gradient's dx plus another
// gradient already computed is one row kernel writing the sum where the
// add's result goes (the kernel is the norm gradient's row epilogue,
// `nn.kernel_row`), in either operand order, rounded once. Not when the
// other operand comes after the norm gradient, nor when the add is part of
// a larger kernel.
// IR-LABEL: func.func @residual_grads(
// IR: nn.layer_norm_grad {{.*}}nn.kernel_row = [[K:[0-9]+]]
// IR-NEXT: nn.add {{.*}}nn.kernel = [[K]]
// IR-NEXT: nn.rms_norm_grad {{.*}}nn.kernel_row = [[K2:[0-9]+]]
// IR-NEXT: nn.add {{.*}}nn.kernel = [[K2]]
// IR-NEXT: nn.layer_norm_grad
// IR-NOT: nn.kernel_row
// IR: return
// RES-LABEL: // nn.layer_norm_grad + nn.add: 4 rows of 300
// RES: const auto p3 = tk_load(i3, row * 300 + j);
// RES-NEXT: tk_store(o0, row * 300 + j, tk_round((s1 * ((p2 * p1 - s2) - ((x - s0) * s1) * s3)) + p3, (tk_bf16 *)0));
// RES-LABEL: // nn.rms_norm_grad + nn.add: 4 rows of 300
// RES: tk_store(o0, row * 300 + j, (s0 * (p2 * p1 - (x * s0) * s1)) + p3);
// RES-LABEL: static const int64_t tandem_residual_grads_program[] = {
// RES-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_RESULT(0), TK_RESULT(1), TK_ARG(0), TK_ARG(1), TK_ARG(2), TK_ARG(3),
// RES-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_RESULT(2), TK_RESULT(3), TK_ARG(4), TK_ARG(5), TK_ARG(6), TK_ARG(7),
// The later operand and the larger kernel: a plain row kernel, then the
// add's kernel.
// RES-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_SCRATCH(0), TK_RESULT(5), TK_ARG(4), TK_ARG(5), TK_ARG(6),
// RES-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_SCRATCH([[LATE:[0-9]+]]), TK_ARG(7),
// RES-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 2, 256, TK_RESULT(4), TK_SCRATCH([[LATE]]), TK_SCRATCH(0),
// RES-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_SCRATCH(0), TK_SCRATCH({{[0-9]+}}), TK_ARG(4), TK_ARG(5), TK_ARG(7),
// RES-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 2, 256, TK_RESULT(6), TK_ARG(7), TK_SCRATCH(0),
func.func @residual_grads(%x: tensor<4x300xbf16>, %w: tensor<300xbf16>, %dy: tensor<4x300xbf16>, %r: tensor<4x300xbf16>,
                          %y: tensor<4x300xf32>, %v: tensor<300xf32>, %dz: tensor<4x300xf32>, %q: tensor<4x300xf32>)
    -> (tensor<4x300xbf16>, tensor<4x300xbf16>, tensor<4x300xf32>, tensor<4x300xf32>, tensor<4x300xf32>, tensor<4x300xf32>, tensor<4x300xf32>) {
  %dx, %terms = nn.layer_norm_grad %x, %w, %dy {epsilon = 1.0e-05 : f64} : tensor<4x300xbf16>, tensor<300xbf16>, tensor<4x300xbf16>
  %sum = nn.add %r, %dx : tensor<4x300xbf16>, tensor<4x300xbf16> -> tensor<4x300xbf16>
  %dy2, %yhat = nn.rms_norm_grad %y, %v, %dz {epsilon = 1.0e-05 : f64} : tensor<4x300xf32>, tensor<300xf32>, tensor<4x300xf32>
  %sum2 = nn.add %dy2, %q : tensor<4x300xf32>, tensor<4x300xf32> -> tensor<4x300xf32>
  %dx3, %terms3 = nn.layer_norm_grad %y, %v, %dz {epsilon = 1.0e-05 : f64} : tensor<4x300xf32>, tensor<300xf32>, tensor<4x300xf32>
  %late = nn.softmax %q {axis = 1 : i64} : tensor<4x300xf32>
  %sum3 = nn.add %late, %dx3 : tensor<4x300xf32>, tensor<4x300xf32> -> tensor<4x300xf32>
  %dx4, %terms4 = nn.layer_norm_grad %y, %v, %q {epsilon = 1.0e-05 : f64} : tensor<4x300xf32>, tensor<300xf32>, tensor<4x300xf32>
  %sum4 = nn.add %q, %dx4 : tensor<4x300xf32>, tensor<4x300xf32> -> tensor<4x300xf32>
  %neg4 = nn.neg %sum4 : tensor<4x300xf32>
  return %sum, %terms, %sum2, %yhat, %sum3, %terms3, %neg4 : tensor<4x300xbf16>, tensor<4x300xbf16>, tensor<4x300xf32>, tensor<4x300xf32>, tensor<4x300xf32>, tensor<4x300xf32>, tensor<4x300xf32>
}

// A cast of a column reduction's result that nothing else reads is the
// reduction's epilogue (a bf16 bias gradient widened for its f32 master
// weight): the pass that finishes each output rounds the sum to bf16 and
// stores it as f32, one launch instead of two; with partials (few outputs
// of a long column) the pass over the partials does it. A sum that is
// also returned, and a reduction over rows, keep their casts apart.
// RUN: FileCheck %s --check-prefix=CAST --input-file=%t.cu
// CAST-LABEL: // nn.reduce_sum: 96 outputs of 8 strided inputs
// CAST: tk_store(o0, tk_g, tk_round(tk_acc, (tk_bf16 *)0));
// CAST-LABEL: // nn.reduce_sum: 32 outputs of 200 strided inputs, partials of 4 chunks
// CAST: o0[tk_g] = tk_acc;
// CAST-LABEL: // nn.reduce_sum: 32 outputs of 4 partials
// CAST: tk_store(o0, o, tk_round(tk_acc, (tk_bf16 *)0));
// CAST-LABEL: static const int64_t tandem_cast_sums_program[] = {
// CAST-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(0), TK_ARG(0),
// CAST-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_SCRATCH([[P:[0-9]+]]), TK_ARG(1),
// CAST-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(1), TK_SCRATCH([[P]]),
// CAST-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(3), TK_ARG(0),
// CAST-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(2), TK_RESULT(3),
// CAST-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 8, 256, TK_SCRATCH({{[0-9]+}}), TK_ARG(0),
// CAST-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(4), TK_SCRATCH({{[0-9]+}}),
// CAST-NEXT: TK_OP_END
// IR-LABEL: func.func @cast_sums(
// IR: nn.reduce_sum {{.*}}nn.kernel = [[C:[0-9]+]]
// IR-NEXT: nn.cast {{.*}}nn.kernel = [[C]]
// IR-NEXT: nn.reduce_sum {{.*}}nn.kernel = [[D:[0-9]+]]
// IR-NEXT: nn.cast {{.*}}nn.kernel = [[D]]
// IR-NEXT: nn.reduce_sum {{.*}}nn.kernel = [[E:[0-9]+]]
// IR-NEXT: nn.cast {{.*}}nn.kernel = [[F:[0-9]+]]
// IR-NEXT: nn.reduce_sum {{.*}}nn.kernel = [[G:[0-9]+]]
// IR-NEXT: nn.cast {{.*}}nn.kernel = [[H:[0-9]+]]
func.func @cast_sums(%x: tensor<8x96xbf16>, %y: tensor<200x32xbf16>)
    -> (tensor<96xf32>, tensor<32xf32>, tensor<96xf32>, tensor<96xbf16>, tensor<8xf32>) {
  %a = nn.reduce_sum %x [0] : tensor<8x96xbf16> -> tensor<96xbf16>
  %af = nn.cast %a : tensor<96xbf16> to tensor<96xf32>
  %b = nn.reduce_sum %y [0] : tensor<200x32xbf16> -> tensor<32xbf16>
  %bf = nn.cast %b : tensor<32xbf16> to tensor<32xf32>
  %c = nn.reduce_sum %x [0] : tensor<8x96xbf16> -> tensor<96xbf16>
  %cf = nn.cast %c : tensor<96xbf16> to tensor<96xf32>
  %r = nn.reduce_sum %x [1] : tensor<8x96xbf16> -> tensor<8xbf16>
  %rf = nn.cast %r : tensor<8xbf16> to tensor<8xf32>
  return %af, %bf, %cf, %c, %rf : tensor<96xf32>, tensor<32xf32>, tensor<96xf32>, tensor<96xbf16>, tensor<8xf32>
}

// A residual add before a norm is computed where the norm reads its rows
// (the kernel is the norm's row input, `nn.kernel_row_input`): the f32
// stream plus a widened bf16 branch, or two bf16 buffers (rounded to bf16
// as the add's kernel would store it), loaded in every pass, and stored
// once, in the last, when anything else reads the sum. Not when the sum is
// read before the norm, nor for a row op that is not a norm.
// RUN: FileCheck %s --check-prefix=RIN --input-file=%t.cu
// IR-LABEL: func.func @residual_norms(
// IR: nn.cast {{.*}}nn.kernel = [[A:[0-9]+]]
// IR-NEXT: nn.add {{.*}}nn.kernel = [[A]]
// IR-NEXT: nn.layer_norm {{.*}}nn.kernel_row_input = [[A]]
// IR-NEXT: nn.add {{.*}}nn.kernel = [[B:[0-9]+]]
// IR-NEXT: nn.rms_norm {{.*}}nn.kernel_row_input = [[B]]
// IR-NOT: nn.kernel_row_input
// IR: return
// RIN-LABEL: // nn.add + nn.layer_norm: 4 rows of 300
// RIN: const float x = (tk_load(i0, row * 300 + j) + tk_load(i3, row * 300 + j));
// RIN-NEXT: tk_acc = tk_op_add::apply(tk_acc, x);
// RIN: tk_stats[1] =
// RIN: const float x = (tk_load(i0, row * 300 + j) + tk_load(i3, row * 300 + j));
// RIN-NEXT: const auto p1 = tk_load(i1, j);
// RIN-NEXT: const auto p2 = tk_load(i2, j);
// RIN-NEXT: tk_store(o0, row * 300 + j, (x - s0) * s1 * p1 + p2);
// RIN-NEXT: tk_store(o1, row * 300 + j, x);
// RIN-LABEL: // nn.add + nn.rms_norm: 4 rows of 300
// RIN: const float x = tk_round((tk_load(i0, row * 300 + j) + tk_load(i2, row * 300 + j)), (tk_bf16 *)0);
// RIN-NOT: tk_store(o1
// RIN-LABEL: static const int64_t tandem_residual_norms_program[] = {
// RIN-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_RESULT(0), TK_RESULT(1), TK_ARG(0), TK_ARG(2), TK_ARG(3), TK_ARG(1),
// RIN-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_RESULT(2), TK_ARG(4), TK_ARG(6), TK_ARG(5),
// The sum read before the norm, and the softmax: the add's kernel, then
// the row kernel.
// RIN-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 2, 256, TK_SCRATCH(0), TK_RESULT(3), TK_ARG(0), TK_RESULT(0),
// RIN-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_RESULT(4), TK_SCRATCH(0), TK_ARG(2), TK_ARG(3),
// RIN-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 2, 256, TK_SCRATCH(0), TK_ARG(0), TK_RESULT(4),
// RIN-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 4, 256, TK_RESULT(5), TK_SCRATCH(0),
// RIN-NEXT: TK_OP_END
func.func @residual_norms(%r: tensor<4x300xf32>, %p: tensor<4x300xbf16>, %w: tensor<300xf32>, %b: tensor<300xf32>,
                          %r2: tensor<4x300xbf16>, %p2: tensor<4x300xbf16>, %v: tensor<300xbf16>)
    -> (tensor<4x300xf32>, tensor<4x300xf32>, tensor<4x300xbf16>, tensor<4x300xf32>, tensor<4x300xf32>, tensor<4x300xf32>) {
  %pf = nn.cast %p : tensor<4x300xbf16> to tensor<4x300xf32>
  %x = nn.add %r, %pf : tensor<4x300xf32>, tensor<4x300xf32> -> tensor<4x300xf32>
  %n = nn.layer_norm %x, %w, %b {epsilon = 1.0e-05 : f64} : tensor<4x300xf32>, tensor<300xf32>, tensor<300xf32>
  %x2 = nn.add %r2, %p2 : tensor<4x300xbf16>, tensor<4x300xbf16> -> tensor<4x300xbf16>
  %n2 = nn.rms_norm %x2, %v {epsilon = 1.0e-05 : f64} : tensor<4x300xbf16>, tensor<300xbf16>
  %x3 = nn.add %r, %n : tensor<4x300xf32>, tensor<4x300xf32> -> tensor<4x300xf32>
  %e3 = nn.exp %x3 : tensor<4x300xf32>
  %n3 = nn.layer_norm %x3, %w, %b {epsilon = 1.0e-05 : f64} : tensor<4x300xf32>, tensor<300xf32>, tensor<300xf32>
  %x4 = nn.add %r, %n3 : tensor<4x300xf32>, tensor<4x300xf32> -> tensor<4x300xf32>
  %s4 = nn.softmax %x4 {axis = 1 : i64} : tensor<4x300xf32>
  return %n, %x, %n2, %e3, %n3, %s4 : tensor<4x300xf32>, tensor<4x300xf32>, tensor<4x300xbf16>, tensor<4x300xf32>, tensor<4x300xf32>, tensor<4x300xf32>
}
