//===- GradientRulesElementwise.cpp - unary, binary, casts, structure -----===//
//
// y = f(x) elementwise: dx = dy * f'(x). Binary ops broadcast, so each
// operand's contribution is summed back to its shape. maximum and minimum
// send the whole cotangent to one side at ties: to lhs (maximum picks lhs
// when lhs >= rhs, minimum when lhs <= rhs), and to rhs when either is NaN.
//
//===----------------------------------------------------------------------===//

#include "GradientRules.h"

#include <cmath>

using namespace mlir;
using namespace tandem::nn;
using namespace tandem::nn::autodiff;

namespace {

using Cots = ArrayRef<Value>;
using Out = SmallVectorImpl<Value>;

/// Unary rules: dx = dy * derivative(x, y).
template <typename Fn>
LogicalResult unary(GradBuilder &gb, Operation *op, Cots cots, Out &out,
                    Fn derivative) {
  Value x = op->getOperand(0), y = op->getResult(0);
  out.push_back(gb.mul(cots[0], derivative(x, y)));
  return success();
}

LogicalResult negRule(GradBuilder &gb, Operation *, Cots cots, Out &out) {
  out.push_back(gb.neg(cots[0]));
  return success();
}

LogicalResult expRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  return unary(gb, op, cots, out, [](Value, Value y) { return y; });
}

LogicalResult logRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  out.push_back(gb.div(cots[0], op->getOperand(0)));
  return success();
}

LogicalResult tanhRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  return unary(gb, op, cots, out, [&](Value, Value y) {
    return gb.sub(gb.scalarLike(y, 1.0), gb.mul(y, y));
  });
}

// d sqrt(x) = 1 / (2 sqrt(x)).
LogicalResult sqrtRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  Value y = op->getResult(0);
  out.push_back(gb.div(cots[0], gb.mul(y, gb.scalarLike(y, 2.0))));
  return success();
}

// d x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3.
LogicalResult rsqrtRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  return unary(gb, op, cots, out, [&](Value, Value y) {
    return gb.mul(gb.mul(gb.mul(y, y), y), gb.scalarLike(y, -0.5));
  });
}

// 1 where x > 0, else 0 (0 at x = 0).
LogicalResult reluRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  return unary(gb, op, cots, out, [&](Value x, Value) {
    Value notPositive =
        GreaterEqualOp::create(gb.b, gb.loc, gb.scalarLike(x, 0.0), x);
    return gb.sub(gb.scalarLike(x, 1.0), notPositive);
  });
}

// gelu(x) = 0.5 x (1 + t), t = tanh(u), u = c (x + a x^3):
// gelu'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2).
LogicalResult geluRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  if (gb.fusedGelu) {
    out.push_back(GeluGradOp::create(gb.b, gb.loc, op->getOperand(0), cots[0]));
    return success();
  }
  return unary(gb, op, cots, out, [&](Value x, Value) {
    const double c = std::sqrt(2.0 / M_PI), a = 0.044715;
    Value x2 = gb.mul(x, x);
    Value inner = gb.add(x, gb.mul(gb.scalarLike(x, a), gb.mul(x2, x)));
    Value t = TanhOp::create(gb.b, gb.loc, gb.mul(inner, gb.scalarLike(x, c)));
    Value half = gb.scalarLike(x, 0.5), one = gb.scalarLike(x, 1.0);
    Value first = gb.mul(half, gb.add(one, t));
    Value dInner = gb.add(one, gb.mul(gb.scalarLike(x, 3.0 * a), x2));
    Value second = gb.mul(gb.mul(gb.mul(half, x), gb.sub(one, gb.mul(t, t))),
                          gb.mul(gb.scalarLike(x, c), dInner));
    return gb.add(first, second);
  });
}

// silu(x) = x s, s = 1 / (1 + exp(-x)): silu'(x) = s (1 + x (1 - s)).
LogicalResult siluRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  return unary(gb, op, cots, out, [&](Value x, Value) {
    Value one = gb.scalarLike(x, 1.0);
    Value s = gb.div(one, gb.add(one, ExpOp::create(gb.b, gb.loc, gb.neg(x))));
    return gb.mul(s, gb.add(one, gb.mul(x, gb.sub(one, s))));
  });
}

