//===- ProgramPrelude.h - entry points as programs of generated CUDA code -===//
//
// Not a header of the compiler: pasted into every generated translation
// unit after the kernel, GEMM and attention preludes (PreludeSource.h.in).
// An entry point is data: an array of 64-bit words (its program) that
// tk_run walks, launching kernels, calling GEMMs and copying buffers in
// the program's order. Code per entry point would grow with the model's
// depth, and compiling it was most of nvcc's time on deep models
// (docs/cuda-backend.md, "Entry points as programs"); constant arrays
// compile in no time, and the code that reads them is one launcher per
// distinct kernel plus the steps below.
//
// A program is a sequence of steps, each an opcode and its operands:
//   TK_OP_LAUNCH kernel grid block operand...   (the kernel's parameters,
//                                                 read by their types)
//   TK_OP_GEMM shape epilogue A B C bias residual aux
//   TK_OP_COPY dst src bytes
//   TK_OP_ZERO dst bytes
//   TK_OP_GEMM_ACCUMULATE shape A B C           (a plain GEMM into a result
//                                                 the fragment accumulates:
//                                                 C += A·B, beta = 1, when
//                                                 the call accumulates)
//   TK_OP_ACCUMULATE add copy grid block operand...   (sums += values by
//                                                 kernel `add` when the call
//                                                 accumulates, else sums =
//                                                 values by kernel `copy`:
//                                                 the same parameters, a
//                                                 table of tensors)
//   TK_OP_END
// A buffer operand is a reference: its space in the top byte (an argument,
// a result or the scratch) and its index or byte offset below.
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <tuple>

#define TK_NONE ((int64_t)0)
#define TK_ARG(index) ((int64_t)1 << 56 | (int64_t)(index))
#define TK_RESULT(index) ((int64_t)2 << 56 | (int64_t)(index))
#define TK_SCRATCH(offset) ((int64_t)3 << 56 | (int64_t)(offset))
// Kernel parameters that are not buffers: an attention shape (an index into
// the unit's shapes), an index check (the status word, the check, the run)
// and a table of tensors (its size, then its blocks'
// first indices, then per tensor its steps and its buffers).
#define TK_ATTENTION_SHAPE(index) ((int64_t)(index))
#define TK_TABLE(tensors) ((int64_t)(tensors))
// An index check: its entry in the library's tandem_index_checks.
#define TK_CHECK(index) ((int64_t)(index))
// Whether the call adds to its summed results (a tk_sum: the context's
// TANDEM_FRAGMENT_ACCUMULATE flag, read when the step launches).
#define TK_SUM ((int64_t)0)
// A GEMM's epilogue: none, + bias (and a residual), + bias then GELU,
// times GELU's derivative at aux (GemmPrelude.h).
#define TK_EPILOGUE_NONE ((int64_t)-1)
#define TK_EPILOGUE_BIAS ((int64_t)TK_GEMM_BIAS)
#define TK_EPILOGUE_GELU ((int64_t)TK_GEMM_GELU)
#define TK_EPILOGUE_DGELU ((int64_t)TK_GEMM_DGELU)

