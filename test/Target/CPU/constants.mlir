// RUN: tandem-translate %s --tandem-to-source | FileCheck %s
// RUN: tandem-translate %s --tandem-to-source -o %t.cpp
// RUN: c++ -std=c++17 -fsyntax-only %t.cpp

// Dense constants: a mask with long runs of equal elements (a causal mask
// has two per row) is stored as run lengths that the first call of an
// entry point expands (not a load-time constructor: loading a library runs
// none of its code), so a 1024 x 1024 mask is not a million-element
// initializer; a constant without long runs is an initializer list; the
// same constant in two functions is one array.

// CHECK: alignas(64) float tk_const0[64];
// CHECK-NEXT: const struct { int64_t count; float value; } tk_const0_runs[2] = {
// CHECK-NEXT: {36, (float)(0x0p+0)}, {28, (float)(-(double)INFINITY)},
// CHECK-NOT: constructor
// CHECK: void tk_const0_expand() {
// CHECK: alignas(64) const float tk_const1[4] = {
// CHECK-NEXT: (float)(0x1p+0), (float)(0x1p+1), (float)(0x1.8p+1), (float)(0x1p+2),
// CHECK-NOT: tk_const2
// CHECK: void tk_expand_constants() {
// CHECK-NEXT: static const bool expanded = [] {
// CHECK-NEXT: tk_const0_expand();
// CHECK-NEXT: return true;
// CHECK: int tandem_masked(
// CHECK: tk_expand_constants();

func.func @masked(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %mask = nn.constant dense<[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                             [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                             [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                             [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                             [0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000],
                             [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000],
                             [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000],
                             [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000]]> : tensor<8x8xf32>
  %y = nn.add %x, %mask : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

func.func @scaled(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = nn.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %y = nn.mul %x, %c : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %y : tensor<4xf32>
}

func.func @again(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %mask = nn.constant dense<[[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                             [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                             [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                             [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                             [0.0, 0.0, 0.0, 0.0, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000],
                             [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000],
                             [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000],
                             [0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000, 0xFF800000]]> : tensor<8x8xf32>
  %y = nn.sub %x, %mask : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
