// Tensors with a zero extent launch nothing: a GPU refuses a launch of zero
// blocks (cudaErrorInvalidConfiguration) that the emulation's loop over
// blocks would run as nothing, so the fragment would fail on the GPU only.
// A row reduction over zero rows (a split row kernel: rows of 40000) and an
// attention over an empty batch leave no launch step in the program.
// RUN: tandem-translate %s --tandem-to-source --target cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// CHECK-LABEL: tandem_empty_program[] = {
// CHECK-NOT: TK_OP_LAUNCH, tk_
// CHECK: TK_OP_END

func.func @empty(%y: tensor<0x40000xf32>, %q: tensor<0x16x32xf32>)
    -> (tensor<0xf32>, tensor<0x16x32xf32>) {
  %m = nn.reduce_sum %y [1] : tensor<0x40000xf32> -> tensor<0xf32>
  %a = nn.attention %q, %q, %q {heads = 2 : i64, causal}
      : tensor<0x16x32xf32>, tensor<0x16x32xf32>, tensor<0x16x32xf32>
      -> tensor<0x16x32xf32>
  return %m, %a : tensor<0xf32>, tensor<0x16x32xf32>
}