namespace {

enum : int64_t {
  TK_OP_END = 0,
  TK_OP_LAUNCH = 1,
  TK_OP_GEMM = 2,
  TK_OP_COPY = 3,
  TK_OP_ZERO = 4,
  TK_OP_GEMM_ACCUMULATE = 5,
  TK_OP_ACCUMULATE = 6,
};

// What a step reads its buffers and constants from.
struct tk_env {
  const tandem_fragment_context *context;
  const void *const *args;
  void *const *results;
  char *scratch;
  const tk_attention_shape *attentionShapes;
};

void *tk_pointer(const tk_env &e, int64_t ref) {
  int64_t at = ref & (((int64_t)1 << 56) - 1);
  switch (ref >> 56) {
  case 1:
    return const_cast<void *>(e.args[at]);
  case 2:
    return e.results[at];
  case 3:
    return e.scratch + at;
  default:
    return nullptr;
  }
}

// A kernel parameter of type T, read from the program.
template <typename T> struct tk_operand;
template <typename T> struct tk_operand<T *> {
  static T *read(const tk_env &e, const int64_t *&pc) {
    return (T *)tk_pointer(e, *pc++);
  }
};
template <> struct tk_operand<tk_attention_shape> {
  static tk_attention_shape read(const tk_env &e, const int64_t *&pc) {
    return e.attentionShapes[*pc++];
  }
};
template <> struct tk_operand<tk_check> {
  static tk_check read(const tk_env &e, const int64_t *&pc) {
    return tk_check{e.context->status, (uint32_t)*pc++, e.context->call};
  }
};
template <> struct tk_operand<tk_sum> {
  static tk_sum read(const tk_env &e, const int64_t *&pc) {
    ++pc; // TK_SUM
    return tk_sum{(e.context->flags & TANDEM_FRAGMENT_ACCUMULATE) ? 1 : 0};
  }
};
template <int P, int K> struct tk_operand<tk_tensors<P, K>> {
  static tk_tensors<P, K> read(const tk_env &e, const int64_t *&pc) {
    tk_tensors<P, K> m{};
    m.n = (int32_t)*pc++;
    for (int32_t t = 0; t <= m.n; ++t)
      m.first[t] = *pc++;
    for (int32_t t = 0; t < m.n; ++t) {
      m.steps[t] = *pc++;
      for (int p = 0; p < P; ++p)
        m.ptr[t][p] = tk_pointer(e, *pc++);
    }
    return m;
  }
};

// Launches `kernel` with the grid, the block and the parameters the
// program holds next. The parameters are read in order into a tuple (a
// braced list is evaluated left to right).
#ifdef __CUDACC__
template <typename... P>
int tk_launch_kernel(void (*kernel)(P...), const tk_env &e,
                     const int64_t *&pc) {
  unsigned grid = (unsigned)pc[0], block = (unsigned)pc[1];
  pc += 2;
  std::tuple<P...> values{tk_operand<P>::read(e, pc)...};
  return std::apply(
      [&](P &...v) {
        void *params[] = {(void *)&v...};
        cudaError_t status =
            cudaLaunchKernel((const void *)kernel, dim3(grid), dim3(block),
                             params, 0, (cudaStream_t)e.context->stream);
        if (status == cudaSuccess)
          return 0;
        // The fragment's status says only "CUDA failed": the why goes to
        // stderr, and cudaGetLastError clears it so later calls are not
        // blamed for it.
        (void)cudaGetLastError();
        fprintf(stderr,
                "tandem: kernel launch (grid %u, block %u) failed: %s\n", grid,
                block, cudaGetErrorString(status));
        return 2;
      },
      values);
}
#else
template <typename... P>
int tk_launch_kernel(void (*kernel)(const tk_launch &, P...), const tk_env &e,
                     const int64_t *&pc) {
  int64_t grid = pc[0], block = pc[1];
  pc += 2;
  std::tuple<P...> values{tk_operand<P>::read(e, pc)...};
  // The blocks one after another (KernelPrelude.h).
  for (int64_t b = 0; b < grid; ++b)
    std::apply([&](P &...v) { kernel(tk_launch{b, block, grid}, v...); },
               values);
  return 0;
}
#endif

// One launcher per kernel of the unit, indexed by the program.
typedef int (*tk_launcher)(const tk_env &, const int64_t *&);
template <auto Kernel> int tk_launcher_of(const tk_env &e, const int64_t *&pc) {
  return tk_launch_kernel(Kernel, e, pc);
}
#define TK_LAUNCHER(kernel) (&tk_launcher_of<kernel>)

// The unit's tables the programs index.
struct tk_unit {
  const tk_launcher *launchers;
  const tk_gemm_shape *gemmShapes;
  const tk_attention_shape *attentionShapes;
};

int tk_copy(const tk_env &e, void *dst, const void *src, int64_t bytes) {
#ifdef __CUDACC__
  return cudaMemcpyAsync(dst, src, (size_t)bytes, cudaMemcpyDeviceToDevice,
                         (cudaStream_t)e.context->stream) == cudaSuccess
             ? 0
             : 2;
#else
  (void)e;
  std::memcpy(dst, src, (size_t)bytes);
  return 0;
#endif
}

int tk_zero(const tk_env &e, void *dst, int64_t bytes) {
#ifdef __CUDACC__
  return cudaMemsetAsync(dst, 0, (size_t)bytes,
                         (cudaStream_t)e.context->stream) == cudaSuccess
             ? 0
             : 2;
#else
  (void)e;
  std::memset(dst, 0, (size_t)bytes);
  return 0;
#endif
}

// Runs `program`: the fragment ABI's status (FragmentABI.h), the first
// step's that fails.
int tk_run(const tk_unit &unit, const int64_t *program,
           const tandem_fragment_context *context, const void *const *args,
           void *const *results, void *scratch) {
  const tk_env e = {context, args, results, (char *)scratch,
                    unit.attentionShapes};
  const int64_t *pc = program;
  for (;;) {
    int status = 0;
    switch (*pc++) {
    case TK_OP_END:
#ifdef __CUDACC__
    {
      // An error of the fragment's asynchronous work so far (its launches'
      // own were checked one by one), cleared once reported.
      cudaError_t last = cudaGetLastError();
      if (last == cudaSuccess)
        return 0;
      fprintf(stderr, "tandem: the fragment's CUDA work failed: %s\n",
              cudaGetErrorString(last));
      return 2;
    }
#else
      return 0;
#endif
    case TK_OP_LAUNCH: {
      int64_t kernel = *pc++;
      status = unit.launchers[kernel](e, pc);
      break;
    }
    case TK_OP_GEMM: {
      const tk_gemm_shape &shape = unit.gemmShapes[pc[0]];
      int64_t epilogue = pc[1];
      const void *a = tk_pointer(e, pc[2]), *b = tk_pointer(e, pc[3]);
      void *c = tk_pointer(e, pc[4]);
      const tk_gemm_epilogue p = {(int32_t)epilogue, tk_pointer(e, pc[5]),
                                  tk_pointer(e, pc[6]), tk_pointer(e, pc[7])};
      pc += 8;
      status = tk_gemm(context, shape, a, b, c,
                       epilogue == TK_EPILOGUE_NONE ? nullptr : &p);
      break;
    }
    case TK_OP_COPY:
      status = tk_copy(e, tk_pointer(e, pc[0]), tk_pointer(e, pc[1]), pc[2]);
      pc += 3;
      break;
    case TK_OP_ZERO:
      status = tk_zero(e, tk_pointer(e, pc[0]), pc[1]);
      pc += 2;
      break;
    case TK_OP_GEMM_ACCUMULATE: {
      // The microbatch's product added to the sum so far (cuBLASLt's C is
      // D, beta = 1), or the first microbatch's written over it.
      tk_gemm_shape shape = unit.gemmShapes[pc[0]];
      if (context->flags & TANDEM_FRAGMENT_ACCUMULATE)
        shape.beta = 1.0f;
      status = tk_gemm(context, shape, tk_pointer(e, pc[1]),
                       tk_pointer(e, pc[2]), tk_pointer(e, pc[3]));
      pc += 4;
      break;
    }
    case TK_OP_ACCUMULATE: {
      int64_t add = pc[0], copy = pc[1];
      pc += 2;
      bool accumulates = context->flags & TANDEM_FRAGMENT_ACCUMULATE;
      status = unit.launchers[accumulates ? add : copy](e, pc);
      break;
    }
    default: // not a program this prelude wrote
      return 2;
    }
    if (status)
      return status;
  }
}

} // namespace
