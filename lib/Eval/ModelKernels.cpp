//===- ModelKernels.cpp - parameters, constants, casts, model-level ops ---===//
//
// nn.param, nn.constant, nn.cast, nn.stage_end, nn.embedding, nn.one_hot,
// nn.attention, nn.cross_entropy, and the func and mpmd ops that structure a
// program.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Eval/Rounding.h"
#include "tandem/Support/Transcendental.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>
#include <limits>
#include <optional>

using namespace tandem::eval;
namespace nn = tandem::nn;

namespace {

KernelResult paramKernel(const KernelCall &call) {
  auto op = llvm::cast<nn::ParamOp>(call.op);
  llvm::StringRef name = op.getName();
  const ParameterMap &parameters = call.interpreter.getParameters();
  auto it = parameters.find(name.str());
  if (it == parameters.end())
    return opError(call.op, "no value for parameter '" + name + "'");
  if (it->second.getType() != resultType(call.op))
    return opError(call.op, "parameter '" + name + "' holds " +
                                it->second.typeString() + ", expected " +
                                Tensor(resultType(call.op)).typeString());
  return single(it->second);
}

KernelResult constantKernel(const KernelCall &call) {
  auto value = llvm::dyn_cast<mlir::DenseElementsAttr>(
      llvm::cast<nn::ConstantOp>(call.op).getValue());
  if (!value)
    return opError(call.op, "only dense constants are supported");
  Tensor result = resultTensor(call.op);
  // The iterators repeat a splat's one value for every element.
  int64_t i = 0;
  if (llvm::isa<mlir::FloatType>(value.getElementType())) {
    for (const llvm::APFloat &x : value.getValues<llvm::APFloat>()) {
      llvm::APFloat wide = x;
      bool losesInfo = false;
      wide.convert(llvm::APFloat::IEEEdouble(),
                   llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      result.data[i++] = wide.convertToDouble();
    }
  } else {
    for (const llvm::APInt &x : value.getValues<llvm::APInt>())
      result.data[i++] = static_cast<double>(x.getSExtValue());
  }
  return single(std::move(result));
}

KernelResult castKernel(const KernelCall &call) {
  auto op = llvm::cast<nn::CastOp>(call.op);
  Tensor result = resultTensor(call.op);
  result.data = call.operands[0]->data;
  RoundingOptions options;
  options.saturate = op.getSaturate().value_or(false);
  options.keepF32AsF64 = call.interpreter.getOptions().f64;
  roundAllToType(result.data.data(), result.data.size(), result.elementType,
                 options);
  return single(std::move(result));
}

/// nn.parameter only declares a symbol; its values live in the
/// interpreter's parameter map, so evaluating it does nothing.
KernelResult declarationKernel(const KernelCall &) {
  return std::vector<Tensor>();
}

KernelResult identityKernel(const KernelCall &call) {
  std::vector<Tensor> results;
  for (const Tensor *operand : call.operands)
    results.push_back(*operand);
  return results;
}

KernelResult callKernel(const KernelCall &call) {
  auto op = llvm::cast<mlir::func::CallOp>(call.op);
  auto callee = call.interpreter.getModule().lookupSymbol<mlir::func::FuncOp>(
      op.getCallee());
  if (!callee)
    return opError(call.op, "no function '" + op.getCallee() + "'");
  std::vector<Tensor> inputs;
  for (const Tensor *operand : call.operands)
    inputs.push_back(*operand);
  return call.interpreter.call(callee, inputs);
}

KernelResult embeddingKernel(const KernelCall &call) {
  const Tensor &table = *call.operands[0], &ids = *call.operands[1];
  if (table.rank() != 2)
    return opError(call.op, "table must be 2-D");
  int64_t vocab = llvm::cast<nn::EmbeddingOp>(call.op).getRowCount();
  int64_t dim = table.shape[1];
  Tensor result = resultTensor(call.op);
  for (int64_t i = 0; i < ids.numElements(); ++i) {
    double id = ids.data[i];
    if (!(id >= 0 && id < static_cast<double>(vocab)))
      return opError(call.op, "id " + llvm::Twine(static_cast<int64_t>(id)) +
                                  " at position " + llvm::Twine(i) +
                                  " is outside the vocabulary [0, " +
                                  llvm::Twine(vocab) + ")");
    int64_t row = static_cast<int64_t>(id);
    std::copy_n(table.data.begin() + row * dim, dim,
                result.data.begin() + i * dim);
  }
  return single(std::move(result));
}

/// 1 where the last index equals the id, else 0; ids outside [0, classes)
/// are an error, as nn.embedding's.
KernelResult oneHotKernel(const KernelCall &call) {
  const Tensor &ids = *call.operands[0];
  int64_t classes = llvm::cast<nn::OneHotOp>(call.op).getClasses();
  Tensor result = resultTensor(call.op); // zeros
  for (int64_t i = 0; i < ids.numElements(); ++i) {
    double id = ids.data[i];
    if (!(id >= 0 && id < static_cast<double>(classes)))
      return opError(call.op, "id " + llvm::Twine(static_cast<int64_t>(id)) +
                                  " at position " + llvm::Twine(i) +
                                  " is outside the classes [0, " +
                                  llvm::Twine(classes) + ")");
    result.data[i * classes + static_cast<int64_t>(id)] = 1.0;
  }
  return single(std::move(result));
}

/// The shape of an attention op's operands, checked as the kernels need.
/// Query head h reads key and value head h / group; key and value rows are
/// kvDim = (heads / group)·hd wide.
struct AttentionShape {
  int64_t batch, tq, tk, dim, heads, hd, group, kvDim;
  bool causal;
  double scale;

  /// The first element of query row i of head h in batch b.
  int64_t queryAt(int64_t b, int64_t i, int64_t h) const {
    return (b * tq + i) * dim + h * hd;
  }
  /// The first element of key (or value) row j that query head h reads.
  int64_t keyAt(int64_t b, int64_t j, int64_t h) const {
    return (b * tk + j) * kvDim + h / group * hd;
  }
};

template <typename OpT>
mlir::FailureOr<AttentionShape> attentionShape(OpT op, const Tensor &q,
                                               const Tensor &k) {
  AttentionShape s{q.shape[0],
                   q.shape[1],
                   k.shape[1],
                   q.shape[2],
                   static_cast<int64_t>(op.getHeads()),
                   0,
                   1,
                   k.shape[2],
                   op.getCausal(),
                   op.getEffectiveScale()};
  int64_t kvHeads = op.getKeyValueHeads();
  if (s.heads <= 0 || s.dim % s.heads != 0 || kvHeads <= 0 ||
      s.heads % kvHeads != 0 || s.dim / s.heads * kvHeads != s.kvDim ||
      (s.causal && s.tq != s.tk))
    return mlir::failure();
  s.hd = s.dim / s.heads;
  s.group = s.heads / kvHeads;
  return s;
}

/// Query i's row of head h in batch b: its scores q·k·scale over the
/// visible keys (all, or k <= i when causal) in `scores`, their maximum
/// returned. Sums run in increasing index.
double attentionScores(const AttentionShape &s, const Tensor &q,
                       const Tensor &k, int64_t b, int64_t h, int64_t i,
                       std::vector<double> &scores) {
  const double *qi = &q.data[s.queryAt(b, i, h)];
  int64_t visible = s.causal ? i + 1 : s.tk;
  scores.assign(visible, 0.0);
  double max = -std::numeric_limits<double>::infinity();
  for (int64_t j = 0; j < visible; ++j) {
    const double *kj = &k.data[s.keyAt(b, j, h)];
    double dot = 0.0;
    for (int64_t d = 0; d < s.hd; ++d)
      dot += qi[d] * kj[d];
    scores[j] = dot * s.scale;
    max = std::fmax(max, scores[j]);
  }
  return max;
}

KernelResult attentionShapeError(mlir::Operation *op) {
  return opError(op, "heads must divide the model dimension, kv_heads the "
                     "heads and the key width, and causal attention needs "
                     "as many keys as queries");
}

/// Directly from the definition: per batch, head and query, the scores
/// q·k·scale over the visible keys (all, or k <= q when causal), their
/// softmax e^{score - max} / sum, and the weighted sum of values; with a
/// second result, max + log(sum). Sums run in increasing index.
KernelResult attentionKernel(const KernelCall &call) {
  auto op = llvm::cast<nn::AttentionOp>(call.op);
  const Tensor &q = *call.operands[0], &k = *call.operands[1],
               &v = *call.operands[2];
  mlir::FailureOr<AttentionShape> shape = attentionShape(op, q, k);
  if (failed(shape))
    return attentionShapeError(call.op);
  const AttentionShape &s = *shape;
  Tensor result = resultTensor(call.op);
  std::optional<Tensor> lse;
  if (op.getLse())
    lse = resultTensor(call.op, 1);
  std::vector<double> weights;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t i = 0; i < s.tq; ++i) {
        double max = attentionScores(s, q, k, b, h, i, weights);
        double sum = 0.0;
        for (double &w : weights) {
          w = tandem_math::exp(w - max);
          sum += w;
        }
        if (lse)
          lse->data[(b * s.heads + h) * s.tq + i] = max + std::log(sum);
        double *out = &result.data[s.queryAt(b, i, h)];
        for (int64_t d = 0; d < s.hd; ++d) {
          double acc = 0.0;
          for (size_t j = 0; j < weights.size(); ++j)
            acc += weights[j] / sum * v.data[s.keyAt(b, j, h) + d];
          out[d] = acc;
        }
      }
  if (!lse)
    return single(std::move(result));
  return std::vector<Tensor>{std::move(result), std::move(*lse)};
}

/// From the definition (NNOps.td): per batch, head and query, the
/// probabilities P = e^{score - lse}, dP = dy·vᵀ, D = dy·y (Σ P∘dP when y
/// and lse are the forward pass's), dS = P∘(dP − D); then dq += dS·k·scale,
/// dk += dSᵀ·q·scale, dv += Pᵀ·dy, the contributions of queries added in
/// increasing order (with kv_heads, those of a group's query heads in
/// increasing head order, each head's queries in turn).
KernelResult attentionGradKernel(const KernelCall &call) {
  auto op = llvm::cast<nn::AttentionGradOp>(call.op);
  const Tensor &q = *call.operands[0], &k = *call.operands[1],
               &v = *call.operands[2], &y = *call.operands[3],
               &lse = *call.operands[4], &dy = *call.operands[5];
  mlir::FailureOr<AttentionShape> shape = attentionShape(op, q, k);
  if (failed(shape))
    return attentionShapeError(call.op);
  const AttentionShape &s = *shape;
  Tensor dq = resultTensor(call.op, 0), dk = resultTensor(call.op, 1),
         dv = resultTensor(call.op, 2);
  std::fill(dq.data.begin(), dq.data.end(), 0.0);
  std::fill(dk.data.begin(), dk.data.end(), 0.0);
  std::fill(dv.data.begin(), dv.data.end(), 0.0);
  std::vector<double> p, dp;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t i = 0; i < s.tq; ++i) {
        attentionScores(s, q, k, b, h, i, p);
        double rowLse = lse.data[(b * s.heads + h) * s.tq + i];
        int64_t at = s.queryAt(b, i, h);
        double rowDot = 0.0;
        for (int64_t d = 0; d < s.hd; ++d)
          rowDot += dy.data[at + d] * y.data[at + d];
        dp.assign(p.size(), 0.0);
        for (size_t j = 0; j < p.size(); ++j) {
          p[j] = tandem_math::exp(p[j] - rowLse);
          const double *vj = &v.data[s.keyAt(b, j, h)];
          for (int64_t d = 0; d < s.hd; ++d)
            dp[j] += dy.data[at + d] * vj[d];
        }
        for (size_t j = 0; j < p.size(); ++j) {
          double ds = p[j] * (dp[j] - rowDot) * s.scale;
          int64_t kv = s.keyAt(b, j, h);
          for (int64_t d = 0; d < s.hd; ++d) {
            dq.data[at + d] += ds * k.data[kv + d];
            dk.data[kv + d] += ds * q.data[at + d];
            dv.data[kv + d] += p[j] * dy.data[at + d];
          }
        }
      }
  return std::vector<Tensor>{std::move(dq), std::move(dk), std::move(dv)};
}

