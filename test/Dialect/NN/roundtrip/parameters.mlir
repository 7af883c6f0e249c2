// RUN: tandem-opt %s | tandem-opt | FileCheck %s
// RUN: tandem-opt %s --mlir-print-op-generic | tandem-opt | FileCheck %s
// Parameters (nn.parameter), their initializers (#nn.init) and reads (nn.param).

// CHECK-LABEL: nn.parameter @zeros_f32 : tensor<32xf32> = zeros
nn.parameter @zeros_f32 : tensor<32xf32> = zeros
// CHECK-LABEL: nn.parameter @ones_f64 : tensor<4x4xf64> = ones
nn.parameter @ones_f64 : tensor<4x4xf64> = ones
// CHECK-LABEL: nn.parameter @normal_f16 : tensor<8x8xf16> = normal(2.000000e-02)
nn.parameter @normal_f16 : tensor<8x8xf16> = normal(2.000000e-02)
// CHECK-LABEL: nn.parameter @uniform_bf16 : tensor<2x3x4xbf16> = uniform(-1.000000e-01, 1.000000e-01)
nn.parameter @uniform_bf16 : tensor<2x3x4xbf16> = uniform(-1.000000e-01, 1.000000e-01)
// CHECK-LABEL: nn.parameter @zeros_f8e4m3 : tensor<16xf8E4M3FN> = zeros
nn.parameter @zeros_f8e4m3 : tensor<16xf8E4M3FN> = zeros
// CHECK-LABEL: nn.parameter @ones_f8e5m2 : tensor<16xf8E5M2> = ones
nn.parameter @ones_f8e5m2 : tensor<16xf8E5M2> = ones
// CHECK-LABEL: nn.parameter @scalar : tensor<f32> = normal(1.000000e+00)
nn.parameter @scalar : tensor<f32> = normal(1.000000e+00)
// CHECK-LABEL: nn.parameter @h.0.attn.c_attn.weight : tensor<32x96xf32> = normal(2.000000e-02)
nn.parameter @h.0.attn.c_attn.weight : tensor<32x96xf32> = normal(2.000000e-02)
// Initializer parameters print back exactly: as a decimal that parses back
// to the same double.
// CHECK-LABEL: nn.parameter @normal_exact : tensor<4xf32> = normal(0.0123456789)
nn.parameter @normal_exact : tensor<4xf32> = normal(0.0123456789)
// CHECK-LABEL: nn.parameter @uniform_exact : tensor<4xf32> = uniform(-0.33333333333333298, 0.66666666666666663)
nn.parameter @uniform_exact : tensor<4xf32> = uniform(-0.333333333333333, 0.66666666666666663)
// CHECK-LABEL: nn.parameter @uniform_int_bounds : tensor<4xf32> = uniform(-2.000000e+00, 3.000000e+00)
nn.parameter @uniform_int_bounds : tensor<4xf32> = uniform(-2., 3.)
// CHECK-LABEL: nn.parameter @normal_tiny : tensor<4xf32> = normal(1.000000e-300)
nn.parameter @normal_tiny : tensor<4xf32> = normal(1.0e-300)
// CHECK-LABEL: nn.parameter @normal_huge : tensor<4xf32> = normal(1.000000e+300)
nn.parameter @normal_huge : tensor<4xf32> = normal(1.0e+300)
// CHECK-LABEL: nn.parameter @uniform_asym : tensor<4xf32> = uniform(0.000000e+00, 1.000000e-03)
nn.parameter @uniform_asym : tensor<4xf32> = uniform(0.0, 1.0e-03)
// CHECK-LABEL: nn.parameter @with_attr : tensor<4xf32> = zeros {tandem.note = "kept"}
nn.parameter @with_attr : tensor<4xf32> = zeros {tandem.note = "kept"}

