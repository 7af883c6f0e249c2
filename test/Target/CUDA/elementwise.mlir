// The CUDA emitter's elementwise kernels: one kernel per recorded kernel,
// written through the macro layer (TK_KERNEL, TK_PHASE), f32
// arithmetic with each op's result rounded to its type, broadcast operands
// indexed from the decomposed element index, splat constants as literals,
// identical kernels once, views as pointers and results written in place or
// copied. nvcc compiles the same text for sm_90a and sm_80, and the host
// compiler for the emulation.
//
// RUN: tandem-translate %s --tandem-to-source --target cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// RUN: c++ -x c++ -std=c++17 -fsyntax-only -Wall -Werror %t.cu

// CHECK: extern "C" const char tandem_cuda_emulated[] = "no";
// CHECK: extern "C" const char tandem_cuda_emulated[] = "yes";

// The bf16 kernel: operands widened to float, every op rounded to bf16.
// CHECK-LABEL: TK_KERNEL tk_k{{[0-9a-f]+}}(TK_KERNEL_ARGS tk_bf16 *__restrict__ o0, const tk_bf16 *__restrict__ i0, const tk_bf16 *__restrict__ i1) {
// CHECK-NEXT: // nn.add, nn.mul, nn.gelu
// CHECK-NEXT: TK_PHASE
// CHECK-NEXT: for (int64_t i = TK_BLOCK * TK_BLOCK_DIM + TK_THREAD; i < 32; i += TK_GRID_DIM * TK_BLOCK_DIM) {
// CHECK-NEXT: int64_t tk_r = i;
// CHECK-NEXT: const int64_t d1 = tk_r % 8;
// CHECK-NEXT: tk_r /= 8;
// CHECK-NEXT: const int64_t d0 = tk_r % 4;
// CHECK-NEXT: const float t_i0 = tk_load(i0, d0 * 8 + d1);
// CHECK-NEXT: const float t_i1 = tk_load(i1, d1);
// CHECK-NEXT: const float t0 = tk_round((t_i0 + t_i1), (tk_bf16 *)0);
// CHECK-NEXT: const float t1 = tk_round((t0 * (0x1p+1f)), (tk_bf16 *)0);
// CHECK-NEXT: const float t2 = tk_round(tk_gelu(t1), (tk_bf16 *)0);
// CHECK-NEXT: tk_store(o0, i, t2);
// CHECK-NEXT: }
// CHECK-NEXT: TK_END_PHASE

// The f32 kernel: flat, no rounding; written once for both functions. Its
// 5000 elements move as 1250 16-byte vectors of 4.
// CHECK: TK_KERNEL [[$F32:tk_k[0-9a-f]+]](TK_KERNEL_ARGS float *__restrict__ o0, const float *__restrict__ i0) {
// CHECK-NEXT: // nn.exp, nn.neg
// CHECK-NEXT: TK_PHASE
// CHECK-NEXT: for (int64_t tk_v = TK_BLOCK * TK_BLOCK_DIM + TK_THREAD; tk_v < 1250; tk_v += TK_GRID_DIM * TK_BLOCK_DIM) {
// CHECK-NEXT: alignas(16) float tk_i0[4];
// CHECK-NEXT: tk_load_vec<4>(i0 + tk_v * 4, tk_i0);
// CHECK-NEXT: alignas(16) float tk_o0[4];
// CHECK-NEXT: TK_UNROLL(4)
// CHECK-NEXT: for (int64_t tk_e = 0; tk_e < 4; ++tk_e) {
// CHECK-NEXT: const float t_i0 = tk_load(tk_i0, tk_e);
// CHECK-NEXT: const float t0 = tk_exp(t_i0);
// CHECK-NEXT: const float t1 = (-t0);
// CHECK-NEXT: tk_store(tk_o0, tk_e, t1);
// CHECK-NEXT: }
// CHECK-NEXT: tk_store_vec<4>(o0 + tk_v * 4, tk_o0);
// CHECK-NEXT: }
// CHECK-NEXT: TK_END_PHASE

// Mixed widths: 16 bytes of the bf16 buffers are 8 elements, so the f32
// buffers move 32 bytes (two vectors) per step; the single-element operand
// is read as it is and the constant array by the element's index.
// CHECK: TK_KERNEL [[$MIXED:tk_k[0-9a-f]+]](TK_KERNEL_ARGS float *__restrict__ o0, tk_bf16 *__restrict__ o1, const float *__restrict__ i0, const float *__restrict__ i1) {
// CHECK-NEXT: // nn.mul, nn.add, nn.cast, nn.mul
// CHECK-NEXT: TK_PHASE
// CHECK-NEXT: for (int64_t tk_v = TK_BLOCK * TK_BLOCK_DIM + TK_THREAD; tk_v < 2; tk_v += TK_GRID_DIM * TK_BLOCK_DIM) {
// CHECK-NEXT: alignas(16) float tk_i0[8];
// CHECK-NEXT: tk_load_vec<8>(i0 + tk_v * 8, tk_i0);
// CHECK-NEXT: alignas(16) float tk_o0[8];
// CHECK-NEXT: alignas(16) tk_bf16 tk_o1[8];
// CHECK-NEXT: TK_UNROLL(8)
// CHECK-NEXT: for (int64_t tk_e = 0; tk_e < 8; ++tk_e) {
// CHECK-NEXT: const int64_t i = tk_v * 8 + tk_e;
// CHECK-NEXT: const float t_i0 = tk_load(tk_i0, tk_e);
// CHECK-NEXT: const float t_i1 = tk_load(i1, 0);
// CHECK-NEXT: const float t_i2 = tk_load(c{{[0-9]+}}, i);
// CHECK: tk_store(tk_o0, tk_e, t1);
// CHECK-NEXT: tk_store(tk_o1, tk_e, t3);
// CHECK-NEXT: }
// CHECK-NEXT: tk_store_vec<8>(o0 + tk_v * 8, tk_o0);
// CHECK-NEXT: tk_store_vec<8>(o1 + tk_v * 8, tk_o1);

