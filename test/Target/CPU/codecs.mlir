// RUN: tandem-translate %s --tandem-to-source | FileCheck %s

// The codecs become loops over rows and blocks that call the evaluator's
// own codec (tandem/Support/Codec.h, in the prelude): a 300-wide row in
// blocks of 128 has 3 blocks, the last of 44; payloads are bytes, the
// transposed payload moves as bytes.

// CHECK: namespace tandem_codec {
// CHECK-LABEL: extern "C" int tandem_forward(
// CHECK: for (int64_t r = 0; r < 2; ++r)
// CHECK-NEXT: for (int64_t b = 0; b < 3; ++b) {
// CHECK: const int64_t end = begin + (b == 2 ? 44 : 128);
// CHECK: amax = tandem_codec::foldMagnitude(amax, (double)
// CHECK: const float s = tandem_codec::blockScale(amax, (tandem_codec::Code)0);
// CHECK: tandem_codec::codeByte(tandem_codec::encode((double){{.*}}[i], s, (tandem_codec::Code)0), (tandem_codec::Code)0);
// CHECK: (float)tandem_codec::decode(tandem_codec::codeOfByte({{.*}}[i], (tandem_codec::Code)0), {{.*}}[r * 3 + j / 128]);
// CHECK: tandem_codec::Code)2
func.func @forward(%x: tensor<2x300xf32>, %h: tensor<4x64xbf16>) -> (tensor<2x300xf32>, tensor<64x4xf8E5M2>, tensor<4x1xf32>) {
  %q, %s = nn.quantize %x {block = 128} : tensor<2x300xf32> to tensor<2x300xi8>, tensor<2x3xf32>
  %y = nn.dequantize %q, %s {block = 128} : tensor<2x300xi8>, tensor<2x3xf32> to tensor<2x300xf32>
  %q5, %s5 = nn.quantize %h {block = 64} : tensor<4x64xbf16> to tensor<4x64xf8E5M2>, tensor<4x1xf32>
  %t = nn.transpose %q5, [1, 0] : tensor<4x64xf8E5M2> -> tensor<64x4xf8E5M2>
  return %y, %t, %s5 : tensor<2x300xf32>, tensor<64x4xf8E5M2>, tensor<4x1xf32>
}
