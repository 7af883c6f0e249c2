//===- ElementwiseKernels.cpp - unary and broadcasting binary ops ---------===//

#include "KernelUtils.h"

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Support/Transcendental.h"

#include <cmath>

using namespace tandem::eval;
namespace nn = tandem::nn;

namespace {

double negate(double x) { return -x; }
double exponential(double x) { return tandem_math::exp(x); }
double logarithm(double x) { return std::log(x); }
double hyperbolicTangent(double x) { return tandem_math::tanh(x); }
double squareRoot(double x) { return std::sqrt(x); }
double reciprocalSqrt(double x) { return 1.0 / std::sqrt(x); }
// NaN propagates (max(NaN, 0) is NaN, as in NumPy's maximum).
double relu(double x) { return std::isnan(x) ? x : (x > 0.0 ? x : 0.0); }
double gelu(double x) {
  constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;
  return 0.5 * x *
         (1.0 + tandem_math::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}
double silu(double x) { return x / (1.0 + tandem_math::exp(-x)); }
// The tanh form's derivative (nn.gelu_grad).
double geluDerivative(double x) {
  constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;
  double t = tandem_math::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x));
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * kSqrt2OverPi *
                               (1.0 + 3.0 * 0.044715 * x * x);
}
double sine(double x) { return std::sin(x); }
double cosine(double x) { return std::cos(x); }
double errorFunction(double x) { return std::erf(x); }
double complementaryErrorFunction(double x) { return std::erfc(x); }
// nn.stop_gradient: the value unchanged (only its gradient is zero).
double identity(double x) { return x; }

template <double (*F)(double)>
KernelResult unaryKernel(const KernelCall &call) {
  Tensor result = resultTensor(call.op);
  const Tensor &input = *call.operands[0];
  for (size_t i = 0; i < input.data.size(); ++i)
    result.data[i] = F(input.data[i]);
  return single(std::move(result));
}

KernelResult powKernel(const KernelCall &call) {
  double exponent =
      llvm::cast<nn::PowOp>(call.op).getExponent().convertToDouble();
  Tensor result = resultTensor(call.op);
  const Tensor &input = *call.operands[0];
  for (size_t i = 0; i < input.data.size(); ++i)
    result.data[i] = std::pow(input.data[i], exponent);
  return single(std::move(result));
}

/// dy · gelu'(x), rounded once.
KernelResult geluGradKernel(const KernelCall &call) {
  Tensor result = resultTensor(call.op);
  const Tensor &input = *call.operands[0], &cotangent = *call.operands[1];
  for (size_t i = 0; i < input.data.size(); ++i)
    result.data[i] = cotangent.data[i] * geluDerivative(input.data[i]);
  return single(std::move(result));
}

enum class BinaryKind { Add, Sub, Mul, Div, Maximum, Minimum, GreaterEqual };

template <BinaryKind Kind> KernelResult binaryKernel(const KernelCall &call) {
  Tensor result = resultTensor(call.op);
  const Tensor &lhs = *call.operands[0], &rhs = *call.operands[1];
  llvm::SmallVector<int64_t> lhsAt = broadcastOffsets(lhs.shape, result.shape);
  llvm::SmallVector<int64_t> rhsAt = broadcastOffsets(rhs.shape, result.shape);
  bool integer = llvm::isa<mlir::IntegerType>(result.elementType);
  for (int64_t i = 0; i < result.numElements(); ++i) {
    double a = lhs.data[lhsAt[i]], b = rhs.data[rhsAt[i]];
    switch (Kind) {
    case BinaryKind::Add:
      result.data[i] = a + b;
      break;
    case BinaryKind::Sub:
      result.data[i] = a - b;
      break;
    case BinaryKind::Mul:
      result.data[i] = a * b;
      break;
    case BinaryKind::Div:
      // Integer division truncates toward zero, as in C.
      if (integer) {
        if (b == 0.0)
          return opError(call.op, "integer division by zero");
        result.data[i] = std::trunc(a / b);
      } else {
        result.data[i] = a / b;
      }
      break;
    case BinaryKind::Maximum:
      result.data[i] =
          std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b);
      break;
    case BinaryKind::Minimum:
      result.data[i] =
          std::isnan(a) || std::isnan(b) ? std::nan("") : std::min(a, b);
      break;
    case BinaryKind::GreaterEqual:
      // A NaN operand compares false.
      result.data[i] = a >= b ? 1.0 : 0.0;
      break;
    }
  }
  return single(std::move(result));
}

/// Copies each element from one operand, so the result is bitwise that
/// operand's element (NaN and infinity included); the interpreter's rounding
/// to the result type leaves such an element unchanged.
KernelResult selectKernel(const KernelCall &call) {
  Tensor result = resultTensor(call.op);
  const Tensor &cond = *call.operands[0];
  const Tensor &onTrue = *call.operands[1], &onFalse = *call.operands[2];
  llvm::SmallVector<int64_t> condAt =
      broadcastOffsets(cond.shape, result.shape);
  for (int64_t i = 0; i < result.numElements(); ++i)
    result.data[i] =
        cond.data[condAt[i]] != 0.0 ? onTrue.data[i] : onFalse.data[i];
  return single(std::move(result));
}

} // namespace

void tandem::eval::registerElementwiseKernels(KernelRegistry &registry) {
  registry.add(nn::NegOp::getOperationName(), unaryKernel<negate>);
  registry.add(nn::ExpOp::getOperationName(), unaryKernel<exponential>);
  registry.add(nn::LogOp::getOperationName(), unaryKernel<logarithm>);
  registry.add(nn::TanhOp::getOperationName(), unaryKernel<hyperbolicTangent>);
  registry.add(nn::SqrtOp::getOperationName(), unaryKernel<squareRoot>);
  registry.add(nn::RsqrtOp::getOperationName(), unaryKernel<reciprocalSqrt>);
  registry.add(nn::ReluOp::getOperationName(), unaryKernel<relu>);
  registry.add(nn::GeluOp::getOperationName(), unaryKernel<gelu>);
  registry.add(nn::GeluGradOp::getOperationName(), geluGradKernel);
  registry.add(nn::SiluOp::getOperationName(), unaryKernel<silu>);
  registry.add(nn::SinOp::getOperationName(), unaryKernel<sine>);
  registry.add(nn::CosOp::getOperationName(), unaryKernel<cosine>);
  registry.add(nn::ErfOp::getOperationName(), unaryKernel<errorFunction>);
  registry.add(nn::ErfcOp::getOperationName(),
               unaryKernel<complementaryErrorFunction>);
  registry.add(nn::StopGradientOp::getOperationName(), unaryKernel<identity>);
  registry.add(nn::PowOp::getOperationName(), powKernel);
  registry.add(nn::AddOp::getOperationName(), binaryKernel<BinaryKind::Add>);
  registry.add(nn::SubOp::getOperationName(), binaryKernel<BinaryKind::Sub>);
  registry.add(nn::MulOp::getOperationName(), binaryKernel<BinaryKind::Mul>);
  registry.add(nn::DivOp::getOperationName(), binaryKernel<BinaryKind::Div>);
  registry.add(nn::MaximumOp::getOperationName(),
               binaryKernel<BinaryKind::Maximum>);
  registry.add(nn::MinimumOp::getOperationName(),
               binaryKernel<BinaryKind::Minimum>);
  registry.add(nn::GreaterEqualOp::getOperationName(),
               binaryKernel<BinaryKind::GreaterEqual>);
  registry.add(nn::SelectOp::getOperationName(), selectKernel);
}
