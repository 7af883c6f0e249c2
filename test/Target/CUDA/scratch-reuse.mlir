// Temporaries share the fragment's scratch when no step of the program
// uses both (lowering::ScratchPlan, as the CPU target's): the program runs
// its steps in order on one stream, and a step's live range includes every
// step naming the value, so what a step reads never shares bytes with what
// it writes. Offsets are multiples of 256.
//
// RUN: tandem-translate %s --tandem-to-source --target cuda -o %t.cu
// RUN: FileCheck %s --input-file=%t.cu
// RUN: c++ -x c++ -std=c++17 -fsyntax-only -Wall -Werror %t.cu

// A chain: %c takes %a's bytes, since %a's last reader ran before %c is
// written; %b, read by %c's GEMM, does not.
// CHECK-LABEL: extern "C" uint64_t tandem_chain_scratch_bytes(void) { return 2048; }
// CHECK-NEXT: static const int64_t tandem_chain_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_NONE, TK_ARG(0), TK_ARG(1), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_NONE, TK_SCRATCH(0), TK_ARG(1), TK_SCRATCH(1024),
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_NONE, TK_SCRATCH(1024), TK_ARG(1), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_NONE, TK_SCRATCH(0), TK_ARG(1), TK_RESULT(0),
func.func @chain(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %a = nn.matmul %x, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %b = nn.matmul %a, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %c = nn.matmul %b, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %d = nn.matmul %c, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}

// A view keeps its source alive until the view's last reader: %a (read
// through %r2 by the last kernel) shares with nothing.
// CHECK-LABEL: extern "C" uint64_t tandem_view_scratch_bytes(void) { return 3072; }
// CHECK-NEXT: static const int64_t tandem_view_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_NONE, TK_ARG(0), TK_ARG(1), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_NONE, TK_ARG(0), TK_ARG(1), TK_SCRATCH(1024),
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_NONE, TK_SCRATCH(1024), TK_ARG(1), TK_SCRATCH(2048),
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 1, 256, TK_RESULT(0), TK_SCRATCH(0), TK_SCRATCH(2048),
func.func @view(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %a = nn.matmul %x, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %r = nn.reshape %a : tensor<16x16xf32> to tensor<256xf32>
  %b = nn.matmul %x, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %c = nn.matmul %b, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %r2 = nn.reshape %r : tensor<256xf32> to tensor<16x16xf32>
  %d = nn.add %r2, %c : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %d : tensor<16x16xf32>
}

// Kernels waiting for a multi-tensor launch: %a's last reader is the
// table's launch, which also writes %e1 and %e2, so the three are apart;
// %p, written after, takes %a's bytes.
// CHECK-LABEL: extern "C" uint64_t tandem_pending_scratch_bytes(void) { return 3072; }
// CHECK-NEXT: static const int64_t tandem_pending_program[] = {
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_NONE, TK_ARG(0), TK_ARG(1), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_LAUNCH, tk_k{{[0-9a-f]+}}_id, 2, 256, TK_TABLE(2), 0, 1, 2, 64, TK_SCRATCH(1024), TK_SCRATCH(0), 64, TK_SCRATCH(2048), TK_ARG(2),
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_NONE, TK_SCRATCH(1024), TK_SCRATCH(2048), TK_SCRATCH(0),
// CHECK-NEXT: TK_OP_GEMM, 0, TK_EPILOGUE_NONE, TK_SCRATCH(0), TK_ARG(1), TK_RESULT(0),
func.func @pending(%x: tensor<16x16xf32>, %w: tensor<16x16xf32>, %y: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %a = nn.matmul %x, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %e1 = nn.exp %a : tensor<16x16xf32>
  %e2 = nn.exp %y : tensor<16x16xf32>
  %p = nn.matmul %e1, %e2 : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  %q = nn.matmul %p, %w : tensor<16x16xf32>, tensor<16x16xf32> -> tensor<16x16xf32>
  return %q : tensor<16x16xf32>
}
