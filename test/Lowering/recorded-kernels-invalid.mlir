// RUN: tandem-translate %s --tandem-to-source -split-input-file -verify-diagnostics -o %t.cpp
//
// Recorded kernels are checked before an emitter prints them: a recorded
// plan that kernel formation could not have made is an error at the op,
// never wrong code (docs/targets.md, "Kernels").

func.func @not_fusible(%x: tensor<4x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'nn.transpose' is neither elementwise nor a reduction: it cannot be a kernel member}}
  %0 = nn.transpose %x, [1, 0] {nn.kernel = 0 : i64} : tensor<4x8xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

func.func @bad_id(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nn.kernel' must be a kernel number in [0, 2)}}
  %0 = nn.exp %x {nn.kernel = -1 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @huge_id(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nn.kernel' must be a kernel number in [0, 2)}}
  %0 = nn.exp %x {nn.kernel = 99999999999 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @shapes(%x: tensor<4xf32>, %y: tensor<8xf32>) -> (tensor<4xf32>, tensor<8xf32>) {
  %0 = nn.exp %x {nn.kernel = 0 : i64} : tensor<4xf32>
  // expected-error @+1 {{kernel 0 iterates over a shape its member's result does not have}}
  %1 = nn.exp %y {nn.kernel = 0 : i64} : tensor<8xf32>
  return %0, %1 : tensor<4xf32>, tensor<8xf32>
}

// -----

func.func @read_early(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = nn.exp %x {nn.kernel = 0 : i64} : tensor<4xf32>
  // expected-error @+1 {{reads a value of kernel 0 before the kernel runs (at its last member)}}
  %1 = nn.softmax %0 {axis = 0 : i64} : tensor<4xf32>
  %2 = nn.add %0, %1 {nn.kernel = 0 : i64} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

func.func @epilogue_reads_prologue(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = nn.exp %x {nn.kernel = 0 : i64} : tensor<4x8xf32>
  %1 = nn.reduce_sum %0 [1] {keepdims, nn.kernel = 0 : i64} : tensor<4x8xf32> -> tensor<4x1xf32>
  // expected-error @+1 {{kernel 0 iterates over a shape its member's result does not have}}
  %2 = nn.add %0, %1 {nn.kernel = 0 : i64} : tensor<4x8xf32>, tensor<4x1xf32> -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// A reduction over a size-1 axis keeps the shape, so only the prologue
// rule stops the epilogue from reading a value of the reduction's loop.
func.func @epilogue_reads_prologue_value(%x: tensor<4x1xf32>) -> tensor<4x1xf32> {
  %0 = nn.exp %x {nn.kernel = 0 : i64} : tensor<4x1xf32>
  %1 = nn.reduce_sum %0 [1] {keepdims, nn.kernel = 0 : i64} : tensor<4x1xf32> -> tensor<4x1xf32>
  // expected-error @+1 {{kernel 0's epilogue reads a prologue value}}
  %2 = nn.add %0, %1 {nn.kernel = 0 : i64} : tensor<4x1xf32>, tensor<4x1xf32> -> tensor<4x1xf32>
  return %2 : tensor<4x1xf32>
}

// -----

func.func @two_reductions(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = nn.reduce_sum %x [1] {nn.kernel = 0 : i64} : tensor<4x8xf32> -> tensor<4xf32>
  // expected-error @+1 {{kernel 0 has a second reduction}}
  %1 = nn.reduce_max %x [1] {nn.kernel = 0 : i64} : tensor<4x8xf32> -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @gemm_not_matmul(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nn.kernel_gemm' belongs on one nn.matmul per kernel}}
  %0 = nn.exp %x {nn.kernel_gemm = 0 : i64} : tensor<4xf32>
  %1 = nn.neg %0 {nn.kernel = 0 : i64} : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

func.func @gemm_read_twice(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  // expected-error @+1 {{kernel 0 cannot be this matmul's epilogue: it must be the product's only reader, of its shape, without a reduction}}
  %0 = nn.matmul %x, %w {nn.kernel_gemm = 0 : i64} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %1 = nn.gelu %0 {nn.kernel = 0 : i64} : tensor<4x16xf32>
  return %0, %1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// The epilogue rewrites the product's buffer in place: one reader op only.
func.func @gemm_two_readers(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{kernel 0 cannot be this matmul's epilogue}}
  %0 = nn.matmul %x, %w {nn.kernel_gemm = 0 : i64} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %1 = nn.gelu %0 {nn.kernel = 0 : i64} : tensor<4x16xf32>
  %2 = nn.add %0, %1 {nn.kernel = 0 : i64} : tensor<4x16xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  return %2 : tensor<4x16xf32>
}

// -----

nn.parameter @w : tensor<8xf32> = zeros
mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  // An update whose argument another kernel also reads cannot be written
  // over it.
  // expected-error @+1 {{'nn.in_place': result 0 cannot be written over argument 1}}
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer
      (%g: tensor<8xf32> {mpmd.input = 0 : i64}, %w0: tensor<8xf32> {mpmd.param = @w})
      -> (tensor<8xf32> {mpmd.update = @w}, tensor<8xf32>) attributes {nn.in_place = array<i64: 0, 1>} {
    %new = nn.sub %w0, %g {nn.kernel = 0 : i64} : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
    %e = nn.exp %w0 {nn.kernel = 1 : i64} : tensor<8xf32>
    mpmd.yield %new, %e : tensor<8xf32>, tensor<8xf32>
  }
}

// -----

nn.parameter @w : tensor<8xf32> = zeros
mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  // expected-error @+1 {{'nn.in_place' must hold (result, argument) pairs}}
  mpmd.fragment @opt stage 0 chunk 0 kind optimizer
      (%g: tensor<8xf32> {mpmd.input = 0 : i64}, %w0: tensor<8xf32> {mpmd.param = @w})
      -> (tensor<8xf32> {mpmd.update = @w}) attributes {nn.in_place = array<i64: 0>} {
    %new = nn.sub %w0, %g {nn.kernel = 0 : i64} : tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
    mpmd.yield %new : tensor<8xf32>
  }
}

// -----

func.func @row_on_elementwise(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nn.kernel_row' belongs on one row op (neither elementwise nor a reduction) per kernel}}
  %0 = nn.exp %x {nn.kernel_row = 0 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @row_without_kernel(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'nn.kernel_row' names kernel 1, which has no members}}
  %y = nn.softmax %x {axis = 1 : i64, nn.kernel_row = 1 : i64} : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// The kernel would run at the row op, before %late exists.
func.func @row_reads_later(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{kernel 2 cannot be this op's row epilogue: it must be the only reader of its first result, of its shape, without a reduction or GEMM, reading nothing defined after the op}}
  %y = nn.softmax %x {axis = 1 : i64, nn.kernel_row = 2 : i64} : tensor<2x4xf32>
  %late = nn.exp %x {nn.kernel = 1 : i64} : tensor<2x4xf32>
  %s = nn.add %late, %y {nn.kernel = 2 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

// A valid row epilogue: the CPU emitter has none.
func.func @row_on_cpu(%x: tensor<2x4xf32>, %r: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{the CPU emitter has no row kernels to run a row epilogue ('nn.kernel_row'): form the kernels for the cpu target}}
  %y = nn.softmax %x {axis = 1 : i64, nn.kernel_row = 1 : i64} : tensor<2x4xf32>
  %s = nn.add %r, %y {nn.kernel = 1 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

func.func @row_input_on_elementwise(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nn.kernel_row_input' belongs on one row op (neither elementwise nor a reduction) per kernel}}
  %0 = nn.exp %x {nn.kernel_row_input = 0 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @row_input_without_kernel(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'nn.kernel_row_input' names kernel 1, which has no members}}
  %y = nn.softmax %x {axis = 1 : i64, nn.kernel_row_input = 1 : i64} : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// The sum is read before the row op, which computes it: the kernel runs
// at the row op.
func.func @row_input_read_before(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %x = nn.add %a, %b {nn.kernel = 0 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  // expected-error @+1 {{reads a value of kernel 0 before the kernel runs (at the row op whose rows it computes)}}
  %e = nn.exp %x {nn.kernel = 1 : i64} : tensor<2x4xf32>
  %y = nn.softmax %x {axis = 1 : i64, nn.kernel_row_input = 0 : i64} : tensor<2x4xf32>
  return %y, %e : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// A kernel that does not end with the row op's first operand.
func.func @row_input_not_the_rows(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %x = nn.add %a, %b {nn.kernel = 0 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  // expected-error @+1 {{kernel 0 cannot compute this op's rows}}
  %y = nn.softmax %a {axis = 1 : i64, nn.kernel_row_input = 0 : i64} : tensor<2x4xf32>
  %s = nn.add %x, %y : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

// A valid row input: the CPU emitter has no row kernels.
func.func @row_input_on_cpu(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %x = nn.add %a, %b {nn.kernel = 0 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  // expected-error @+1 {{the CPU emitter has no row kernels to compute a row op's rows ('nn.kernel_row_input'): form the kernels for the cpu target}}
  %y = nn.softmax %x {axis = 1 : i64, nn.kernel_row_input = 0 : i64} : tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// A row epilogue reading a row input's sum: the epilogue runs at its row
// op (%y), before the norm that computes the sum (%n), however late its
// add stands.
func.func @row_input_read_by_an_earlier_row_kernel(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>, %c: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %x = nn.add %a, %b {nn.kernel = 0 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %y = nn.softmax %c {axis = 1 : i64, nn.kernel_row = 1 : i64} : tensor<2x4xf32>
  // expected-error @+1 {{kernel 0 cannot compute this op's rows}}
  %n = nn.softmax %x {axis = 1 : i64, nn.kernel_row_input = 0 : i64} : tensor<2x4xf32>
  %s = nn.add %y, %x {nn.kernel = 1 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %n, %s : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// A row epilogue reading a value whose kernel runs after the row op (at
// its last member, %z), though the value's own op stands before it.
func.func @row_reads_a_later_kernel(%a: tensor<2x4xf32>, %c: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %x = nn.exp %a {nn.kernel = 0 : i64} : tensor<2x4xf32>
  // expected-error @+1 {{kernel 1 cannot be this op's row epilogue}}
  %y = nn.softmax %c {axis = 1 : i64, nn.kernel_row = 1 : i64} : tensor<2x4xf32>
  %z = nn.neg %x {nn.kernel = 0 : i64} : tensor<2x4xf32>
  %s = nn.add %y, %x {nn.kernel = 1 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  return %s, %z : tensor<2x4xf32>, tensor<2x4xf32>
}
