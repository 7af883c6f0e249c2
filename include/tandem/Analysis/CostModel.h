//===- CostModel.h - FLOPs, bytes and time of nn ops ------------*- C++ -*-===//
//
// A roofline cost model: every nn op has a rule giving the floating-point
// operations it performs and the bytes it moves to and from device memory
// (operands read once, results written once, nothing fused); its time on a
// device is max(flops / peak, bytes / memory bandwidth) plus the device's
// launch overhead. A fragment's time is the sum of its ops'. An op without a
// rule is an error naming it. docs/cost-model.md lists the rules.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_ANALYSIS_COSTMODEL_H
#define TANDEM_ANALYSIS_COSTMODEL_H

#include "tandem/Analysis/Device.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace tandem::analysis {

/// FLOPs charged per element for transcendental functions (exp, log, tanh,
/// sqrt, rsqrt, sin, cos, pow): a polynomial approximation's worth of
/// multiply-adds, so a softmax is not priced like an add.
inline constexpr double kTranscendentalFlops = 4.0;

/// What one op costs, independent of the device.
struct OpCost {
  double flops = 0.0;
  /// Bytes read plus bytes written.
  double bytes = 0.0;
  /// Peak key the flops run at (see `peakKey`); empty for ops that move
  /// or compute nothing.
  std::string dtype;
  /// Whether the op runs on the matrix units (matmul, attention) and so at
  /// the dtype's peak; the rest run at the f32 peak.
  bool matrix = false;

  /// Whether the op does anything at run time (a view or a parameter read
  /// does not, and costs no launch either).
  bool isFree() const { return flops == 0.0 && bytes == 0.0; }
};

struct CostOptions {
  /// Run f32 matmuls at the tf32 peak (cuBLAS's TF32 math mode).
  bool tf32 = false;
};

/// Bytes of a value of `type`: elements times the element size in bytes
/// (sub-byte types round up to one byte); 0 for types that are not
/// statically shaped.
double bytesOf(mlir::Type type);

/// The device's peak key for an element type: f64, f32, bf16, f16, f8 (any
/// 8-bit float); integers and other types compute on the f32 units.
std::string peakKey(mlir::Type elementType);

/// The cost of `op` (an nn op); an error naming the op if it has no rule.
llvm::Expected<OpCost> estimateOp(mlir::Operation *op);

/// Seconds for `cost` on `device`: the roofline plus the launch overhead
/// (none for a free op). An error if the device has no peak for the dtype.
llvm::Expected<double> timeOn(const OpCost &cost, const Device &device,
                              const CostOptions &options = {});

/// Seconds for `op` on `device`.
llvm::Expected<double> estimateTime(mlir::Operation *op, const Device &device,
                                    const CostOptions &options = {});

/// Names of the ops with a cost rule ("nn.add", ...), sorted: the
/// op-coverage test checks that every registered nn op is among them.
std::vector<std::string> opsWithCostRules();

} // namespace tandem::analysis

#endif // TANDEM_ANALYSIS_COSTMODEL_H