/// mean over positions of logsumexp(logits) - logits[target], positions
/// summed in row-major order.
/// The error for a cross-entropy target outside [0, classes).
KernelResult targetOutOfRange(const KernelCall &call, double target,
                              int64_t position, int64_t classes) {
  return opError(
      call.op, "target " + llvm::Twine(static_cast<int64_t>(target)) +
                   " at position " + llvm::Twine(position) +
                   " is outside the classes [0, " + llvm::Twine(classes) + ")");
}

KernelResult crossEntropyKernel(const KernelCall &call) {
  const Tensor &logits = *call.operands[0], &targets = *call.operands[1];
  // Rows of `vocab` columns, of which the first `classes` are classes.
  int64_t vocab = logits.shape.back();
  int64_t classes = llvm::cast<nn::CrossEntropyOp>(call.op).getClassCount();
  int64_t positions = targets.numElements();
  if (positions * vocab != logits.numElements())
    return opError(call.op, "targets do not match the logits' positions");
  double total = 0.0;
  for (int64_t p = 0; p < positions; ++p) {
    double target = targets.data[p];
    if (!(target >= 0 && target < static_cast<double>(classes)))
      return targetOutOfRange(call, target, p, classes);
    const double *row = &logits.data[p * vocab];
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < classes; ++j)
      max = std::fmax(max, row[j]);
    double sum = 0.0;
    for (int64_t j = 0; j < classes; ++j)
      sum += tandem_math::exp(row[j] - max);
    total += max + std::log(sum) - row[static_cast<int64_t>(target)];
  }
  Tensor result = resultTensor(call.op);
  result.data[0] = positions ? total / positions : NAN;
  return single(std::move(result));
}

