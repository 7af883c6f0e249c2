// RUN: tandem-opt %s --tandem-form-kernels | FileCheck %s
// RUN: tandem-opt %s --tandem-form-kernels="fuse-reductions=false fuse-gemm-epilogues=false merge-groups=false" | FileCheck %s --check-prefix=UNFUSED
// RUN: tandem-opt %s --tandem-form-kernels --tandem-form-kernels | FileCheck %s
//
// Kernel formation decides what fuses, in IR (docs/targets.md, "Kernels"):
// `nn.kernel = K` on every member of kernel K, `nn.kernel_gemm = K` on the
// matmul K is the epilogue of, `nn.in_place` on a fragment. Running it twice
// records the same.

// An elementwise chain of one shape is one kernel; a value read from outside
// (the reduce_sum) seals it, so the op after the reduction starts another.
// CHECK-LABEL: func.func @chain
// CHECK:      nn.exp %{{.*}} {nn.kernel = 0 : i64}
// CHECK-NEXT: nn.mul %{{.*}} {nn.kernel = 0 : i64}
// CHECK-NEXT: nn.neg %{{.*}} {nn.kernel = 0 : i64}
// UNFUSED-LABEL: func.func @chain
// UNFUSED:      nn.exp %{{.*}} {nn.kernel = 0 : i64}
// UNFUSED-NEXT: nn.mul %{{.*}} {nn.kernel = 0 : i64}
// UNFUSED-NEXT: nn.neg %{{.*}} {nn.kernel = 0 : i64}
func.func @chain(%x: tensor<8x32xf32>) -> tensor<8x32xf32> {
  %0 = nn.exp %x : tensor<8x32xf32>
  %1 = nn.mul %0, %x : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  %2 = nn.neg %1 : tensor<8x32xf32>
  return %2 : tensor<8x32xf32>
}

// A reduction takes its input's kernel as its prologue and its result's
// elementwise consumers as its epilogue; without fuse-reductions each is a
// kernel of its own.
// CHECK-LABEL: func.func @row
// CHECK:      nn.exp %{{.*}} {nn.kernel = 0 : i64}
// CHECK-NEXT: nn.mul %{{.*}} {nn.kernel = 0 : i64}
// CHECK-NEXT: nn.reduce_sum %{{.*}} [1] {nn.kernel = 0 : i64}
// CHECK-NEXT: nn.log %{{.*}} {nn.kernel = 0 : i64}
// CHECK-NEXT: nn.add %{{.*}} {nn.kernel = 0 : i64}
// UNFUSED-LABEL: func.func @row
// UNFUSED:      nn.exp %{{.*}} {nn.kernel = 0 : i64}
// UNFUSED-NEXT: nn.mul %{{.*}} {nn.kernel = 0 : i64}
// UNFUSED-NEXT: nn.reduce_sum %{{.*}} [1] {nn.kernel = 1 : i64}
// UNFUSED-NEXT: nn.log %{{.*}} {nn.kernel = 2 : i64}
// UNFUSED-NEXT: nn.add %{{.*}} {nn.kernel = 2 : i64}
func.func @row(%x: tensor<8x32xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = nn.exp %x : tensor<8x32xf32>
  %1 = nn.mul %0, %x : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  %2 = nn.reduce_sum %1 [1] : tensor<8x32xf32> -> tensor<8xf32>
  %3 = nn.log %2 : tensor<8xf32>
  %4 = nn.add %3, %b : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %4 : tensor<8xf32>
}

// A prologue value read after the reduction seals the kernel: the later
// op cannot join (it would read a value that exists only inside the
// reduction's loop) and starts a kernel of its own.
// CHECK-LABEL: func.func @prologue_read_later
// CHECK:      nn.exp %{{.*}} {nn.kernel = 0 : i64}
// CHECK-NEXT: nn.reduce_max %{{.*}} [1] {nn.kernel = 0 : i64}
// CHECK-NEXT: nn.neg %{{.*}} {nn.kernel = 1 : i64}
func.func @prologue_read_later(%x: tensor<8x32xf32>) -> (tensor<8xf32>, tensor<8x32xf32>) {
  %0 = nn.exp %x : tensor<8x32xf32>
  %1 = nn.reduce_max %0 [1] : tensor<8x32xf32> -> tensor<8xf32>
  %2 = nn.neg %0 : tensor<8x32xf32>
  return %1, %2 : tensor<8xf32>, tensor<8x32xf32>
}

