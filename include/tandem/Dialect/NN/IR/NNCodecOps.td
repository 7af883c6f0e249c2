//===- NNCodecOps.td - blockwise quantize and dequantize --*- tablegen -*-===//
//
// Stateless codecs: a float tensor becomes a narrow payload and one f32
// scale per block of `block` elements along its last dimension, and back.
// mpmd-compress-transfers puts them on stage edges; a model may use them
// directly (their gradients are straight-through). The arithmetic is
// include/tandem/Support/Codec.h, shared by the evaluator and the emitters.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_NN_IR_NNCODECOPS_TD
#define TANDEM_DIALECT_NN_IR_NNCODECOPS_TD

// i8 holds symmetric integer codes; the f8 types hold f8 codes.
def NN_PayloadTensor : StaticShapeTensorOf<[I8, F8E4M3FN, F8E5M2]>;

def NN_QuantizeOp : NN_Op<"quantize", [Pure]> {
  let summary = "Blockwise quantization to a narrow payload and f32 scales";
  let description = [{
    Splits the last dimension of `input` (n elements) into blocks of
    `block` elements (the last block holds the rest when `block` does not
    divide n) and encodes each block with one scale:

    - `amax` is the block's largest magnitude, and `L` the payload's largest
      code: 127 for i8 (symmetric: codes in [-127, 127]), 448 for
      f8E4M3FN, 57344 for f8E5M2;
    - the scale is `s = amax / L` rounded up to f32, so that no element's
      `|x / s|` exceeds `L` (and `s` is positive when `amax` is);
    - each element is encoded as `x / s`, rounded to nearest (ties to even)
      into the payload type;
    - a block of zeros gets scale 0 and zero codes; a block holding an
      infinity or a NaN (or whose `amax / L` overflows f32) gets scale NaN
      and zero codes, so that every element of it decodes to NaN.

    Decoding (`nn.dequantize`) is within `s / 2` of the input for i8, and
    within `s * max(|x / s| * 2^-4, 2^-10)` for f8E4M3FN
    (`2^-3` and `2^-17` for f8E5M2), before rounding to its result type.

    `scales` has the input's shape with the last dimension `ceil(n /
    block)`. The input may be of any float type; `block` is at least 1.

    ```mlir
    %q, %s = nn.quantize %x {block = 128} : tensor<8x256xf32> to tensor<8x256xi8>, tensor<8x2xf32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$block);
  let results = (outs NN_PayloadTensor:$payload, NN_FloatTensor:$scales);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `to` type($payload) `,` type($scales)
  }];
  let hasVerifier = 1;
}

def NN_DequantizeOp : NN_Op<"dequantize", [Pure]> {
  let summary = "Decodes a blockwise-quantized payload";
  let description = [{
    The inverse of `nn.quantize` with the same `block`: element `j` of the
    last dimension is its code times scale `j / block` of its row, computed
    exactly and rounded once to the result's float type (which need not be
    the type that was quantized). The result has the payload's shape.

    ```mlir
    %y = nn.dequantize %q, %s {block = 128} : tensor<8x256xi8>, tensor<8x2xf32> to tensor<8x256xbf16>
    ```
  }];
  let arguments = (ins NN_PayloadTensor:$payload, NN_FloatTensor:$scales,
                       I64Attr:$block);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $payload `,` $scales attr-dict `:` type($payload) `,` type($scales) `to`
    type($result)
  }];
  let hasVerifier = 1;
}

#endif // TANDEM_DIALECT_NN_IR_NNCODECOPS_TD
