// The blockwise codecs (docs/compression.md): nn.quantize is a thread per
// block (the block's largest magnitude in order, its scale, its codes),
// nn.dequantize a thread per element; both call tandem_codec's arithmetic
// (include/tandem/Support/Codec.h, pasted into the prelude and qualified
// for the device), so they give the evaluator's and the CPU target's bits.
// Payloads are a byte per code; data movement copies them as bytes.
//
// RUN: tandem-translate %s --tandem-to-source --target cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// RUN: c++ -x c++ -std=c++17 -fsyntax-only -Wall -Werror %t.cu

// The prelude: Rounding.h's functions and formats and Codec.h's functions
// on both sides.
// CHECK: #define TANDEM_HD __host__ __device__
// CHECK: TANDEM_DEVICE_CONSTANT constexpr BinaryFormat kF8E4M3FN
// CHECK: TANDEM_HD inline double roundBinary(
// CHECK: TANDEM_HD inline float blockScale(double amax, Code code) {

func.func @encode(%x: tensor<8x40xf32>) -> (tensor<8x40xf8E4M3FN>, tensor<8x3xf32>, tensor<40x8xf8E4M3FN>) {
  %q, %s = nn.quantize %x {block = 16} : tensor<8x40xf32> to tensor<8x40xf8E4M3FN>, tensor<8x3xf32>
  %t = nn.transpose %q, [1, 0] : tensor<8x40xf8E4M3FN> -> tensor<40x8xf8E4M3FN>
  return %q, %s, %t : tensor<8x40xf8E4M3FN>, tensor<8x3xf32>, tensor<40x8xf8E4M3FN>
}

func.func @decode(%q: tensor<8x40xi8>, %s: tensor<8x5xf32>) -> tensor<8x40xbf16> {
  %y = nn.dequantize %q, %s {block = 8} : tensor<8x40xi8>, tensor<8x5xf32> to tensor<8x40xbf16>
  return %y : tensor<8x40xbf16>
}

// A thread per block of 16 along rows of 40 (the last block 8 long): its
// largest magnitude in order, its scale, then its codes as bytes.
// CHECK-LABEL: // nn.quantize to f8E4M3FN: 8 row(s) of 40 in blocks of 16, a thread per block
// CHECK-NEXT: TK_PHASE
// CHECK-NEXT: for (int64_t k = TK_BLOCK * TK_BLOCK_DIM + TK_THREAD; k < 24; k += TK_GRID_DIM * TK_BLOCK_DIM) {
// CHECK-NEXT: const int64_t b = k % 3;
// CHECK-NEXT: const int64_t begin = (k / 3) * 40 + b * 16;
// CHECK-NEXT: const int64_t end = begin + (b == 2 ? 8 : 16);
// CHECK-NEXT: double amax = 0.0;
// CHECK-NEXT: for (int64_t i = begin; i < end; ++i)
// CHECK-NEXT: amax = tandem_codec::foldMagnitude(amax, tk_codec_load(i0, i));
// CHECK-NEXT: const float s = tandem_codec::blockScale(amax, (tandem_codec::Code)1);
// CHECK-NEXT: o1[k] = s;
// CHECK-NEXT: for (int64_t i = begin; i < end; ++i)
// CHECK-NEXT: o0[i] = tandem_codec::codeByte(tandem_codec::encode(tk_codec_load(i0, i), s, (tandem_codec::Code)1), (tandem_codec::Code)1);
// The payload moves as bytes.
// CHECK-LABEL: TK_KERNEL {{tk_k[0-9a-f]+}}(TK_KERNEL_ARGS uint8_t *__restrict__ o0, const uint8_t *__restrict__ i0) {
// CHECK-NEXT: // copy of 320 elements
// A thread per element: the code of its byte times its block's scale, in
// double, rounded once to bf16.
// CHECK-LABEL: TK_KERNEL {{tk_k[0-9a-f]+}}(TK_KERNEL_ARGS tk_bf16 *__restrict__ o0, const uint8_t *__restrict__ i0, const float *__restrict__ i1) {
// CHECK-NEXT: // nn.dequantize from i8: 8 row(s) of 40 in blocks of 8, a thread per element
// CHECK: for (int64_t i = TK_BLOCK * TK_BLOCK_DIM + TK_THREAD; i < 320; i += TK_GRID_DIM * TK_BLOCK_DIM) {
// CHECK-NEXT: const int64_t j = i % 40;
// CHECK-NEXT: tk_codec_store(o0, i, tandem_codec::decode(tandem_codec::codeOfByte(i0[i], (tandem_codec::Code)0), i1[(i / 40) * 5 + j / 8]));

// The payload and the scales are computed into their result buffers, a
// thread per block of the 24 (one block of 256 threads).
// CHECK-LABEL: static const int64_t tandem_encode_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 1, 256, TK_RESULT(0), TK_RESULT(1), TK_ARG(0),
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 2, 256, TK_RESULT(2), TK_RESULT(0),
// CHECK-NEXT: TK_OP_END};
// CHECK-LABEL: static const int64_t tandem_decode_program[] = {
// CHECK-NEXT: TK_OP_LAUNCH, {{tk_k[0-9a-f]+}}_id, 2, 256, TK_RESULT(0), TK_ARG(0), TK_ARG(1),
// CHECK-NEXT: TK_OP_END};
