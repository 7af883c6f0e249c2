//===- Init.h - parameter initialization from specs -------------*- C++ -*-===//
//
// Turns a parameter's initializer spec (zeros, ones, normal(std),
// uniform(low, high), orthonormal) into values. Element i of a parameter is
// a pure function of (seed, parameter name, i): no generator state, so any
// rank can initialize any slice of any parameter, in any order, and get the
// values the reference evaluator gets. (Orthonormal elements depend on the
// whole matrix's draws, so a slice costs the whole matrix.) No MLIR
// dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_INIT_H
#define TANDEM_RUNTIME_INIT_H

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tandem::rng {

enum class InitKind { Zeros, Ones, Normal, Uniform, Orthonormal };

struct InitSpec {
  InitKind kind = InitKind::Zeros;
  /// Standard deviation (normal) or low bound (uniform).
  double a = 0.0;
  /// High bound (uniform).
  double b = 0.0;
  /// Padding along one dimension (a vocabulary padded for the GEMMs): the
  /// parameter, seen as [outer, padStored, padInner], holds the drawn
  /// tensor [outer, padKept, padInner] at the same indices and zeros
  /// elsewhere. padStored = 0: no padding.
  uint64_t padInner = 1, padKept = 0, padStored = 0;
  /// Orthonormal: the parameter seen as a rows x cols matrix (setMatrix).
  uint64_t rows = 0, cols = 0;
  /// A seed of the parameter's own, used instead of the run's (a frozen
  /// part of the model that every run shares).
  bool hasSeed = false;
  uint64_t seed = 0;

  bool operator==(const InitSpec &o) const {
    return kind == o.kind && a == o.a && b == o.b && padInner == o.padInner &&
           padKept == o.padKept && padStored == o.padStored && rows == o.rows &&
           cols == o.cols && hasSeed == o.hasSeed && seed == o.seed;
  }
  bool operator!=(const InitSpec &o) const { return !(*this == o); }
};

/// The random stream of a parameter: FNV-1a of its name. Keyed by name, not
/// by position, so reordering or partitioning parameters changes nothing.
uint64_t parameterStream(std::string_view name);

/// Sets `spec`'s padding for a parameter of shape `stored` that draws the
/// values of a tensor of shape `logical` (same rank, no larger, differing in
/// at most one dimension); false, with `spec` unchanged, when the shapes do
/// not fit that. Equal shapes mean no padding.
bool setPadding(InitSpec &spec, const std::vector<int64_t> &stored,
                const std::vector<int64_t> &logical);

/// Sets an orthonormal `spec`'s matrix shape from the parameter's `shape`:
/// the last dimension is the columns, the product of the others the rows.
/// False, with `spec` unchanged, when that is not a matrix with at least as
/// many rows as columns. Other kinds: true, nothing to set.
bool setMatrix(InitSpec &spec, const std::vector<int64_t> &shape);

/// Element `index` of a parameter initialized by `spec` (computed in double).
double initValue(const InitSpec &spec, uint64_t seed, uint64_t stream,
                 uint64_t index);

/// Fills `out[0..count)` with elements `first..first+count` of the parameter.
void initFill(const InitSpec &spec, uint64_t seed, uint64_t stream,
              uint64_t first, float *out, size_t count);
void initFill(const InitSpec &spec, uint64_t seed, uint64_t stream,
              uint64_t first, double *out, size_t count);

} // namespace tandem::rng

#endif // TANDEM_RUNTIME_INIT_H
