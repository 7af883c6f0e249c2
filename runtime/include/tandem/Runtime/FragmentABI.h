/*===- FragmentABI.h - how the runtime calls a fragment (ABI v3) ----------===*
 *
 * The contract between a rank's library and the runtime that calls it
 * (docs/targets.md, "Fragment ABI"): every entry point takes a context
 * holding what a target's code needs from outside (a stream, a BLAS
 * handle, a workspace, a per-rank cache of GEMM plans), so generated code
 * keeps no state of its own and stays reentrant: each rank, thread or
 * stream passes its own context. The library exports the ABI version it
 * was generated for as `tandem_fragment_abi`; the runtime refuses another.
 * Plain C, pasted into every generated translation unit and included by
 * the runtime: one definition.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TANDEM_RUNTIME_FRAGMENTABI_H
#define TANDEM_RUNTIME_FRAGMENTABI_H

#include <stdint.h>

#define TANDEM_FRAGMENT_ABI_VERSION 3

#ifdef __cplusplus
extern "C" {
#endif

/* The call adds the results its library accumulates across microbatches
 * (the manifest's `accumulated_by: fragment` sums: the runtime passes the
 * sum's buffer as the result of every microbatch's run) to what their
 * buffers hold, instead of overwriting them: set for every run but a
 * step's first of that fragment. */
#define TANDEM_FRAGMENT_ACCUMULATE 1u

/* The words of a GEMM plan's key (its shape, types and alignments). */
#define TANDEM_PLAN_KEY_WORDS 16

/* One cached GEMM plan: the key of the call and the algorithm chosen for
 * it (a cublasLtMatmulAlgo_t's 64 bytes). */
typedef struct tandem_plan_entry {
  uint64_t key[TANDEM_PLAN_KEY_WORDS];
  uint64_t algo[8];
  uint64_t valid;
} tandem_plan_entry;

/* A rank's plan cache: `capacity` entries, zeroed by the runtime before the
 * first call, filled by the generated code (open addressing, never
 * evicted: a full cache just stops caching). */
typedef struct tandem_plan_cache {
  uint64_t capacity;
  tandem_plan_entry *entries;
} tandem_plan_cache;

/* Where code reports what its status code cannot say: which check failed,
 * where and with what. A GPU's kernels run after the call has returned,
 * so their failures reach the runtime only here (it reads the word after
 * the step's synchronization); host code fills it before returning the
 * code. The first report wins (the code is claimed first), and a
 * reported word is left alone until the runtime zeroes it. */
typedef struct tandem_fragment_status {
  uint32_t code;    /* 0, or the entry point's status code (1) */
  uint32_t check;   /* the entry of the manifest's index_checks */
  uint64_t call;    /* the context's `call` of the failing run */
  int64_t position; /* the index's element in its tensor */
  int64_t value;    /* the index found there */
} tandem_fragment_status;

typedef struct tandem_fragment_context {
  /* TANDEM_FRAGMENT_ABI_VERSION of the caller. */
  uint32_t abi_version;
  /* TANDEM_FRAGMENT_* bits for this call. */
  uint32_t flags;
  /* The stream the fragment's work is ordered on (a cudaStream_t); null
   * on the host, where a call runs to completion before it returns. */
  void *stream;
  /* The BLAS library handle (a cublasLtHandle_t); null for the host's
   * OpenBLAS, which needs none. */
  void *blas;
  /* Workspace for the BLAS calls, one per rank, and its size. */
  void *workspace;
  uint64_t workspace_bytes;
  /* The rank's cache of GEMM plans (algorithms chosen per shape and
   * alignment), a tandem_plan_cache owned by the runtime: every cache
   * lives here, never in the library. Null on the host; without it every
   * GEMM asks the heuristic again. */
  void *plan_cache;
  /* The rank's status word, a tandem_fragment_status in the memory the
   * code runs on (device memory for a GPU's kernels), or null: nothing is
   * reported beyond the status code. */
  tandem_fragment_status *status;
  /* The runtime's number for this run (its action's index in the rank's
   * list), copied into a report so that it names the run that failed. */
  uint64_t call;
} tandem_fragment_context;

/* An entry point: arguments, caller-allocated results, scratch of
 * <symbol>_scratch_bytes() bytes. Returns 0; 1 for an index out of its
 * range (reported in the status word; a GPU's kernels report it there
 * only, after the call has returned 0); 2 for a kernel launch that failed; 3
 * for a GEMM the BLAS library could not run (no handle, no algorithm for the
 * shape). */
typedef int (*tandem_fragment_fn)(const tandem_fragment_context *context,
                                  const void *const *args, void *const *results,
                                  void *scratch);
typedef uint64_t (*tandem_scratch_bytes_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* TANDEM_RUNTIME_FRAGMENTABI_H */
