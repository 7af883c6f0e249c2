// RUN: tandem-translate %s --tandem-to-source | FileCheck %s

// Scratch is shared between values whose live ranges (from the kernel that
// writes them to the last kernel that reads them, inclusive) do not meet.

// A chain: %c takes %a's bytes, since %a's last reader ran before %c is
// written; %b, read by %c's matmul, does not.
// CHECK-LABEL: // chain: {{.*}} 2048 scratch bytes
// CHECK: float *[[A:v[0-9]+]] = (float *)(tk_scratch + 0);
// CHECK-NEXT: float *[[B:v[0-9]+]] = (float *)(tk_scratch + 1024);
// CHECK-NEXT: float *[[C:v[0-9]+]] = (float *)(tk_scratch + 0);
// CHECK: cblas_sgemm({{.*}}, [[A]], 16, {{.*}}, [[B]], 16);
// CHECK-NEXT: // nn.matmul
// CHECK-NEXT: cblas_sgemm({{.*}}, [[B]], 16, {{.*}}, [[C]], 16);
func.func @chain(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %a = nn.matmul %x, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %b = nn.matmul %a, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %c = nn.matmul %b, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %d = nn.matmul %c, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}

// A view keeps its source alive until the view's last reader.
// CHECK-LABEL: // view: {{.*}} 3072 scratch bytes
// CHECK: float *[[A:v[0-9]+]] = (float *)(tk_scratch + 0);
// CHECK-NEXT: float *{{v[0-9]+}} = (float *)(tk_scratch + 1024);
// CHECK-NEXT: float *{{v[0-9]+}} = (float *)(tk_scratch + 2048);
func.func @view(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %a = nn.matmul %x, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %r = nn.reshape %a : tensor<16x16xf32> to tensor<16x16xf32>
  %b = nn.matmul %a, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %c = nn.matmul %b, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %d = nn.matmul %c, %r : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}

// A value returned twice is copied into its result slots at the end: it
// lives until then, so nothing after it takes its bytes.
// CHECK-LABEL: // twice: {{.*}} 2048 scratch bytes
// CHECK: float *[[A:v[0-9]+]] = (float *)(tk_scratch + 0);
// CHECK-NEXT: float *{{v[0-9]+}} = (float *)(tk_scratch + 1024);
// CHECK: std::memcpy(results[0], [[A]], 1024);
// CHECK-NEXT: std::memcpy(results[1], [[A]], 1024);
func.func @twice(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>) {
  %a = nn.matmul %x, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %b = nn.matmul %a, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %c = nn.matmul %b, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %a, %a, %c : tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>
}

// A GEMM writes its epilogue's output at the matmul, before the group
// runs: %t and %u, written in between, keep their own bytes.
// CHECK-LABEL: // epilogue: {{.*}} 3072 scratch bytes
// CHECK: float *[[T:v[0-9]+]] = (float *)(tk_scratch + 0);
// CHECK-NEXT: float *[[U:v[0-9]+]] = (float *)(tk_scratch + 1024);
// CHECK-NEXT: float *[[A:v[0-9]+]] = (float *)(tk_scratch + 2048);
// CHECK: cblas_sgemm({{.*}}, 0.0f, [[A]], 16);
// CHECK-NEXT: // nn.matmul
// CHECK-NEXT: cblas_sgemm({{.*}}, 0.0f, [[T]], 16);
// CHECK-NEXT: // nn.matmul
// CHECK-NEXT: cblas_sgemm({{.*}}, 0.0f, [[U]], 16);
// CHECK-NEXT: // gemm epilogue of 1 ops: add
// CHECK-NEXT: tk_fused_{{[0-9a-f]+}}([[A]], [[U]]);
func.func @epilogue(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %h = nn.matmul %x, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %t = nn.matmul %x, %x : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %u = nn.matmul %t, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %a = nn.add %h, %u : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %d = nn.matmul %a, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}