// 3 x 333 elements are not whole vectors: one element per step.
// CHECK: TK_KERNEL [[$ODD:tk_k[0-9a-f]+]](TK_KERNEL_ARGS float *__restrict__ o0, const float *__restrict__ i0) {
// CHECK-NEXT: // nn.sqrt
// CHECK-NEXT: TK_PHASE
// CHECK-NEXT: for (int64_t i = TK_BLOCK * TK_BLOCK_DIM + TK_THREAD; i < 999; i += TK_GRID_DIM * TK_BLOCK_DIM) {

// erf and erfc call our functions; stop_gradient is its operand's value,
// fused with them into one kernel.
// CHECK: TK_KERNEL [[$ERF:tk_k[0-9a-f]+]](TK_KERNEL_ARGS float *__restrict__ o0, float *__restrict__ o1, const float *__restrict__ i0) {
// CHECK-NEXT: // nn.erf, nn.stop_gradient, nn.erfc, nn.sub
// CHECK: const float t_i0 = tk_load(i0, i);
// CHECK-NEXT: const float t0 = tk_erf(t_i0);
// CHECK-NEXT: const float t1 = t0;
// CHECK-NEXT: const float t2 = tk_erfc(t1);
// CHECK-NEXT: const float t3 = (t0 - t1);
// CHECK-NOT: TK_KERNEL

// CHECK-LABEL: extern "C" uint64_t tandem_bf16_scratch_bytes(void) { return 0; }
// CHECK-LABEL: static const int64_t tandem_bf16_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(0), TK_ARG(0), TK_ARG(1),
// CHECK-NEXT: TK_OP_COPY, TK_RESULT(1), TK_RESULT(0), 64,
// CHECK-NEXT: TK_OP_END};
// CHECK-NEXT: extern "C" int tandem_bf16(
// CHECK-NEXT: return tk_run(tk_this_unit, tandem_bf16_program, context, args, results, scratch);
func.func @bf16(%x: tensor<4x8xbf16>, %b: tensor<8xbf16>) -> (tensor<4x8xbf16>, tensor<4x8xbf16>) {
  %c = nn.constant dense<2.0> : tensor<bf16>
  %y = nn.add %x, %b : tensor<4x8xbf16>, tensor<8xbf16> -> tensor<4x8xbf16>
  %m = nn.mul %y, %c : tensor<4x8xbf16>, tensor<bf16> -> tensor<4x8xbf16>
  %z = nn.gelu %m : tensor<4x8xbf16>
  %r = nn.reshape %z : tensor<4x8xbf16> to tensor<32xbf16>
  %w = nn.reshape %r : tensor<32xbf16> to tensor<4x8xbf16>
  return %z, %w : tensor<4x8xbf16>, tensor<4x8xbf16>
}

// A value read after its kernel lives in scratch; the grid covers 1250
// vectors with 5 blocks of 256 threads.
// CHECK-LABEL: extern "C" uint64_t tandem_f32_scratch_bytes(void) { return 20224; }
// CHECK-LABEL: static const int64_t tandem_f32_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$F32]]_id, 5, 256, TK_SCRATCH(0), TK_ARG(0),
// CHECK-NEXT: TK_OP_LAUNCH, [[$F32]]_id, 5, 256, TK_RESULT(0), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_END};
func.func @f32(%x: tensor<5000xf32>) -> tensor<5000xf32> {
  %e = nn.exp %x : tensor<5000xf32>
  %n = nn.neg %e : tensor<5000xf32>
  %s = nn.stage_end %n : tensor<5000xf32>
  %e2 = nn.exp %s : tensor<5000xf32>
  %n2 = nn.neg %e2 : tensor<5000xf32>
  return %n2 : tensor<5000xf32>
}

// CHECK-LABEL: static const int64_t tandem_mixed_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$MIXED]]_id, 1, 256, TK_RESULT(1), TK_RESULT(0), TK_ARG(0), TK_ARG(1),
func.func @mixed(%x: tensor<2x8xf32>, %s: tensor<f32>) -> (tensor<2x8xbf16>, tensor<2x8xf32>) {
  %c = nn.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0]]> : tensor<2x8xf32>
  %m = nn.mul %x, %s : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %a = nn.add %m, %c : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %h = nn.cast %a : tensor<2x8xf32> to tensor<2x8xbf16>
  %d = nn.mul %h, %h : tensor<2x8xbf16>, tensor<2x8xbf16> -> tensor<2x8xbf16>
  return %d, %a : tensor<2x8xbf16>, tensor<2x8xf32>
}

// CHECK-LABEL: static const int64_t tandem_odd_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$ODD]]_id, 4, 256, TK_RESULT(0), TK_ARG(0),
func.func @odd(%x: tensor<3x333xf32>) -> tensor<3x333xf32> {
  %s = nn.sqrt %x : tensor<3x333xf32>
  return %s : tensor<3x333xf32>
}

// CHECK-LABEL: static const int64_t tandem_error_functions_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, [[$ERF]]_id, 1, 256, TK_RESULT(0), TK_RESULT(1), TK_ARG(0),
func.func @error_functions(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %e = nn.erf %x : tensor<3x5xf32>
  %s = nn.stop_gradient %e : tensor<3x5xf32>
  %c = nn.erfc %s : tensor<3x5xf32>
  %d = nn.sub %e, %s : tensor<3x5xf32>, tensor<3x5xf32> -> tensor<3x5xf32>
  return %c, %d : tensor<3x5xf32>, tensor<3x5xf32>
}