LogicalResult sinRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  return unary(gb, op, cots, out, [&](Value x, Value) -> Value {
    return CosOp::create(gb.b, gb.loc, x);
  });
}

LogicalResult cosRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  return unary(gb, op, cots, out, [&](Value x, Value) {
    return gb.neg(SinOp::create(gb.b, gb.loc, x));
  });
}

// d erf(x) = 2/sqrt(pi) exp(-x^2); erfc = 1 - erf has the negation.
Value erfDerivative(GradBuilder &gb, Value x, double sign) {
  const double c = sign * 2.0 / std::sqrt(M_PI);
  return gb.mul(gb.scalarLike(x, c),
                ExpOp::create(gb.b, gb.loc, gb.neg(gb.mul(x, x))));
}

LogicalResult erfRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  return unary(gb, op, cots, out,
               [&](Value x, Value) { return erfDerivative(gb, x, 1.0); });
}

LogicalResult erfcRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  return unary(gb, op, cots, out,
               [&](Value x, Value) { return erfDerivative(gb, x, -1.0); });
}

// d x^p = p x^(p-1).
LogicalResult powRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  auto pow = cast<PowOp>(op);
  double p = pow.getExponent().convertToDouble();
  Value x = pow.getInput();
  if (p == 0.0) {
    out.push_back(Value());
    return success();
  }
  Value derivative = gb.scalarLike(x, p);
  if (p != 1.0)
    derivative = gb.mul(derivative, PowOp::create(gb.b, gb.loc, x,
                                                  gb.b.getF64FloatAttr(p - 1)));
  out.push_back(gb.mul(cots[0], derivative));
  return success();
}

/// Pushes the contributions of a binary op: `dLhs`/`dRhs` shaped like the
/// result, summed back to each operand.
void pushBinary(GradBuilder &gb, Operation *op, Value dLhs, Value dRhs,
                Out &out) {
  Value ds[] = {dLhs, dRhs};
  for (auto [operand, d] : llvm::zip(op->getOperands(), ds))
    out.push_back(d && isFloatTensor(operand)
                      ? gb.unbroadcast(d, operand.getType())
                      : Value());
}

LogicalResult addRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  pushBinary(gb, op, cots[0], cots[0], out);
  return success();
}

LogicalResult subRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  pushBinary(gb, op, cots[0], gb.neg(cots[0]), out);
  return success();
}

LogicalResult mulRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  Value a = op->getOperand(0), c = op->getOperand(1);
  pushBinary(gb, op, gb.mul(cots[0], c), gb.mul(cots[0], a), out);
  return success();
}

// y = a / c: da = dy / c, dc = -dy y / c.
LogicalResult divRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  Value c = op->getOperand(1), y = op->getResult(0);
  pushBinary(gb, op, gb.div(cots[0], c), gb.neg(gb.div(gb.mul(cots[0], y), c)),
             out);
  return success();
}

/// `lhsWins` is 1 where lhs receives the cotangent, 0 where rhs does.
LogicalResult selectRule(GradBuilder &gb, Operation *op, Cots cots, Out &out,
                         Value lhsWins) {
  Value toLhs = gb.mul(cots[0], lhsWins);
  Value toRhs = gb.mul(cots[0], gb.sub(gb.scalarLike(lhsWins, 1.0), lhsWins));
  pushBinary(gb, op, toLhs, toRhs, out);
  return success();
}

LogicalResult maximumRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  Value mask = GreaterEqualOp::create(gb.b, gb.loc, op->getOperand(0),
                                      op->getOperand(1));
  return selectRule(gb, op, cots, out, mask);
}

LogicalResult minimumRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  Value mask = GreaterEqualOp::create(gb.b, gb.loc, op->getOperand(1),
                                      op->getOperand(0));
  return selectRule(gb, op, cots, out, mask);
}