/// Row v of the result is the sum of the cotangent rows at the positions
/// whose id is v, added in increasing position order.
KernelResult embeddingGradKernel(const KernelCall &call) {
  const Tensor &cotangent = *call.operands[0], &ids = *call.operands[1];
  Tensor result = resultTensor(call.op);
  int64_t vocab = llvm::cast<nn::EmbeddingGradOp>(call.op).getRowCount();
  int64_t dim = result.shape[1];
  for (int64_t i = 0; i < ids.numElements(); ++i) {
    double id = ids.data[i];
    if (!(id >= 0 && id < static_cast<double>(vocab)))
      return opError(call.op, "id " + llvm::Twine(static_cast<int64_t>(id)) +
                                  " at position " + llvm::Twine(i) +
                                  " is outside the vocabulary [0, " +
                                  llvm::Twine(vocab) + ")");
    int64_t row = static_cast<int64_t>(id);
    for (int64_t d = 0; d < dim; ++d)
      result.data[row * dim + d] += cotangent.data[i * dim + d];
  }
  return single(std::move(result));
}

/// (softmax(logits) - onehot(targets)) * g / N per position, with the
/// softmax's maximum subtracted first.
KernelResult crossEntropyGradKernel(const KernelCall &call) {
  const Tensor &logits = *call.operands[0], &targets = *call.operands[1];
  double g = call.operands[2]->data[0];
  // The padding columns past `classes` keep the result's zeros.
  int64_t vocab = logits.shape.back();
  int64_t classes = llvm::cast<nn::CrossEntropyGradOp>(call.op).getClassCount();
  int64_t positions = targets.numElements();
  Tensor result = resultTensor(call.op);
  double factor = g / static_cast<double>(positions);
  for (int64_t p = 0; p < positions; ++p) {
    double target = targets.data[p];
    if (!(target >= 0 && target < static_cast<double>(classes)))
      return targetOutOfRange(call, target, p, classes);
    const double *row = &logits.data[p * vocab];
    double *out = &result.data[p * vocab];
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < classes; ++j)
      max = std::fmax(max, row[j]);
    double sum = 0.0;
    for (int64_t j = 0; j < classes; ++j)
      sum += tandem_math::exp(row[j] - max);
    for (int64_t j = 0; j < classes; ++j) {
      double prob = tandem_math::exp(row[j] - max) / sum;
      double onehot = j == static_cast<int64_t>(target) ? 1.0 : 0.0;
      out[j] = (prob - onehot) * factor;
    }
  }
  return single(std::move(result));
}

} // namespace