// CHECK-LABEL: func.func @init_attrs(
// CHECK-SAME: ) attributes {a = #nn.init<zeros>, b = #nn.init<ones>, c = #nn.init<normal(0.0123456789)>, d = #nn.init<uniform(-2.500000e+00, 2.500000e+00)>}
// CHECK-NEXT: return
func.func @init_attrs() attributes {a = #nn.init<zeros>, b = #nn.init<ones>, c = #nn.init<normal(0.0123456789)>, d = #nn.init<uniform(-2.5, 2.5)>} {
  return
}

// CHECK-LABEL: func.func @param_reads(
// CHECK-SAME: ) -> (tensor<32xf32>, tensor<4x4xf64>, tensor<8x8xf16>, tensor<2x3x4xbf16>, tensor<16xf8E4M3FN>, tensor<16xf8E5M2>, tensor<f32>)
// CHECK-NEXT: %[[A:.*]] = nn.param @zeros_f32 : tensor<32xf32>
// CHECK-NEXT: %[[B:.*]] = nn.param @ones_f64 : tensor<4x4xf64>
// CHECK-NEXT: %[[C:.*]] = nn.param @normal_f16 : tensor<8x8xf16>
// CHECK-NEXT: %[[D:.*]] = nn.param @uniform_bf16 : tensor<2x3x4xbf16>
// CHECK-NEXT: %[[E:.*]] = nn.param @zeros_f8e4m3 : tensor<16xf8E4M3FN>
// CHECK-NEXT: %[[F:.*]] = nn.param @ones_f8e5m2 : tensor<16xf8E5M2>
// CHECK-NEXT: %[[G:.*]] = nn.param @scalar : tensor<f32>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]], %[[F]], %[[G]] : tensor<32xf32>, tensor<4x4xf64>, tensor<8x8xf16>, tensor<2x3x4xbf16>, tensor<16xf8E4M3FN>, tensor<16xf8E5M2>, tensor<f32>
func.func @param_reads() -> (tensor<32xf32>, tensor<4x4xf64>, tensor<8x8xf16>, tensor<2x3x4xbf16>, tensor<16xf8E4M3FN>, tensor<16xf8E5M2>, tensor<f32>) {
  %a = nn.param @zeros_f32 : tensor<32xf32>
  %b = nn.param @ones_f64 : tensor<4x4xf64>
  %c = nn.param @normal_f16 : tensor<8x8xf16>
  %d = nn.param @uniform_bf16 : tensor<2x3x4xbf16>
  %e = nn.param @zeros_f8e4m3 : tensor<16xf8E4M3FN>
  %f = nn.param @ones_f8e5m2 : tensor<16xf8E5M2>
  %g = nn.param @scalar : tensor<f32>
  return %a, %b, %c, %d, %e, %f, %g : tensor<32xf32>, tensor<4x4xf64>, tensor<8x8xf16>, tensor<2x3x4xbf16>, tensor<16xf8E4M3FN>, tensor<16xf8E5M2>, tensor<f32>
}

// CHECK-LABEL: func.func @param_dotted_name_read_twice(
// CHECK-SAME: ) -> tensor<32x96xf32>
// CHECK-NEXT: %[[A:.*]] = nn.param @h.0.attn.c_attn.weight : tensor<32x96xf32>
// CHECK-NEXT: %[[B:.*]] = nn.param @h.0.attn.c_attn.weight : tensor<32x96xf32>
// CHECK-NEXT: %[[C:.*]] = nn.add %[[A]], %[[B]] : tensor<32x96xf32>, tensor<32x96xf32> -> tensor<32x96xf32>
// CHECK-NEXT: return %[[C]] : tensor<32x96xf32>
func.func @param_dotted_name_read_twice() -> tensor<32x96xf32> {
  %a = nn.param @h.0.attn.c_attn.weight : tensor<32x96xf32>
  %b = nn.param @h.0.attn.c_attn.weight : tensor<32x96xf32>
  %c = nn.add %a, %b : tensor<32x96xf32>, tensor<32x96xf32> -> tensor<32x96xf32>
  return %c : tensor<32x96xf32>
}