/// Piecewise constant (greater_equal), without float operands (one_hot,
/// constants) or a stop_gradient (identity in value, zero in gradient): no
/// contribution.
LogicalResult zeroRule(GradBuilder &, Operation *op, Cots, Out &out) {
  out.append(op->getNumOperands(), Value());
  return success();
}

// The cotangent is cast back to the input's type (f8 saturates: a gradient
// beyond the range is clamped rather than turned into NaN). Integer inputs
// get none; the driver rejects float-to-integer casts on a differentiable
// path before any rule runs.
LogicalResult castRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  Value input = op->getOperand(0);
  if (!isFloatTensor(input) || !cots[0]) {
    out.push_back(Value());
    return success();
  }
  BoolAttr saturate;
  if (isFloat8(tensorType(input).getElementType()))
    saturate = gb.b.getBoolAttr(true);
  out.push_back(
      CastOp::create(gb.b, gb.loc, input.getType(), cots[0], saturate));
  return success();
}

// The cotangent goes to the chosen side, elementwise, by the same mask; the
// mask itself is piecewise constant and gets none.
LogicalResult selectRule(GradBuilder &gb, Operation *op, Cots cots, Out &out) {
  auto select = cast<SelectOp>(op);
  Value zeros = gb.zeros(select.getType());
  out.push_back(Value());
  out.push_back(
      SelectOp::create(gb.b, gb.loc, select.getCond(), cots[0], zeros));
  out.push_back(
      SelectOp::create(gb.b, gb.loc, select.getCond(), zeros, cots[0]));
  return success();
}

// The backward pass crosses the boundary with its own nn.stage_end over the
// float cotangents, so partitioning sees where the backward of a stage ends.
LogicalResult stageEndRule(GradBuilder &gb, Operation *op, Cots cots,
                           Out &out) {
  SmallVector<Value> carried;
  for (Value cot : cots)
    if (cot)
      carried.push_back(cot);
  if (carried.empty()) {
    out.append(op->getNumOperands(), Value());
    return success();
  }
  auto marker = StageEndOp::create(gb.b, gb.loc, carried);
  unsigned next = 0;
  for (Value cot : cots)
    out.push_back(cot ? marker.getResult(next++) : Value());
  return success();
}

} // namespace

void tandem::nn::autodiff::registerElementwiseGradients(GradRuleMap &rules) {
  rules[NegOp::getOperationName()] = negRule;
  rules[ExpOp::getOperationName()] = expRule;
  rules[LogOp::getOperationName()] = logRule;
  rules[TanhOp::getOperationName()] = tanhRule;
  rules[SqrtOp::getOperationName()] = sqrtRule;
  rules[RsqrtOp::getOperationName()] = rsqrtRule;
  rules[ReluOp::getOperationName()] = reluRule;
  rules[GeluOp::getOperationName()] = geluRule;
  rules[SiluOp::getOperationName()] = siluRule;
  rules[SinOp::getOperationName()] = sinRule;
  rules[CosOp::getOperationName()] = cosRule;
  rules[ErfOp::getOperationName()] = erfRule;
  rules[ErfcOp::getOperationName()] = erfcRule;
  rules[PowOp::getOperationName()] = powRule;
  rules[AddOp::getOperationName()] = addRule;
  rules[SubOp::getOperationName()] = subRule;
  rules[MulOp::getOperationName()] = mulRule;
  rules[DivOp::getOperationName()] = divRule;
  rules[MaximumOp::getOperationName()] = maximumRule;
  rules[MinimumOp::getOperationName()] = minimumRule;
  rules[GreaterEqualOp::getOperationName()] = zeroRule;
  rules[CastOp::getOperationName()] = castRule;
  rules[SelectOp::getOperationName()] = selectRule;
  rules[ConstantOp::getOperationName()] = zeroRule;
  rules[StopGradientOp::getOperationName()] = zeroRule;
  rules[OneHotOp::getOperationName()] = zeroRule;
  rules[ParamOp::getOperationName()] = zeroRule;
  rules[StageEndOp::getOperationName()] = stageEndRule;
}