void tandem::eval::registerModelKernels(KernelRegistry &registry) {
  registry.add(nn::ParameterOp::getOperationName(), declarationKernel);
  registry.add(nn::ParamOp::getOperationName(), paramKernel);
  registry.add(nn::ConstantOp::getOperationName(), constantKernel);
  registry.add(nn::CastOp::getOperationName(), castKernel);
  registry.add(nn::StageEndOp::getOperationName(), identityKernel);
  registry.add(nn::EmbeddingOp::getOperationName(), embeddingKernel);
  registry.add(nn::OneHotOp::getOperationName(), oneHotKernel);
  registry.add(nn::AttentionOp::getOperationName(), attentionKernel);
  registry.add(nn::AttentionGradOp::getOperationName(), attentionGradKernel);
  registry.add(nn::CrossEntropyOp::getOperationName(), crossEntropyKernel);
  registry.add(nn::EmbeddingGradOp::getOperationName(), embeddingGradKernel);
  registry.add(nn::CrossEntropyGradOp::getOperationName(),
               crossEntropyGradKernel);
  registry.add(mlir::func::ReturnOp::getOperationName(), identityKernel);
  registry.add(mlir::func::CallOp::getOperationName(), callKernel);
  // A fragment's terminator returns its operands, like func.return.
  registry.add(tandem::mpmd::YieldOp::getOperationName(), identityKernel);
}