// The only reader of a matmul becomes its epilogue (bias and GELU run over
// the GEMM's output); a matmul read twice keeps its product.
// CHECK-LABEL: func.func @gemm
// CHECK:      nn.matmul %{{.*}} {nn.kernel_gemm = 0 : i64}
// CHECK-NEXT: nn.add %{{.*}} {nn.kernel = 0 : i64}
// CHECK-NEXT: nn.gelu %{{.*}} {nn.kernel = 0 : i64}
// CHECK-NEXT: nn.matmul %{{.*}}, %{{.*}} : tensor
// CHECK-NEXT: nn.exp %{{.*}} {nn.kernel = 1 : i64}
// UNFUSED-LABEL: func.func @gemm
// UNFUSED:      nn.matmul %{{.*}}, %{{.*}} : tensor
// UNFUSED-NEXT: nn.add %{{.*}} {nn.kernel = 0 : i64}
func.func @gemm(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %0 = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %1 = nn.add %0, %b : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %2 = nn.gelu %1 : tensor<4x16xf32>
  %3 = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %4 = nn.exp %3 : tensor<4x16xf32>
  return %2, %3, %4 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// An op reading two unsealed chains of its shape unites them (merge-groups):
// one kernel instead of three.
// CHECK-LABEL: func.func @merge
// CHECK:      nn.mul %{{.*}} {nn.kernel = 0 : i64}
// CHECK-NEXT: nn.exp %{{.*}} {nn.kernel = 0 : i64}
// CHECK-NEXT: nn.add %{{.*}} {nn.kernel = 0 : i64}
// UNFUSED-LABEL: func.func @merge
// UNFUSED:      nn.mul %{{.*}} {nn.kernel = 0 : i64}
// UNFUSED-NEXT: nn.exp %{{.*}} {nn.kernel = 1 : i64}
// UNFUSED-NEXT: nn.add %{{.*}} {nn.kernel = 0 : i64}
func.func @merge(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %0 = nn.mul %a, %a : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  %1 = nn.exp %b : tensor<64xf32>
  %2 = nn.add %0, %1 : tensor<64xf32>, tensor<64xf32> -> tensor<64xf32>
  return %2 : tensor<64xf32>
}

// Ops that do not fuse (nn.softmax, a layout change) are in no kernel; an
// elementwise op of another shape starts its own.
// CHECK-LABEL: func.func @others
// CHECK:      nn.softmax %{{.*}} {axis = 1 : i64} : tensor
// CHECK-NEXT: nn.exp %{{.*}} {nn.kernel = 0 : i64}
// CHECK-NEXT: nn.transpose %{{[0-9]+}}, [1, 0] : tensor
// CHECK-NEXT: nn.neg %{{.*}} {nn.kernel = 1 : i64}
func.func @others(%x: tensor<8x32xf32>) -> tensor<32x8xf32> {
  %0 = nn.softmax %x {axis = 1 : i64} : tensor<8x32xf32>
  %1 = nn.exp %0 : tensor<8x32xf32>
  %2 = nn.transpose %1, [1, 0] : tensor<8x32xf32> -> tensor<32x8xf32>
  %3 = nn.neg %2 : tensor<32x8xf32>
  return %3 : tensor<32x8xf32>
}

// A fragment's update that one flat elementwise kernel computes, reading the
// parameter's argument only there, may be written over that argument:
// nn.in_place names (result, argument). An update whose argument another
// kernel also reads (the second fragment's exp) is not.
nn.parameter @w : tensor<8x16xf32> = zeros
nn.parameter @v : tensor<8x16xf32> = zeros
// CHECK-LABEL: mpmd.program @p
// CHECK:       mpmd.fragment @opt {{.*}} attributes {nn.in_place = array<i64: 0, 1>}
// CHECK:       nn.mul %{{.*}} {nn.kernel = 0 : i64}
// CHECK-NEXT:  nn.sub %{{.*}} {nn.kernel = 0 : i64}
// CHECK:       mpmd.fragment @shared
// CHECK-NOT:   nn.in_place
// CHECK:       mpmd.yield
mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer
      (%g: tensor<8x16xf32> {mpmd.input = 0 : i64}, %w0: tensor<8x16xf32> {mpmd.param = @w})
      -> (tensor<8x16xf32> {mpmd.update = @w}) {
    %lr = nn.constant dense<0.1> : tensor<f32>
    %step = nn.mul %g, %lr : tensor<8x16xf32>, tensor<f32> -> tensor<8x16xf32>
    %new = nn.sub %w0, %step : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
    mpmd.yield %new : tensor<8x16xf32>
  }
  mpmd.fragment @shared stage 0 chunk 0 kind optimizer
      (%g: tensor<8x16xf32> {mpmd.input = 0 : i64}, %v0: tensor<8x16xf32> {mpmd.param = @v})
      -> (tensor<8x16xf32> {mpmd.update = @v}, tensor<8x16xf32>) {
    %new = nn.sub %v0, %g : tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
    %t = nn.transpose %v0, [0, 1] : tensor<8x16xf32> -> tensor<8x16xf32>
    %e = nn.exp %t : tensor<8x16xf32>
    mpmd.yield %new, %e : tensor<8x16xf32>, tensor<8x16xf32>
  }
}
