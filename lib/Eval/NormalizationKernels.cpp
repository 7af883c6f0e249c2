//===- NormalizationKernels.cpp - softmax and normalizations --------------===//
//
// Sums run in increasing index along the normalized axis, in double.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.h"

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Support/Transcendental.h"

#include <cmath>
#include <limits>

using namespace tandem::eval;
namespace nn = tandem::nn;

namespace {

/// softmax (or log_softmax) along `axis`, subtracting the maximum first.
template <bool Log> KernelResult softmaxKernel(const KernelCall &call) {
  int64_t axis = call.op->getAttrOfType<mlir::IntegerAttr>("axis").getInt();
  const Tensor &input = *call.operands[0];
  if (axis < 0 || axis >= input.rank())
    return opError(call.op, "axis out of range");
  Tensor result = resultTensor(call.op);
  AxisSplit s = splitAt(input.shape, axis);
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t in = 0; in < s.inner; ++in) {
      int64_t base = o * s.size * s.inner + in;
      auto at = [&](int64_t j) { return base + j * s.inner; };
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < s.size; ++j)
        max = std::fmax(max, input.data[at(j)]);
      double sum = 0.0;
      for (int64_t j = 0; j < s.size; ++j)
        sum += tandem_math::exp(input.data[at(j)] - max);
      for (int64_t j = 0; j < s.size; ++j) {
        double shifted = input.data[at(j)] - max;
        result.data[at(j)] =
            Log ? shifted - std::log(sum) : tandem_math::exp(shifted) / sum;
      }
    }
  return single(std::move(result));
}

KernelResult layerNormKernel(const KernelCall &call) {
  double epsilon =
      llvm::cast<nn::LayerNormOp>(call.op).getEpsilon().convertToDouble();
  const Tensor &input = *call.operands[0], &weight = *call.operands[1],
               &bias = *call.operands[2];
  int64_t d = input.shape.back();
  if (weight.numElements() != d || bias.numElements() != d)
    return opError(call.op, "weight and bias must have the last dimension's "
                            "size");
  Tensor result = resultTensor(call.op);
  for (int64_t row = 0; row < input.numElements() / d; ++row) {
    const double *x = input.data.data() + row * d;
    double *y = result.data.data() + row * d;
    double sum = 0.0;
    for (int64_t j = 0; j < d; ++j)
      sum += x[j];
    double mean = sum / d;
    double squares = 0.0;
    for (int64_t j = 0; j < d; ++j)
      squares += (x[j] - mean) * (x[j] - mean);
    double inv = 1.0 / std::sqrt(squares / d + epsilon);
    for (int64_t j = 0; j < d; ++j)
      y[j] = (x[j] - mean) * inv * weight.data[j] + bias.data[j];
  }
  return single(std::move(result));
}

KernelResult rmsNormKernel(const KernelCall &call) {
  double epsilon =
      llvm::cast<nn::RMSNormOp>(call.op).getEpsilon().convertToDouble();
  const Tensor &input = *call.operands[0], &weight = *call.operands[1];
  int64_t d = input.shape.back();
  if (weight.numElements() != d)
    return opError(call.op, "weight must have the last dimension's size");
  Tensor result = resultTensor(call.op);
  for (int64_t row = 0; row < input.numElements() / d; ++row) {
    const double *x = input.data.data() + row * d;
    double *y = result.data.data() + row * d;
    double squares = 0.0;
    for (int64_t j = 0; j < d; ++j)
      squares += x[j] * x[j];
    double inv = 1.0 / std::sqrt(squares / d + epsilon);
    for (int64_t j = 0; j < d; ++j)
      y[j] = x[j] * inv * weight.data[j];
  }
  return single(std::move(result));
}

/// layer_norm_grad (Layer) and rms_norm_grad: per row, r and x̂ as the
/// forward op computes them, ĝ = dy · weight, then
/// dx = r (ĝ - mean(ĝ) - x̂ mean(ĝ x̂)) (rms: without mean(ĝ)) and the
/// weight gradient's terms dy · x̂.
template <bool Layer> KernelResult normGradKernel(const KernelCall &call) {
  double epsilon =
      call.op->getAttrOfType<mlir::FloatAttr>("epsilon").getValueAsDouble();
  const Tensor &input = *call.operands[0], &weight = *call.operands[1],
               &dy = *call.operands[2];
  int64_t d = input.shape.back();
  if (weight.numElements() != d || dy.numElements() != input.numElements())
    return opError(call.op, "weight must have the last dimension's size and "
                            "the cotangent the input's");
  Tensor dx = resultTensor(call.op, 0), terms = resultTensor(call.op, 1);
  std::vector<double> xhat(d > 0 ? d : 1);
  for (int64_t row = 0; d > 0 && row < input.numElements() / d; ++row) {
    const double *x = input.data.data() + row * d;
    const double *g = dy.data.data() + row * d;
    double *out = dx.data.data() + row * d;
    double *weightTerms = terms.data.data() + row * d;
    double mean = 0.0;
    if (Layer) {
      for (int64_t j = 0; j < d; ++j)
        mean += x[j];
      mean /= d;
    }
    double squares = 0.0;
    for (int64_t j = 0; j < d; ++j)
      squares += (x[j] - mean) * (x[j] - mean);
    double r = 1.0 / std::sqrt(squares / d + epsilon);
    double meanG = 0.0, meanGX = 0.0;
    for (int64_t j = 0; j < d; ++j) {
      xhat[j] = (x[j] - mean) * r;
      meanG += g[j] * weight.data[j];
      meanGX += g[j] * weight.data[j] * xhat[j];
    }
    meanG /= d;
    meanGX /= d;
    for (int64_t j = 0; j < d; ++j) {
      out[j] = r * (g[j] * weight.data[j] - (Layer ? meanG : 0.0) -
                    xhat[j] * meanGX);
      weightTerms[j] = g[j] * xhat[j];
    }
  }
  std::vector<Tensor> results;
  results.push_back(std::move(dx));
  results.push_back(std::move(terms));
  return results;
}

} // namespace

void tandem::eval::registerNormalizationKernels(KernelRegistry &registry) {
  registry.add(nn::LayerNormGradOp::getOperationName(), normGradKernel<true>);
  registry.add(nn::RMSNormGradOp::getOperationName(), normGradKernel<false>);
  registry.add(nn::SoftmaxOp::getOperationName(), softmaxKernel<false>);
  registry.add(nn::LogSoftmaxOp::getOperationName(), softmaxKernel<true>);
  registry.add(nn::LayerNormOp::getOperationName(), layerNormKernel);
  registry.add(nn::RMSNormOp::getOperationName(), rmsNormKernel);
}
