//===- EmulationTest.cpp - emulated CUDA kernels vs the evaluator ---------===//
//
// Every elementwise op the CUDA emitter lowers, alone and fused, in f32,
// bf16 and f16: the emitted CUDA C++ is built for the host emulation
// (KernelPrelude.h's macro layer; the arithmetic the GPU runs), loaded and
// run on random inputs, and every element is compared with the evaluator,
// which computes in double and rounds each op to its type. The bounds are
// the arithmetic's (docs/cuda-backend.md, "Numerics"):
//
// - exact: +, -, *, /, sqrt, neg, max, min, relu, compare, select, casts and
//   broadcasts of f32, bf16 or f16 values are IEEE operations rounded once
//   to the result type, in f32 (which has at least 2p + 2 bits for bf16 and
//   f16, so rounding through it is exact) as in the evaluator's double;
// - our f32 transcendentals within n units of 2^-24 relative (exp 4, log 4,
//   tanh 6, sin and cos 4, silu 8, rsqrt 2, pow 16 for the general case),
//   and gelu within 12 units of 2^-24 · max(|x|, 1) absolute (1 + tanh
//   cancels for negative x); narrower types add half a unit of their last
//   place, where the f32 result and the exact one round to neighbors.
//
//===----------------------------------------------------------------------===//

#include "EmulationBuild.h"

#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Runtime/FragmentABI.h"
#include "tandem/Support/Codec.h"
#include "tandem/Support/Rounding.h"
#include "tandem/Target/CUDA/CUDABackend.h"
#include "tandem/Target/CUDA/CudaEmitter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

using namespace tandem;
using tandem::cpu::testing::InputRange;

namespace {

enum class Bound {
  Exact,
  Relative,
  AbsoluteByInput,
  SumOfMagnitudes,
  /// Units of 2^-24 · max(|exact|, 1).
  AbsoluteByResult,
  /// Units of 2^-24 · `scale`.
  Absolute
};

struct Case {
  std::string name;
  /// The body computing %y from %x (and %z, %b where named).
  std::string body;
  Bound bound = Bound::Exact;
  /// Units of 2^-24 (Relative, AbsoluteByInput).
  double units = 0;
  InputRange range = {};
  /// The type of %y; empty: %x's.
  std::string resultType = {};
  /// SumOfMagnitudes: the terms each result sums (a mean's division).
  int64_t terms = 1;
  /// Absolute: the magnitude the errors are relative to.
  double scale = 1;
  /// The function's signature and body after its name, when the case has
  /// arguments of its own (the first is still the one errors report).
  std::string function = {};
  /// Parameters the function reads with nn.param (name, type): declared in
  /// the module, passed in the slots after the arguments.
  std::vector<std::pair<std::string, std::string>> parameters = {};
};

InputRange positive() { return {0.25, 4.0, 4}; }

/// Fused attention's error bounds in units of 2^-24 absolute, for heads of
/// `hd`, `keys` keys a query row and `queries` query rows a key row's
/// gradient sums (Tq times the group of query heads a key and value head
/// serves), inputs in [-1, 1], scale 1/sqrt(hd), element type `t`
/// (docs/cuda-backend.md, "Attention"). Every magnitude is at most 1 but a
/// score's, at most hd·scale = sqrt(hd), and the log-sum-exp's, at most
/// sqrt(hd) + log T (below 8 in these cases). A score is off by
/// ds = (hd^2 + 2 hd) scale (the fma chain of hd terms of partial sums up
/// to hd, the scale and its rounding); the output y by 2 ds + 12 T + 6 (the
/// online softmax rescales the running sum and the output up to T times,
/// an exp and a product each) and the row's sum relatively by as much, so
/// the log-sum-exp max + log(sum) by ds + y + 4 log T + 8 (the maximum's
/// score, the sum through the log, tk_log's 4 units relative of a log
/// below log T, the sum's rounding). The gradients take y and the
/// log-sum-exp of the forward pass, and in a narrow type the two sides may
/// round y to neighbouring values: one ulp of 1 in t apart (2^17 units in
/// bf16, 2^14 in f16). A probability e^{score - lse} is off relatively by
/// ep = ds + lse + 18 (the argument's errors, its rounding below 16,
/// exp's own); D = dy·y by ed = hd (y + that ulp) + hd^2; dP = dy·v by
/// hd^2; and per row a term scale (2 hd ep + hd^2 + ed + 6 hd)
/// (|dP - D| <= 2 hd) before the sums over keys (dq) or queries (dk, dv).
/// On the tensor cores (bf16 and f16 heads of a multiple of 16:
/// TensorCorePrelude.h) the forward pass multiplies V by P rounded to t,
/// each probability off relatively by t's unit roundoff (2^-9 in bf16,
/// 2^-11 in f16: 2^15 and 2^13 units), so y by as much again, the
/// probabilities summing to the row's sum; in f16 a probability below
/// 2^-14 is a subnormal, off by up to 2^-25 absolute, at most T/2 units
/// over a row of a sum at least 1. The row's sum takes the unrounded
/// probabilities: the log-sum-exp's bound is the scalar kernel's. Its
/// backward rounds dS = P (dP - D) (|dS| <= 2 hd P) before dq's and dk's
/// products and P before dv's: dq off by scale 2 hd unit more (its row's
/// probabilities sum to 1), dk by nq scale 2 hd unit and dv by nq unit
/// (each of nq probabilities at most 1), f16's subnormals 1 unit a term.
struct AttentionBounds {
  double y, lse, dq, dk, dv;
  AttentionBounds(int64_t headDim, int64_t keyCount, int64_t queryCount,
                  const std::string &t) {
    const double hd = static_cast<double>(headDim), scale = 1 / std::sqrt(hd),
                 keys = static_cast<double>(keyCount),
                 nq = static_cast<double>(queryCount);
    const double narrowY = t == "bf16"  ? std::ldexp(1.0, 17)
                           : t == "f16" ? std::ldexp(1.0, 14)
                                        : 0.0;
    double ds = (hd * hd + 2 * hd) * scale;
    y = 2 * ds + 12 * keys + 6;
    lse = ds + y + 4 * std::log(keys) + 8;
    // On the tensor cores: a probability or dS rounded to t is off by up
    // to `unit` of its magnitude (plus `tiny` absolute in f16).
    bool tensorCores = headDim % 16 == 0 && t != "f32";
    double unit = t == "bf16" ? std::ldexp(1.0, 15) : std::ldexp(1.0, 13);
    if (tensorCores)
      y += unit + (t == "f16" ? keys / 2 : 0);
    double ep = ds + lse + 18, ed = hd * (y + narrowY) + hd * hd;
    double perRow = scale * (2 * hd * ep + hd * hd + ed + 6 * hd);
    dq = perRow + keys * scale * 2 * hd;
    dk = nq * perRow + nq * nq * scale * 2 * hd;
    dv = nq * (ep + nq);
    if (tensorCores) {
      // dS (|dS| <= 2 hd P) and P rounded before their products: dq's sum
      // over keys of probabilities summing to 1, dk's and dv's over nq
      // queries of probabilities at most 1 each.
      double tiny = t == "f16" ? 1.0 : 0.0;
      dq += scale * 2 * hd * unit + keys * tiny;
      dk += nq * (scale * 2 * hd * unit + tiny);
      dv += nq * (unit + tiny);
    }
  }
};

/// The cases for element type `t` ("f32", "bf16", "f16").
std::vector<Case> cases(const std::string &t) {
  std::string x = "tensor<4x333x" + t + ">", row = "tensor<333x" + t + ">";
  std::vector<Case> all;
  auto unary = [&](const char *op, Bound bound, double units,
                   InputRange range = {}) {
    all.push_back({op, llvm::formatv("%y = nn.{0} %x : {1}", op, x).str(),
                   bound, units, range});
  };
  unary("neg", Bound::Exact, 0);
  unary("relu", Bound::Exact, 0);
  unary("sqrt", Bound::Exact, 0, positive());
  unary("exp", Bound::Relative, 4, {-20.0, 20.0, 4});
  unary("log", Bound::Relative, 4, {1e-3, 100.0, 4});
  unary("tanh", Bound::Relative, 6, {-6.0, 6.0, 4});
  unary("sin", Bound::Relative, 4, {-100.0, 100.0, 4});
  unary("cos", Bound::Relative, 4, {-100.0, 100.0, 4});
  unary("silu", Bound::Relative, 8, {-8.0, 8.0, 4});
  unary("rsqrt", Bound::Relative, 2, positive());
  unary("gelu", Bound::AbsoluteByInput, 12, {-8.0, 8.0, 4});
  // In double, rounded once to f32: within one unit in the last place of
  // the evaluator's, 2 units of 2^-24 relative; erfc's range keeps f32
  // results normal (erfc(9) = 4e-37).
  unary("erf", Bound::Relative, 2, {-4.0, 4.0, 4});
  unary("erfc", Bound::Relative, 2, {-3.0, 9.0, 4});
  unary("stop_gradient", Bound::Exact, 0);
  // GELU's gradient, x and dy in [-2, 2]: gelu'(x) (at most 1.13) within 45
  // units absolute (see gemm_dgelu below), times |dy| <= 2, and the
  // product's rounding.
  {
    Case g = {"gelu_grad", "", Bound::AbsoluteByResult, 96, {-2.0, 2.0, 4}};
    g.function = llvm::formatv("(%x: {0}, %d: {0}) -> {0} {{\n"
                               "  %y = nn.gelu_grad %x, %d : {0}\n"
                               "  return %y : {0}\n}\n",
                               x)
                     .str();
    all.push_back(g);
  }
  all.push_back({"pow3", "%y = nn.pow %x, 3.0 : " + x, Bound::Relative, 2});
  all.push_back({"pow_general", "%y = nn.pow %x, 2.5 : " + x, Bound::Relative,
                 16, positive()});
  for (const char *op : {"add", "sub", "mul", "div", "maximum", "minimum"})
    all.push_back(
        {op,
         llvm::formatv("%y = nn.{0} %x, %b : {1}, {2} -> {1}", op, x, row)
             .str(),
         Bound::Exact, 0,
         std::string(op) == "div" ? positive() : InputRange{}});
  all.push_back({"greater_equal_select",
                 "%g = nn.greater_equal %x, %z : " + x + ", " + x + " -> " + x +
                     "\n  %y = nn.select %g, %x, %z : " + x + ", " + x,
                 Bound::Exact, 0});
  all.push_back({"broadcast_to",
                 "%y = nn.broadcast_to %b : " + row + " to " + x, Bound::Exact,
                 0});
  // A splat constant, broadcasting, and a chain rounded at every op.
  all.push_back({"fused_chain",
                 "%c = nn.constant dense<1.5> : tensor<" + t + ">\n" +
                     "  %s = nn.add %x, %b : " + x + ", " + row + " -> " + x +
                     "\n  %m = nn.mul %s, %c : " + x + ", tensor<" + t +
                     "> -> " + x + "\n  %y = nn.tanh %m : " + x,
                 Bound::Relative,
                 6,
                 {-2.0, 2.0, 4}});
  // Reductions. Sums carry the rounding of each addition on the way, as
  // many as the combining tree is deep: a row of 333 takes 2 strided terms
  // per thread, 5 butterfly steps and 7 more over the warps (14; 2 more for
  // a mean's division and the final rounding); all 1332 elements take 6 +
  // 12 (+2); a column of 4, 4 (+2). The bound is that many units of 2^-24
  // times the sum of the magnitudes (here of the whole input, which bounds
  // every output's). A max is exact.
  auto reduce = [&](const char *op, const char *axes, const std::string &to,
                    double units, int64_t terms, bool keep = false) {
    bool isMax = std::string(op) == "reduce_max";
    std::string name = std::string(op) + "_" + (keep ? "keep" : "") + axes;
    std::replace(name.begin(), name.end(), ',', '_');
    name.erase(std::remove(name.begin(), name.end(), ' '), name.end());
    all.push_back({name,
                   llvm::formatv("%y = nn.{0} %x [{1}]{2} : {3} -> {4}", op,
                                 axes, keep ? " keepdims" : "", x, to)
                       .str(),
                   isMax ? Bound::Exact : Bound::SumOfMagnitudes,
                   units,
                   {},
                   to,
                   terms});
  };
  std::string col = "tensor<4x" + t + ">", one = "tensor<" + t + ">";
  reduce("reduce_sum", "1", col, 16, 1);
  reduce("reduce_sum", "0", row, 6, 1);
  reduce("reduce_sum", "0, 1", one, 20, 1);
  reduce("reduce_mean", "1", col, 16, 333);
  reduce("reduce_mean", "0, 1", "tensor<1x1x" + t + ">", 20, 1332, true);
  reduce("reduce_max", "1", col, 0, 1);
  reduce("reduce_max", "0", row, 0, 1);
  // Split reductions (two passes): 3 rows of 40000 take 5 chunks of 8192
  // per row, each a row kernel's tree (32 + 5 + 7), then the partials'
  // (1 + 5 + 7): 57 (+2). 24 columns of 1000 terms take 16 chunks of 64
  // terms, then the 16 partials: 80 (+2).
  auto split = [&](const char *op, const std::string &from, const char *axes,
                   const std::string &to, double units, int64_t terms) {
    Case c = {std::string(op) + "_split_" + (axes[0] == '1' ? "rows" : "cols"),
              "",
              units == 0 ? Bound::Exact : Bound::SumOfMagnitudes,
              units,
              {},
              to,
              terms};
    c.function = llvm::formatv("(%x: {0}) -> {1} {{\n"
                               "  %y = nn.{2} %x [{3}] : {0} -> {1}\n"
                               "  return %y : {1}\n}\n",
                               from, to, op, axes)
                     .str();
    all.push_back(c);
  };
  std::string longRows = "tensor<3x40000x" + t + ">",
              manyTerms = "tensor<1000x24x" + t + ">";
  split("reduce_sum", longRows, "1", "tensor<3x" + t + ">", 59, 1);
  split("reduce_max", longRows, "1", "tensor<3x" + t + ">", 0, 1);
  split("reduce_mean", manyTerms, "0", "tensor<24x" + t + ">", 82, 1000);
  split("reduce_max", manyTerms, "0", "tensor<24x" + t + ">", 0, 1);
  // Row kernels along the last dimension (rows of 333: a combining tree of
  // depth d = 2 + 5 + 7 = 14 per pass). softmax e^{x-m}/s for x in [-4, 4]:
  // x - m rounds with at most 8 units absolute, so e^{x-m} carries 8 + 4
  // relative, s as much plus d, the division 1: 40. log_softmax
  // (x - m) - log s: the same terms absolute, plus log's 4 relative to
  // log s and the final subtraction: 50 units of max(|y|, 1). rms_norm
  // x·w/sqrt(Σx²/n + ε): the sum's d + 2, halved by the square root, then
  // the root, the division and two products: 16 relative. layer_norm
  // (x - μ)·w/sqrt(var + ε) + b with |x|, |w|, |b| <= 2 and var near 4/3:
  // terms below 16 in magnitude, each pass's d + 2 and the products: 26
  // units of 16, absolute (the subtraction cancels).
  all.push_back({"softmax",
                 "%y = nn.softmax %x {axis = 1 : i64} : " + x,
                 Bound::Relative,
                 40,
                 {-4.0, 4.0, 4}});
  all.push_back({"log_softmax",
                 "%y = nn.log_softmax %x {axis = 1 : i64} : " + x,
                 Bound::AbsoluteByResult,
                 50,
                 {-4.0, 4.0, 4}});
  // Along another axis a thread sums its column in order: the same terms
  // with a depth of n - 1 = 3 instead of 14, so the same bounds hold. A
  // middle axis of a 3-D tensor too (columns at a stride of 7).
  all.push_back({"softmax_axis0",
                 "%y = nn.softmax %x {axis = 0 : i64} : " + x,
                 Bound::Relative,
                 40,
                 {-4.0, 4.0, 4}});
  all.push_back({"log_softmax_axis0",
                 "%y = nn.log_softmax %x {axis = 0 : i64} : " + x,
                 Bound::AbsoluteByResult,
                 50,
                 {-4.0, 4.0, 4}});
  {
    std::string cube = "tensor<3x5x7x" + t + ">";
    Case middle = {"softmax_axis_middle", "",  Bound::Relative, 40,
                   {-4.0, 4.0, 4},        cube};
    middle.function = "(%x: " + cube + ") -> " + cube +
                      " {\n  %y = nn.softmax %x {axis = 1 : i64} : " + cube +
                      "\n  return %y : " + cube + "\n}\n";
    all.push_back(middle);
  }
  all.push_back(
      {"rms_norm",
       "%y = nn.rms_norm %x, %b {epsilon = 1.0e-05 : f64} : " + x + ", " + row,
       Bound::Relative, 16});
  Case layer = {"layer_norm",
                "%y = nn.layer_norm %x, %b, %b {epsilon = 1.0e-05 : f64} : " +
                    x + ", " + row + ", " + row,
                Bound::Absolute, 26};
  layer.scale = 16;
  all.push_back(layer);
  // The normalizations' gradients, dx and dy·x̂ (x, w, dy in [-2, 2], 333 per
  // row, the variance near 4/3 so r near 0.87; the evaluator in double,
  // rounded once). Each of the row's sums rounds at most 15 times along a
  // term's path (2 strided adds, 5 butterfly steps, 8 warps in order):
  // within 15 units of its terms' magnitudes. Through r (about 200 units
  // relative), x̂ (|x̂| <= 3.5, under 800 units), the sums of ĝ (|ĝ| <= 4)
  // and ĝ·x̂ (<= 14, about 3300 units) and dx (<= 57): under 32768 units
  // absolute; dy·x̂ (<= 7) is within 2000; RMS's terms are smaller.
  for (const char *norm : {"layer_norm_grad", "rms_norm_grad"}) {
    Case grad = {norm, "", Bound::Absolute, 32768, {}, x};
    grad.function =
        llvm::formatv("(%x: {0}, %w: {1}, %g: {0}) -> ({0}, {0}) {{\n"
                      "  %dx, %terms = nn.{2} %x, %w, %g {{epsilon = 1.0e-05 "
                      ": f64} : {0}, {1}, {0}\n"
                      "  return %dx, %terms : {0}, {0}\n}\n",
                      x, row, norm)
            .str();
    all.push_back(grad);
  }
  // The same with the residual stream's gradient added in the row kernel
  // (a row epilogue: dx + r rounded once; r in [-2, 2]). The evaluator
  // rounds dx to the type before the add, the kernel does not: besides the
  // bound above, up to half an ulp of |dx| < 64, 2^-19 in f32, 2^-6 in f16,
  // 2^-3 in bf16 (32, 2^18 and 2^21 units).
  double dxUlp = t == "f32" ? 32 : t == "f16" ? 262144 : 2097152;
  for (const char *norm : {"layer_norm_grad", "rms_norm_grad"}) {
    Case grad = {std::string(norm) + "_residual",
                 "",
                 Bound::Absolute,
                 32768 + dxUlp,
                 {},
                 x};
    grad.function =
        llvm::formatv("(%x: {0}, %w: {1}, %g: {0}, %r: {0}) -> ({0}, {0}) {{\n"
                      "  %dx, %terms = nn.{2} %x, %w, %g {{epsilon = 1.0e-05 "
                      ": f64} : {0}, {1}, {0}\n"
                      "  %s = nn.add %r, %dx : {0}, {0} -> {0}\n"
                      "  return %s, %terms : {0}, {0}\n}\n",
                      x, row, norm)
            .str();
    all.push_back(grad);
  }
  // Copies: exact.
  all.push_back(
      {"transpose",
       "%y = nn.transpose %x, [1, 0] : " + x + " -> tensor<333x4x" + t + ">",
       Bound::Exact,
       0,
       {},
       "tensor<333x4x" + t + ">"});
  all.push_back({"slice",
                 "%y = nn.slice %x [1, 5] to [4, 300] step [2, 3] : " + x +
                     " -> tensor<2x99x" + t + ">",
                 Bound::Exact,
                 0,
                 {},
                 "tensor<2x99x" + t + ">"});
  all.push_back({"concat",
                 "%y = nn.concat %x, %z {axis = 1 : i64} : (" + x + ", " + x +
                     ") -> tensor<4x666x" + t + ">",
                 Bound::Exact,
                 0,
                 {},
                 "tensor<4x666x" + t + ">"});
  all.push_back({"split_concat",
                 "%s:2 = nn.split %x {axis = 1 : i64, sizes = array<i64: 111, "
                 "222>} : " +
                     x + " -> tensor<4x111x" + t + ">, tensor<4x222x" + t +
                     ">\n  %y = nn.concat %s#1, %s#0 {axis = 1 : i64} : "
                     "(tensor<4x222x" +
                     t + ">, tensor<4x111x" + t + ">) -> " + x,
                 Bound::Exact, 0});
  // Cross-entropy over rows of 333 with targets anywhere in the row. The
  // loss per position m + log s - x_t: the softmax terms above (d + 12
  // units) absolutely, in magnitudes below 16 for |x| <= 4; then the mean
  // over the 4 positions (a tree of depth 13): 48 units of 16. The gradient
  // (e^{x-m}/s - onehot)·g/P: the softmax's 40 units relative to a
  // probability at most 1, the subtraction and the product: 48 units of
  // |g|/P <= 2/4.
  InputRange targets = {-4.0, 4.0, 333};
  std::string ty = "tensor<" + t + ">";
  Case loss = {"cross_entropy", "", Bound::Absolute, 48, targets, ty};
  loss.scale = 16;
  loss.function = llvm::formatv("(%x: {0}, %t: tensor<4xi32>) -> {1} {{\n"
                                "  %y = nn.cross_entropy %x, %t : {0}, "
                                "tensor<4xi32> -> {1}\n  return %y : {1}\n}\n",
                                x, ty)
                      .str();
  all.push_back(loss);
  Case grad = {"cross_entropy_grad", "", Bound::Absolute, 48, targets, x};
  grad.scale = 0.5;
  grad.function =
      llvm::formatv("(%x: {0}, %t: tensor<4xi32>, %g: {1}) -> {0} {{\n"
                    "  %y = nn.cross_entropy_grad %x, %t, %g : {0}, "
                    "tensor<4xi32>, {1} -> {0}\n  return %y : {0}\n}\n",
                    x, ty)
          .str();
  all.push_back(grad);
  // The same with the loss's own cotangent, the constant 1 autodiff writes:
  // a constant operand of a kernel that reads memory lands in scratch.
  // |g|/P = 1/4.
  Case gradOne = {
      "cross_entropy_grad_constant", "", Bound::Absolute, 48, targets, x};
  gradOne.scale = 0.25;
  gradOne.function =
      llvm::formatv("(%x: {0}, %t: tensor<4xi32>) -> {0} {{\n"
                    "  %g = nn.constant dense<1.0> : {1}\n"
                    "  %y = nn.cross_entropy_grad %x, %t, %g : {0}, "
                    "tensor<4xi32>, {1} -> {0}\n  return %y : {0}\n}\n",
                    x, ty)
          .str();
  all.push_back(gradOne);
  // A padded vocabulary: the first 300 of the 333 columns are classes, the
  // rest no class (the softmax skips them, their gradient is 0; the
  // evaluator's 0 is what the bound compares to). The bounds above hold.
  InputRange classTargets = {-4.0, 4.0, 300};
  Case padded = {
      "cross_entropy_classes", "", Bound::Absolute, 48, classTargets, ty};
  padded.scale = 16;
  padded.function =
      llvm::formatv("(%x: {0}, %t: tensor<4xi32>) -> {1} {{\n"
                    "  %y = nn.cross_entropy %x, %t {{classes = 300 : i64} "
                    ": {0}, tensor<4xi32> -> {1}\n  return %y : {1}\n}\n",
                    x, ty)
          .str();
  all.push_back(padded);
  Case paddedGrad = {
      "cross_entropy_grad_classes", "", Bound::Absolute, 48, classTargets, x};
  paddedGrad.scale = 0.5;
  paddedGrad.function =
      llvm::formatv("(%x: {0}, %t: tensor<4xi32>, %g: {1}) -> {0} {{\n"
                    "  %y = nn.cross_entropy_grad %x, %t, %g {{classes = 300 "
                    ": i64} : {0}, tensor<4xi32>, {1} -> {0}\n"
                    "  return %y : {0}\n}\n",
                    x, ty)
          .str();
  all.push_back(paddedGrad);
  // Embeddings: a gather (exact) and its gradient, each output the sum of
  // at most 36 rows in position order (f32): 38 units of the cotangent's
  // magnitudes.
  std::string table = "tensor<37x8x" + t + ">",
              rows = "tensor<4x9x8x" + t + ">";
  Case gather = {"embedding", "", Bound::Exact, 0, {-2.0, 2.0, 37}, rows};
  gather.function =
      llvm::formatv("(%x: {0}, %t: tensor<4x9xi32>) -> {1} {{\n"
                    "  %y = nn.embedding %x, %t : {0}, tensor<4x9xi32> -> "
                    "{1}\n  return %y : {1}\n}\n",
                    table, rows)
          .str();
  all.push_back(gather);
  Case scatter = {"embedding_grad", "",   Bound::SumOfMagnitudes, 38,
                  {-2.0, 2.0, 37},  table};
  scatter.function =
      llvm::formatv("(%x: {1}, %t: tensor<4x9xi32>) -> {0} {{\n"
                    "  %y = nn.embedding_grad %x, %t : {1}, tensor<4x9xi32> "
                    "-> {0}\n  return %y : {0}\n}\n",
                    table, rows)
          .str();
  all.push_back(scatter);
  // one_hot: exactly 0 and 1 (ids in [0, 7)), for i32 and i64 ids; with
  // mul and reduce_sum it picks an element per row (take_along_axis),
  // exactly: one nonzero product per sum.
  {
    std::string hot = "tensor<4x9x7x" + t + ">";
    Case oneHot = {"one_hot", "", Bound::Exact, 0, {-2.0, 2.0, 7}, hot};
    oneHot.function =
        llvm::formatv("(%t: tensor<4x9xi32>) -> {0} {{\n"
                      "  %y = nn.one_hot %t {{classes = 7 : i64} : "
                      "tensor<4x9xi32> -> {0}\n  return %y : {0}\n}\n",
                      hot)
            .str();
    all.push_back(oneHot);
    std::string logits = "tensor<4x7x" + t + ">",
                picked = "tensor<4x" + t + ">";
    Case take = {"one_hot_take", "", Bound::Exact, 0, {-2.0, 2.0, 7}, picked};
    take.function = llvm::formatv("(%x: {0}, %t: tensor<4xi64>) -> {1} {{\n"
                                  "  %h = nn.one_hot %t {{classes = 7 : i64} : "
                                  "tensor<4xi64> -> {0}\n"
                                  "  %m = nn.mul %h, %x : {0}, {0} -> {0}\n"
                                  "  %y = nn.reduce_sum %m [1] : {0} -> {1}\n"
                                  "  return %y : {1}\n}\n",
                                  logits, picked)
                        .str();
    all.push_back(take);
  }
  // The same over a padded table: 30 of its 37 rows are the vocabulary
  // (the ids are drawn in [0, 30); the gradient's last 7 rows are zero).
  Case paddedGather = {"embedding_rows", "",  Bound::Exact, 0,
                       {-2.0, 2.0, 30},  rows};
  paddedGather.function =
      llvm::formatv("(%x: {0}, %t: tensor<4x9xi32>) -> {1} {{\n"
                    "  %y = nn.embedding %x, %t {{rows = 30 : i64} : {0}, "
                    "tensor<4x9xi32> -> {1}\n  return %y : {1}\n}\n",
                    table, rows)
          .str();
  all.push_back(paddedGather);
  Case paddedScatter = {"embedding_grad_rows", "",   Bound::SumOfMagnitudes, 38,
                        {-2.0, 2.0, 30},       table};
  paddedScatter.function =
      llvm::formatv("(%x: {1}, %t: tensor<4x9xi32>) -> {0} {{\n"
                    "  %y = nn.embedding_grad %x, %t {{rows = 30 : i64} : "
                    "{1}, tensor<4x9xi32> -> {0}\n  return %y : {0}\n}\n",
                    table, rows)
          .str();
  all.push_back(paddedScatter);
  // A vocabulary of 600 ids: the scan of the counts gives each of the
  // block's 256 threads a chunk of 3 ids (the last threads none); 40
  // positions, at most 40 rows per id: 42 units.
  Case wide = {"embedding_grad_wide",  "",
               Bound::SumOfMagnitudes, 42,
               {-2.0, 2.0, 600},       "tensor<600x8x" + t + ">"};
  wide.function =
      llvm::formatv("(%x: tensor<5x8x8x{0}>, %t: tensor<5x8xi32>) -> "
                    "tensor<600x8x{0}> {{\n"
                    "  %y = nn.embedding_grad %x, %t : tensor<5x8x8x{0}>, "
                    "tensor<5x8xi32> -> tensor<600x8x{0}>\n"
                    "  return %y : tensor<600x8x{0}>\n}\n",
                    t)
          .str();
  all.push_back(wide);
  // GEMMs: each output a dot product of k terms summed in f32 in some
  // order, within k units of 2^-24 of the sum of the terms' magnitudes
  // (Higham's gamma_k; f32 products of bf16 and f16 values are exact),
  // plus the evaluator's rounding of the exact value to f32 (one unit):
  // the magnitudes are below k · 2 · 2 for inputs in [-2, 2].
  auto gemm = [&](const std::string &name, const std::string &lhs,
                  const std::string &rhs, const std::string &out,
                  const std::string &attrs, int64_t k) {
    std::string l = "tensor<" + lhs + "x" + t + ">",
                r = "tensor<" + rhs + "x" + t + ">",
                o = "tensor<" + out + "x" + t + ">";
    Case c = {name, "", Bound::Absolute, static_cast<double>(k + 1), {}, o};
    c.scale = std::max<double>(4.0 * static_cast<double>(k), 1.0);
    c.function = llvm::formatv("(%x: {0}, %w: {1}) -> {2} {{\n"
                               "  %y = nn.matmul %x, %w {3}: {0}, {1} -> "
                               "{2}\n  return %y : {2}\n}\n",
                               l, r, o, attrs)
                     .str();
    all.push_back(c);
  };
  gemm("matmul", "33x47", "47x29", "33x29", "", 47);
  gemm("matmul_tt", "47x33", "29x47", "33x29",
       "{transpose_lhs, transpose_rhs} ", 47);
  gemm("matmul_batched", "3x17x20", "3x20x11", "3x17x11", "", 20);
  gemm("matmul_batched_tr", "3x17x20", "3x11x20", "3x17x11", "{transpose_rhs} ",
       20);
  gemm("matmul_batched_tl", "2x3x20x17", "2x3x20x11", "2x3x17x11",
       "{transpose_lhs} ", 20);
  // A weight shared across batches: folded into one tall GEMM, or (with the
  // lhs transposed) a batched one whose rhs stride is 0.
  gemm("matmul_shared", "3x17x20", "20x11", "3x17x11", "", 20);
  gemm("matmul_shared_tr", "3x17x20", "11x20", "3x17x11", "{transpose_rhs} ",
       20);
  gemm("matmul_shared_tl", "3x20x17", "20x11", "3x17x11", "{transpose_lhs} ",
       20);
  gemm("matmul_empty_k", "5x0", "0x7", "5x7", "", 0);
  // A constant weight, copied into scratch for the GEMM: k = 2 products of
  // |x| <= 2 and |w| <= 3.
  std::string cl = "tensor<4x2x" + t + ">", cr = "tensor<2x3x" + t + ">",
              co = "tensor<4x3x" + t + ">";
  Case constantRhs = {"matmul_constant", "", Bound::Absolute, 3, {}, co};
  constantRhs.scale = 12;
  constantRhs.function =
      llvm::formatv("(%x: {0}) -> {2} {{\n"
                    "  %w = nn.constant dense<[[1.0, 2.0, -1.0], "
                    "[0.5, 0.25, 3.0]]> : {1}\n"
                    "  %y = nn.matmul %x, %w : {0}, {1} -> {2}\n"
                    "  return %y : {2}\n}\n",
                    cl, cr, co)
          .str();
  all.push_back(constantRhs);
  // GEMM epilogues (cuBLASLt's, which the CUDA policy fuses): 3 x 17 rows
  // folded into one GEMM of k = 20, n = 16 (a multiple of 8, as an aux
  // output needs). A GEMM's value is within k + 1 units of 4k; the bias
  // (|b| <= 2) and the residual (|r| <= 2) add one unit each of the new
  // magnitude. In bf16 and f16 the evaluator also rounds the product (and
  // the biased value) to the type, which the fused epilogue does not: one
  // relative half-unit of the type per skipped rounding, in units of 2^-24
  // (2^15 for bf16, 2^13 for f16). GELU: 1.13-Lipschitz, plus its own 12
  // units of max(|x|, 1). Every result of a case is held to its bound.
  double narrow = t == "bf16" ? 32768 : t == "f16" ? 8192 : 0;
  std::string el = "tensor<3x17x20x" + t + ">", ew = "tensor<20x16x" + t + ">",
              eb = "tensor<16x" + t + ">", eo = "tensor<3x17x16x" + t + ">";
  auto epilogue = [&](const std::string &name, const std::string &extra,
                      const std::string &body, const std::string &results,
                      double scale, double units) {
    Case c = {name, "", Bound::Absolute, units, {}, eo};
    c.scale = scale;
    c.function =
        llvm::formatv("(%x: {0}, %w: {1}, %b: {2}{3}) -> ({4}) {{\n"
                      "  %y = nn.matmul %x, %w : {0}, {1} -> {5}\n"
                      "  %z = nn.add %y, %b : {5}, {2} -> {5}\n"
                      "{6}  return {7} : {4}\n}\n",
                      el, ew, eb, extra,
                      results == "%s" || results == "%z" || results == "%g"
                          ? eo
                          : eo + ", " + eo,
                      eo, body, results)
            .str();
    all.push_back(c);
  };
  epilogue("gemm_bias", "", "", "%z", 82, 22 + narrow);
  epilogue("gemm_bias_gelu", "", "  %g = nn.gelu %z : " + eo + "\n", "%g", 82,
           1.13 * (22 + 2 * narrow) + 13);
  epilogue("gemm_bias_gelu_aux", "", "  %g = nn.gelu %z : " + eo + "\n",
           "%g, %z", 82, 1.13 * (22 + 2 * narrow) + 13);
  epilogue("gemm_bias_residual", ", %r: " + eo,
           "  %s = nn.add %r, %z : " + eo + ", " + eo + " -> " + eo + "\n",
           "%s", 84, 23 + 2 * narrow);
  // DGELU: the product times GELU's derivative at %p (in [-2, 2], the
  // forward's value before GELU), no bias. gelu' (at most 1.13) is within
  // 45 units absolute (tanh's 6 and its argument's 3 units of 2.1, through
  // t, 1 - t^2 and the products), so the result is within 1.13 times the
  // product's 22 units of 82, plus 80 · 45 / 82 and the final rounding; in
  // bf16 and f16 the product's skipped rounding, 1.13 times.
  {
    Case c = {"gemm_dgelu", "", Bound::Absolute, 1.13 * (22 + narrow) + 46,
              {},           eo};
    c.scale = 82;
    c.function = llvm::formatv("(%x: {0}, %w: {1}, %p: {2}) -> {2} {{\n"
                               "  %y = nn.matmul %x, %w : {0}, {1} -> {2}\n"
                               "  %g = nn.gelu_grad %p, %y : {2}\n"
                               "  return %g : {2}\n}\n",
                               el, ew, eo)
                     .str();
    all.push_back(c);
  }
  // Mixed precision: a bf16 or f16 product widened to f32 before its
  // epilogue (f32 bias, aux and cotangent): the GEMM writes f32, so the
  // product's rounding to the narrow type is skipped (narrow units, as
  // above), and the epilogue's values are f32.
  if (t != "f32") {
    std::string fo = "tensor<3x17x16xf32>", fb = "tensor<16xf32>";
    auto widened = [&](const std::string &name, const std::string &extra,
                       const std::string &body, const std::string &results,
                       double units) {
      Case c = {name, "", Bound::Absolute, units, {}, fo};
      c.scale = 82;
      c.function =
          llvm::formatv("(%x: {0}, %w: {1}{2}) -> ({3}) {{\n"
                        "  %y = nn.matmul %x, %w : {0}, {1} -> {4}\n"
                        "  %f = nn.cast %y : {4} to {5}\n"
                        "{6}  return {7} : {3}\n}\n",
                        el, ew, extra,
                        results.find(',') == std::string::npos ? fo
                                                               : fo + ", " + fo,
                        eo, fo, body, results)
              .str();
      all.push_back(c);
    };
    widened("gemm_widened", "", "", "%f", 22 + narrow);
    widened("gemm_widened_bias_gelu_aux", ", %b: " + fb,
            "  %z = nn.add %f, %b : " + fo + ", " + fb + " -> " + fo +
                "\n  %g = nn.gelu %z : " + fo + "\n",
            "%g, %z", 1.13 * (23 + narrow) + 13);
    widened("gemm_widened_dgelu", ", %p: " + fo,
            "  %g = nn.gelu_grad %p, %f : " + fo + "\n", "%g",
            1.13 * (22 + narrow) + 46);
  }
  // Fused attention (AttentionPrelude.h), D = 16 in `heads` heads of
  // hd = 16 / heads (8 unless said), inputs in [-1, 1], scale 1/sqrt(hd):
  // the bounds of attentionBounds. `output`: 0 y, 1 dq, 2 dk, 3 dv, 4 the
  // log-sum-exp; the gradients' cases run the forward pass first, as a
  // training step does.
  auto attention = [&](const std::string &name, int64_t tq, int64_t tk,
                       bool causal, int output, int64_t group = 1,
                       int64_t heads = 2, int64_t dim = 16) {
    AttentionBounds bounds(dim / heads, tk, tq * group, t);
    double units[] = {bounds.y, bounds.dq, bounds.dk, bounds.dv, bounds.lse};
    std::string qt = "tensor<2x" + std::to_string(tq) + "x" +
                     std::to_string(dim) + "x" + t + ">";
    std::string kt = "tensor<2x" + std::to_string(tk) + "x" +
                     std::to_string(dim / group) + "x" + t + ">";
    std::string lt = "tensor<2x" + std::to_string(heads) + "x" +
                     std::to_string(tq) + "xf32>";
    std::string attrs =
        std::string("{") + (causal ? "causal, " : "") +
        "heads = " + std::to_string(heads) + " : i64" +
        (group > 1 ? ", kv_heads = " + std::to_string(heads / group) + " : i64}"
                   : "}");
    Case c = {name,
              "",
              Bound::Absolute,
              units[output],
              {-1.0, 1.0, 4},
              output == 4                  ? lt
              : output == 0 || output == 1 ? qt
                                           : kt};
    if (output == 0)
      c.function = llvm::formatv("(%x: {0}, %k: {1}, %v: {1}) -> {0} {{\n"
                                 "  %y = nn.attention %x, %k, %v {2} : {0}, "
                                 "{1}, {1} -> {0}\n  return %y : {0}\n}\n",
                                 qt, kt, attrs)
                       .str();
    else if (output == 4)
      c.function =
          llvm::formatv("(%x: {0}, %k: {1}, %v: {1}) -> {3} {{\n"
                        "  %y, %lse = nn.attention %x, %k, %v {2} : {0}, "
                        "{1}, {1} -> {0}, {3}\n  return %lse : {3}\n}\n",
                        qt, kt, attrs, lt)
              .str();
    else
      c.function =
          llvm::formatv("(%x: {0}, %k: {1}, %v: {1}, %g: {0}) -> {3} {{\n"
                        "  %y, %lse = nn.attention %x, %k, %v {2} : {0}, "
                        "{1}, {1} -> {0}, {5}\n"
                        "  %dq, %dk, %dv = nn.attention_grad %x, %k, %v, %y, "
                        "%lse, %g {2} : {0}, {1}, {1}, {0}, {5}, {0} -> {0}, "
                        "{1}, {1}\n"
                        "  return {4} : {3}\n}\n",
                        qt, kt, attrs, c.resultType,
                        output == 1   ? "%dq"
                        : output == 2 ? "%dk"
                                      : "%dv",
                        lt)
              .str();
    all.push_back(c);
  };
  attention("attention_causal", 13, 13, true, 0);
  attention("attention_cross", 5, 9, false, 0);
  attention("attention_grad_dq", 13, 13, true, 1);
  attention("attention_grad_dk", 13, 13, true, 2);
  attention("attention_grad_dv", 13, 13, true, 3);
  attention("attention_grad_cross_dq", 5, 9, false, 1);
  attention("attention_grad_cross_dk", 5, 9, false, 2);
  attention("attention_grad_cross_dv", 5, 9, false, 3);
  attention("attention_lse", 13, 13, true, 4);
  attention("attention_cross_lse", 5, 9, false, 4);
  // Longer than a block's rows and a tile (64 each at hd = 8): several
  // blocks per head, several tiles per row, causal tiles cut mid-block.
  attention("attention_causal_tiles", 150, 150, true, 0);
  attention("attention_grad_tiles_dq", 150, 150, true, 1);
  attention("attention_grad_tiles_dk", 150, 150, true, 2);
  attention("attention_grad_tiles_dv", 150, 150, true, 3);
  attention("attention_cross_tiles", 70, 130, false, 0);
  attention("attention_causal_tiles_lse", 150, 150, true, 4);
  attention("attention_grad_cross_tiles_dk", 70, 130, false, 2);
  // Grouped-query attention: four query heads of 4 on two key and value
  // heads (query heads 0 and 1 read key head 0, 2 and 3 key head 1), in
  // one block and over several blocks and tiles, and two query heads of 8
  // on one.
  attention("attention_grouped", 13, 13, true, 0, 2, 4);
  attention("attention_grouped_grad_dq", 13, 13, true, 1, 2, 4);
  attention("attention_grouped_grad_dk", 13, 13, true, 2, 2, 4);
  attention("attention_grouped_grad_dv", 13, 13, true, 3, 2, 4);
  attention("attention_grouped_cross_tiles", 70, 130, false, 0, 2, 4);
  attention("attention_grouped_lse", 13, 13, true, 4, 2, 4);
  attention("attention_grouped_grad_cross_dq", 5, 9, false, 1, 2, 4);
  attention("attention_grouped_grad_tiles_dk", 150, 150, true, 2, 2, 4);
  attention("attention_grouped_grad_tiles_dv", 150, 150, true, 3, 2, 4);
  // Heads of 16 and 64: in bf16 and f16 the forward pass on the tensor
  // cores (TensorCorePrelude.h; blocks of 64 query rows, key tiles of 64),
  // whose y and log-sum-exp the gradients' cases take. Rows and keys past
  // a block's or a tile's end, causal tiles cut mid-warp, a row of a warp
  // past the queries; grouped heads of 16; a head of 64 (gpt2-124m's).
  attention("attention_wide_causal", 150, 150, true, 0, 1, 1);
  attention("attention_wide_cross", 70, 130, false, 0, 1, 1);
  attention("attention_wide_short", 5, 9, false, 0, 1, 1);
  attention("attention_wide_lse", 150, 150, true, 4, 1, 1);
  attention("attention_wide_cross_lse", 70, 130, false, 4, 1, 1);
  attention("attention_wide_grad_dq", 150, 150, true, 1, 1, 1);
  attention("attention_wide_grad_dk", 150, 150, true, 2, 1, 1);
  attention("attention_wide_grad_dv", 150, 150, true, 3, 1, 1);
  attention("attention_wide_grouped", 70, 70, true, 0, 2, 2, 32);
  attention("attention_wide_grouped_lse", 70, 70, true, 4, 2, 2, 32);
  attention("attention_head64_causal", 80, 80, true, 0, 1, 2, 128);
  attention("attention_head64_lse", 80, 80, true, 4, 1, 2, 128);
  attention("attention_one_key_head", 13, 13, true, 0, 2);
  attention("attention_one_key_head_grad_dk", 13, 13, true, 2, 2);
  attention("attention_one_key_head_grad_dv", 13, 13, true, 3, 2);
  // q, k and v as pieces of one buffer (a GPT's QKV projection split),
  // which the kernels read in place at its row stride, and dq, dk and dv
  // written in place into their concat (docs/cuda-backend.md, "Attention").
  // Heads of odd width `hd`; the split's pieces in the order k, q, v and the
  // concat's dv, dq, dk, so an offset or stride taken from the wrong piece
  // reads other values. The bound is the attention cases' above for this
  // hd, the gradients' largest of dq, dk and dv (a wrong stride is off by
  // the values' magnitude, about 2^24 times more).
  // `lead` columns before the pieces (forward cases only) move every
  // piece off a multiple of 8 values: the tensor-core kernel's tiles then
  // load element by element.
  auto inPlace = [&](const std::string &name, int64_t len, bool causal,
                     bool grad, int64_t heads, int64_t hd, int64_t group = 1,
                     int64_t lead = 0) {
    AttentionBounds bounds(hd, len, len * group, t);
    double units =
        grad ? std::max({bounds.dq, bounds.dk, bounds.dv}) : bounds.y;
    int64_t width = heads * hd, kvWidth = heads / group * hd;
    auto tensor = [&](int64_t w) {
      return "tensor<2x" + std::to_string(len) + "x" + std::to_string(w) + "x" +
             t + ">";
    };
    std::string whole = tensor(lead + width + 2 * kvWidth), qt = tensor(width),
                kt = tensor(kvWidth);
    std::string attrs =
        std::string("{") + (causal ? "causal, " : "") +
        "heads = " + std::to_string(heads) + " : i64" +
        (group > 1 ? ", kv_heads = " + std::to_string(heads / group) + " : i64}"
                   : "}");
    std::string pieces = llvm::formatv("  %k, %q, %v = nn.split %x {{axis = 2 "
                                       ": i64, sizes = array<i64: {0}, {1}, "
                                       "{0}>} : {2} -> {3}, {4}, {3}\n",
                                       kvWidth, width, whole, kt, qt)
                             .str();
    if (lead)
      pieces = llvm::formatv("  %pad, %k, %q, %v = nn.split %x {{axis = 2 : "
                             "i64, sizes = array<i64: {5}, {0}, {1}, {0}>} : "
                             "{2} -> {6}, {3}, {4}, {3}\n",
                             kvWidth, width, whole, kt, qt, lead, tensor(lead))
                   .str();
    Case c = {
        name, "", Bound::Absolute, units, {-1.0, 1.0, 4}, grad ? whole : qt};
    if (!grad)
      c.function = llvm::formatv("(%x: {0}) -> {1} {{\n{2}"
                                 "  %y = nn.attention %q, %k, %v {3} : {1}, "
                                 "{4}, {4} -> {1}\n  return %y : {1}\n}\n",
                                 whole, qt, pieces, attrs, kt)
                       .str();
    else
      c.function =
          llvm::formatv("(%x: {0}, %g: {1}) -> {0} {{\n{2}"
                        "  %y, %lse = nn.attention %q, %k, %v {3} : {1}, {4}, "
                        "{4} -> {1}, {5}\n"
                        "  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %y, "
                        "%lse, %g {3} : {1}, {4}, {4}, {1}, {5}, {1} -> {1}, "
                        "{4}, {4}\n"
                        "  %d = nn.concat %dv, %dq, %dk {{axis = 2 : i64} : "
                        "({4}, {1}, {4}) -> {0}\n  return %d : {0}\n}\n",
                        whole, qt, pieces, attrs, kt,
                        "tensor<2x" + std::to_string(heads) + "x" +
                            std::to_string(len) + "xf32>")
              .str();
    all.push_back(c);
  };
  inPlace("attention_in_place", 13, true, false, 3, 5);
  inPlace("attention_in_place_grad", 13, true, true, 3, 5);
  inPlace("attention_in_place_noncausal_grad", 9, false, true, 2, 7);
  // Several blocks and tiles a head.
  inPlace("attention_in_place_tiles", 150, true, false, 2, 5);
  inPlace("attention_in_place_grad_tiles", 150, true, true, 2, 5);
  // Grouped-query: four query heads of 3 on two key and value heads.
  inPlace("attention_in_place_grouped", 13, true, false, 4, 3, 2);
  inPlace("attention_in_place_grouped_grad", 70, true, true, 4, 3, 2);
  // Heads of 16 (the tensor cores' forward pass in bf16 and f16), grouped.
  inPlace("attention_in_place_wide", 70, true, false, 4, 16, 2);
  inPlace("attention_in_place_wide_unaligned", 70, true, false, 2, 16, 1, 3);
  inPlace("attention_in_place_wide_grad", 70, true, true, 2, 16);
  // Parameters: slots after the arguments, one per parameter however often
  // it is read.
  Case param = {"param", "", Bound::Exact, 0, {}, x};
  param.parameters = {{"param.a", x}, {"param.b", row}};
  param.function = llvm::formatv("(%x: {0}) -> {0} {{\n"
                                 "  %a = nn.param @param.a : {0}\n"
                                 "  %b = nn.param @param.b : {1}\n"
                                 "  %a2 = nn.param @param.a : {0}\n"
                                 "  %s = nn.add %x, %a : {0}, {0} -> {0}\n"
                                 "  %t = nn.sub %s, %b : {0}, {1} -> {0}\n"
                                 "  %y = nn.mul %t, %a2 : {0}, {0} -> {0}\n"
                                 "  return %y : {0}\n}\n",
                                 x, row)
                       .str();
  all.push_back(param);
  // Views: pointers to the argument's buffer, copied into the result.
  all.push_back({"views",
                 "%r = nn.reshape %x : " + x + " to tensor<1332x" + t +
                     ">\n  %s = nn.stage_end %r : tensor<1332x" + t +
                     ">\n  %y = nn.reshape %s : tensor<1332x" + t + "> to " + x,
                 Bound::Exact, 0});
  if (t != "f32")
    all.push_back({"cast_roundtrip",
                   "%w = nn.cast %x : " + x + " to tensor<4x333xf32>\n" +
                       "  %e = nn.exp %w : tensor<4x333xf32>\n" +
                       "  %y = nn.cast %e : tensor<4x333xf32> to " + x,
                   Bound::Relative,
                   4,
                   {-4.0, 4.0, 4}});
  return all;
}

/// The function of a case: arguments %x, %z (same type) and %b (one row).
std::string functionText(const Case &c, const std::string &t) {
  std::string x = "tensor<4x333x" + t + ">", row = "tensor<333x" + t + ">";
  if (!c.function.empty())
    return "func.func @" + c.name + c.function;
  std::string y = c.resultType.empty() ? x : c.resultType;
  return llvm::formatv("func.func @{0}(%x: {1}, %z: {1}, %b: {2}) -> {4} {{\n"
                       "  {3}\n  return %y : {4}\n}\n",
                       c.name, x, row, c.body, y)
      .str();
}

uint16_t narrowBits(double x, mlir::Type type) {
  return type.isBF16() ? tandem_round::toBF16(x) : tandem_round::toF16(x);
}
double narrowValue(uint16_t bits, mlir::Type type) {
  return type.isBF16() ? tandem_round::fromBF16(bits)
                       : tandem_round::fromF16(bits);
}

std::vector<char> pack(const eval::Tensor &t) {
  size_t width = t.elementType.getIntOrFloatBitWidth() / 8;
  std::vector<char> bytes(t.data.size() * width);
  for (size_t i = 0; i < t.data.size(); ++i) {
    if (t.elementType.isInteger(32)) {
      int32_t v = static_cast<int32_t>(t.data[i]);
      std::memcpy(&bytes[i * 4], &v, 4);
    } else if (t.elementType.isInteger(64)) {
      int64_t v = static_cast<int64_t>(t.data[i]);
      std::memcpy(&bytes[i * 8], &v, 8);
    } else if (width == 4) {
      float v = static_cast<float>(t.data[i]);
      std::memcpy(&bytes[i * 4], &v, 4);
    } else {
      uint16_t v = narrowBits(t.data[i], t.elementType);
      std::memcpy(&bytes[i * 2], &v, 2);
    }
  }
  return bytes;
}

double unpack(const std::vector<char> &bytes, size_t i, mlir::Type type) {
  if (type.isF32()) {
    float v;
    std::memcpy(&v, &bytes[i * 4], 4);
    return v;
  }
  uint16_t v;
  std::memcpy(&v, &bytes[i * 2], 2);
  return narrowValue(v, type);
}

/// Half a unit in the last place of `value` in `type` (0 for f32, whose
/// error the units already bound).
double halfUlp(double value, mlir::Type type) {
  if (type.isF32() || value == 0 || !std::isfinite(value))
    return 0;
  int precision = type.isBF16() ? 8 : 11;
  int exponent = std::ilogb(value);
  if (type.isF16())
    exponent = std::max(exponent, -14);
  return std::ldexp(0.5, exponent - precision + 1);
}

/// Runs function `name` of `loaded` on `inputs` (packed arguments, then
/// parameters) into `results` (sized by the caller), reporting into
/// `status` (none when null) as run `call`; the entry's status.
int runEmulated(cpu::testing::Library &loaded, const std::string &name,
                std::vector<std::vector<char>> &inputs,
                std::vector<std::vector<char>> &results, uint32_t flags = 0,
                tandem_fragment_status *status = nullptr, uint64_t call = 0) {
  std::string symbol = lowering::entrySymbol(name);
  auto entry = reinterpret_cast<tandem_fragment_fn>(loaded.lookup(symbol));
  auto scratchBytes = reinterpret_cast<tandem_scratch_bytes_fn>(
      loaded.lookup(symbol + "_scratch_bytes"));
  if (!entry || !scratchBytes) {
    ADD_FAILURE() << "no entry point " << symbol;
    return -1;
  }
  std::vector<const void *> argPointers;
  for (auto &bytes : inputs)
    argPointers.push_back(bytes.data());
  std::vector<void *> resultPointers;
  for (auto &bytes : results)
    resultPointers.push_back(bytes.data());
  std::vector<char> scratch(scratchBytes() + 1);
  tandem_fragment_context ctx = {};
  ctx.abi_version = TANDEM_FRAGMENT_ABI_VERSION;
  ctx.flags = flags;
  ctx.status = status;
  ctx.call = call;
  return entry(&ctx, argPointers.data(), resultPointers.data(), scratch.data());
}

/// `status` holds one report: an index outside its range (code 1) of
/// check `check` in run `call`, `value` at `position`.
void expectReport(const tandem_fragment_status &status, uint32_t check,
                  uint64_t call, int64_t position, int64_t value) {
  EXPECT_EQ(status.code, 1u);
  EXPECT_EQ(status.check, check);
  EXPECT_EQ(status.call, call);
  EXPECT_EQ(status.position, position);
  EXPECT_EQ(status.value, value);
}

class EmulationTest : public ::testing::TestWithParam<std::string> {};

//===----------------------------------------------------------------------===//
// The blockwise codecs (nn.quantize, nn.dequantize): bitwise the evaluator's
//===----------------------------------------------------------------------===//

const char *const kPayloads[] = {"i8", "f8E4M3FN", "f8E5M2"};

/// Rows of 40: blocks of 8 divide them, blocks of 16 leave a short last
/// block of 8.
constexpr int64_t kCodecRows = 4, kCodecWidth = 40;
const int64_t kCodecBlocks[] = {8, 16};

std::string codecName(const std::string &t, const std::string &payload,
                      int64_t block) {
  return "codec_" + t + "_" + payload + "_" + std::to_string(block);
}

/// For input type `t`: per payload type and block, @codec_... encodes %x and
/// decodes the payload again (returning all three), and per payload type
/// @decode_<payload> decodes arguments (a payload received from another
/// rank) to bf16, another type than the one encoded (f32).
std::string codecFunctions(const std::string &t) {
  std::string text;
  std::string x =
      llvm::formatv("tensor<{0}x{1}x{2}>", kCodecRows, kCodecWidth, t).str();
  for (const char *payload : kPayloads) {
    std::string q =
        llvm::formatv("tensor<{0}x{1}x{2}>", kCodecRows, kCodecWidth, payload)
            .str();
    for (int64_t block : kCodecBlocks) {
      std::string s =
          llvm::formatv("tensor<{0}x{1}xf32>", kCodecRows,
                        tandem_codec::blockCount(kCodecWidth, block))
              .str();
      text += llvm::formatv(
                  "func.func @{0}(%x: {1}) -> ({2}, {3}, {1}) {{\n"
                  "  %q, %s = nn.quantize %x {{block = {4}} : {1} to {2}, {3}\n"
                  "  %y = nn.dequantize %q, %s {{block = {4}} : {2}, {3} to "
                  "{1}\n"
                  "  return %q, %s, %y : {2}, {3}, {1}\n}\n",
                  codecName(t, payload, block), x, q, s, block)
                  .str();
    }
    if (t == "f32") {
      std::string s = llvm::formatv("tensor<{0}x3xf32>", kCodecRows).str();
      std::string y =
          llvm::formatv("tensor<{0}x{1}xbf16>", kCodecRows, kCodecWidth).str();
      text += llvm::formatv("func.func @decode_{0}(%q: {1}, %s: {2}) -> {3} "
                            "{{\n"
                            "  %y = nn.dequantize %q, %s {{block = 16} : {1}, "
                            "{2} to {3}\n"
                            "  return %y : {3}\n}\n",
                            payload, q, s, y)
                  .str();
    }
  }
  return text;
}

/// `v` as a value of `type` (f32, bf16 or f16), rounded to nearest.
double roundedTo(double v, mlir::Type type) {
  if (type.isF32())
    return static_cast<float>(v);
  return narrowValue(narrowBits(v, type), type);
}

/// The codecs' inputs, rows of 40 in `type`, with every edge case of
/// docs/compression.md's table in some block of 8 and of 16: row 0 random
/// in [-2, 2] with one outlier (1000 at element 5), row 1 an all-zero first
/// block of both signs and magnitudes over 24 binary orders after it, row 2
/// an infinity (element 17) and a NaN (element 35) among random values, row
/// 3 values near the type's smallest normal (subnormals among them).
eval::Tensor codecInput(mlir::RankedTensorType type, std::mt19937 &rng) {
  eval::Tensor x(type);
  mlir::Type element = type.getElementType();
  std::uniform_real_distribution<double> unit(-2.0, 2.0);
  std::uniform_int_distribution<int> order(-12, 12);
  int tiny = element.isF16() ? -14 : -126;
  for (int64_t r = 0; r < kCodecRows; ++r)
    for (int64_t j = 0; j < kCodecWidth; ++j) {
      double v = unit(rng);
      if (r == 0 && j == 5)
        v = 1000.0;
      if (r == 1)
        v = j < 16 ? (j % 2 ? -0.0 : 0.0) : std::ldexp(v, order(rng));
      if (r == 2 && j == 17)
        v = HUGE_VAL;
      if (r == 2 && j == 35)
        v = NAN;
      if (r == 3)
        v = std::ldexp(v, tiny + (j % 3) - 1);
      x.data[r * kCodecWidth + j] = roundedTo(v, element);
    }
  return x;
}

/// The bytes generated code holds for `t`: floats as their storage, codec
/// payloads one byte per code (Codec.h's codeByte).
std::vector<char> packCodec(const eval::Tensor &t) {
  int code = nn::payloadCode(t.elementType);
  if (code < 0)
    return pack(t);
  std::vector<char> bytes(t.data.size());
  for (size_t i = 0; i < t.data.size(); ++i)
    bytes[i] = static_cast<char>(tandem_codec::codeByte(
        t.data[i], static_cast<tandem_codec::Code>(code)));
  return bytes;
}

/// How many elements of `got` (bytes of generated code) differ from
/// `want` (the evaluator's): payload bytes and floats bit for bit (the sign
/// of zero included: an i8 code is never -0), NaN against any NaN.
unsigned countDifferences(const std::vector<char> &got,
                          const eval::Tensor &want, const std::string &what) {
  std::vector<char> expected = packCodec(want);
  if (got.size() != expected.size()) {
    ADD_FAILURE() << what << ": " << got.size() << " bytes, want "
                  << expected.size();
    return 1;
  }
  int code = nn::payloadCode(want.elementType);
  size_t width = code >= 0 ? 1 : want.elementType.getIntOrFloatBitWidth() / 8;
  unsigned bad = 0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    if (!std::memcmp(&got[i * width], &expected[i * width], width))
      continue;
    double value =
        code >= 0
            ? tandem_codec::codeOfByte(static_cast<uint8_t>(got[i]),
                                       static_cast<tandem_codec::Code>(code))
            : unpack(got, i, want.elementType);
    if (std::isnan(value) && std::isnan(want.data[i]))
      continue;
    if (++bad <= 3)
      ADD_FAILURE() << what << " element " << i << ": got " << value
                    << ", want " << want.data[i];
  }
  return bad;
}

class CodecEmulationTest : public ::testing::TestWithParam<std::string> {};

// The emulated CUDA codec kernels encode and decode to the evaluator's bits
// for every payload type, from f32, bf16 and f16, in blocks that divide the
// rows and blocks that leave a short last one, through the edge cases of
// codecInput; and decoding a payload that arrives as an argument gives the
// evaluator's bits in another float type than the one encoded.
TEST_P(CodecEmulationTest, EncodesAndDecodesToTheEvaluatorsBits) {
  const std::string t = GetParam();
  std::string text = codecFunctions(t);
  auto emulation = cuda::testing::buildEmulation(text);
  ASSERT_TRUE(static_cast<bool>(emulation))
      << llvm::toString(emulation.takeError());
  cpu::testing::Library &loaded = *(*emulation)->library;
  const std::string &source = (*emulation)->source.text;
  EXPECT_NE(source.find("a thread per block"), std::string::npos);
  EXPECT_NE(source.find("tandem_codec::blockScale("), std::string::npos);

  std::mt19937 rng(20261206);
  eval::Interpreter interpreter(*(*emulation)->module);
  for (const char *payload : kPayloads)
    for (int64_t block : kCodecBlocks) {
      std::string name = codecName(t, payload, block);
      SCOPED_TRACE(name);
      auto fn = (*emulation)->module->lookupSymbol<mlir::func::FuncOp>(name);
      ASSERT_TRUE(fn);
      std::vector<eval::Tensor> args = {codecInput(
          mlir::cast<mlir::RankedTensorType>(fn.getArgumentTypes()[0]), rng)};
      auto expected = interpreter.run(name, args);
      ASSERT_TRUE(static_cast<bool>(expected))
          << llvm::toString(expected.takeError());
      ASSERT_EQ(expected->size(), 3u);
      // The edge cases are there: a zero scale, a NaN scale, an outlier's.
      const std::vector<double> &scales = (*expected)[1].data;
      EXPECT_TRUE(llvm::is_contained(scales, 0.0));
      EXPECT_TRUE(llvm::any_of(scales, [](double s) { return std::isnan(s); }));
      EXPECT_EQ(scales[0],
                tandem_codec::blockScale(
                    1000.0, static_cast<tandem_codec::Code>(
                                nn::payloadCode((*expected)[0].elementType))));

      std::vector<std::vector<char>> inputs = {pack(args[0])};
      std::vector<std::vector<char>> results;
      for (const eval::Tensor &want : *expected)
        results.emplace_back(packCodec(want).size(), '\x55');
      ASSERT_EQ(runEmulated(loaded, name, inputs, results), 0);
      EXPECT_EQ(countDifferences(results[0], (*expected)[0], "payload"), 0u);
      EXPECT_EQ(countDifferences(results[1], (*expected)[1], "scales"), 0u);
      EXPECT_EQ(countDifferences(results[2], (*expected)[2], "decoded"), 0u);

      // The payload and scales as another rank receives them, decoded to
      // bf16 (blocks of 16 only: @decode_<payload>).
      if (t != "f32" || block != 16)
        continue;
      std::string decode = std::string("decode_") + payload;
      SCOPED_TRACE(decode);
      std::vector<eval::Tensor> received = {(*expected)[0], (*expected)[1]};
      for (double &q : received[0].data) // the codes the bytes hold
        q = tandem_codec::codeOfByte(
            tandem_codec::codeByte(
                q, static_cast<tandem_codec::Code>(
                       nn::payloadCode(received[0].elementType))),
            static_cast<tandem_codec::Code>(
                nn::payloadCode(received[0].elementType)));
      // Code 3 under the scale 0x3c95aaab is 0.0548095721751451... in
      // double, just below the midpoint of two bf16 values, and rounds to
      // that midpoint in f32: a decode rounded through f32 would round twice
      // and land on the other bf16 neighbor.
      float midpointScale;
      uint32_t midpointBits = 0x3c95aaab;
      std::memcpy(&midpointScale, &midpointBits, 4);
      received[0].data[1] = 3.0;
      received[1].data[0] = midpointScale;
      auto decoded = interpreter.run(decode, received);
      ASSERT_TRUE(static_cast<bool>(decoded))
          << llvm::toString(decoded.takeError());
      EXPECT_NE(tandem_round::toBF16((*decoded)[0].data[1]),
                tandem_round::toBF16(static_cast<float>(3.0 * midpointScale)));
      std::vector<std::vector<char>> decodeInputs = {packCodec(received[0]),
                                                     packCodec(received[1])};
      std::vector<std::vector<char>> decodeResults = {
          std::vector<char>(packCodec((*decoded)[0]).size(), '\x55')};
      ASSERT_EQ(runEmulated(loaded, decode, decodeInputs, decodeResults), 0);
      EXPECT_EQ(
          countDifferences(decodeResults[0], (*decoded)[0], "decoded to bf16"),
          0u);
    }
}

INSTANTIATE_TEST_SUITE_P(Types, CodecEmulationTest,
                         ::testing::Values("f32", "bf16", "f16"));

// Every op the emitter claims is run by a case (nn.cast by the bf16 and
// f16 cases, the codecs by CodecEmulationTest).
TEST(EmulationCoverage, EveryLoweredOpHasACase) {
  std::string bodies = codecFunctions("f32");
  for (const char *t : {"f32", "bf16"})
    for (const Case &c : cases(t))
      bodies += c.body + c.function + "\n";
  for (const std::string &op : cuda::supportedOps())
    EXPECT_NE(bodies.find(op + " "), std::string::npos)
        << op << " is lowered but no case runs it";
}

TEST_P(EmulationTest, EveryElementWithinItsBound) {
  const std::string t = GetParam();
  std::vector<Case> all = cases(t);
  std::string text;
  for (const Case &c : all) {
    for (const auto &[name, type] : c.parameters)
      text += "nn.parameter @" + name + " : " + type + " = zeros\n";
    text += functionText(c, t);
  }
  auto emulation = cuda::testing::buildEmulation(text);
  ASSERT_TRUE(static_cast<bool>(emulation))
      << llvm::toString(emulation.takeError());
  cpu::testing::Library &loaded = *(*emulation)->library;
  auto *emulated =
      static_cast<const char *>(loaded.lookup("tandem_cuda_emulated"));
  ASSERT_NE(emulated, nullptr);
  EXPECT_STREQ(emulated, "yes");

  std::mt19937 rng(20261202);
  eval::Interpreter interpreter(*(*emulation)->module);
  for (const Case &c : all) {
    SCOPED_TRACE(c.name + " (" + t + ")");
    auto fn = (*emulation)->module->lookupSymbol<mlir::func::FuncOp>(c.name);
    std::vector<eval::Tensor> args;
    for (mlir::Type type : fn.getArgumentTypes())
      args.push_back(cpu::testing::randomTensor(
          mlir::cast<mlir::RankedTensorType>(type), rng, c.range));
    eval::ParameterMap parameters;
    for (const auto &[name, type] : c.parameters)
      parameters[name] = cpu::testing::randomTensor(
          mlir::cast<mlir::RankedTensorType>(
              (*emulation)
                  ->module->lookupSymbol<nn::ParameterOp>(name)
                  .getType()),
          rng, c.range);
    interpreter.setParameters(parameters);
    auto expected = interpreter.run(c.name, args);
    ASSERT_TRUE(static_cast<bool>(expected))
        << llvm::toString(expected.takeError());

    std::vector<std::vector<char>> inputs;
    for (const eval::Tensor &arg : args)
      inputs.push_back(pack(arg));
    for (const auto &[name, type] : c.parameters)
      inputs.push_back(pack(parameters[name]));
    std::vector<std::vector<char>> resultBytes;
    for (const eval::Tensor &want : *expected)
      resultBytes.push_back(std::vector<char>(pack(want).size()));
    ASSERT_EQ(runEmulated(loaded, c.name, inputs, resultBytes), 0);

    double magnitudes = 0;
    for (double v : args[0].data)
      magnitudes += std::fabs(v);
    unsigned bad = 0;
    for (auto [r, want] : llvm::enumerate(*expected)) {
      const std::vector<char> &result = resultBytes[r];
      for (size_t i = 0; i < want.data.size(); ++i) {
        double got = unpack(result, i, want.elementType), exact = want.data[i];
        if (std::isnan(exact) || std::isnan(got)) {
          bad += std::isnan(exact) != std::isnan(got);
          continue;
        }
        double scale = std::fabs(exact);
        if (c.bound == Bound::AbsoluteByInput)
          scale = std::max(std::fabs(args[0].data[i]), 1.0);
        if (c.bound == Bound::SumOfMagnitudes)
          scale = magnitudes / static_cast<double>(c.terms);
        if (c.bound == Bound::AbsoluteByResult)
          scale = std::max(std::fabs(exact), 1.0);
        if (c.bound == Bound::Absolute)
          scale = c.scale;
        double allowed = c.bound == Bound::Exact
                             ? 0
                             : c.units * std::ldexp(scale, -24) +
                                   halfUlp(exact, want.elementType) * 2;
        if (std::fabs(got - exact) > allowed) {
          if (++bad <= 3)
            ADD_FAILURE() << "result " << r << " element " << i << ": got "
                          << got << ", want " << exact << " (allowed "
                          << allowed << ")";
        }
      }
    }
    EXPECT_EQ(bad, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Types, EmulationTest,
                         ::testing::Values("f32", "bf16", "f16"));

} // namespace

// Ids in a padded table's rows are outside the vocabulary (rows = 3 of 5):
// the gather gives them NaN rows, and the gradient adds nothing for them,
// so the padding's gradient is exactly zero and the real rows sum only
// their own positions.
TEST(EmulationPadding, IdsInThePaddingReachNoRow) {
  const char *text =
      "func.func @gather(%x: tensor<5x2xf32>, %t: tensor<4xi32>) -> "
      "tensor<4x2xf32> {\n"
      "  %y = nn.embedding %x, %t {rows = 3 : i64} : tensor<5x2xf32>, "
      "tensor<4xi32> -> tensor<4x2xf32>\n  return %y : tensor<4x2xf32>\n}\n"
      "func.func @scatter(%x: tensor<4x2xf32>, %t: tensor<4xi32>) -> "
      "tensor<5x2xf32> {\n"
      "  %y = nn.embedding_grad %x, %t {rows = 3 : i64} : tensor<4x2xf32>, "
      "tensor<4xi32> -> tensor<5x2xf32>\n  return %y : tensor<5x2xf32>\n}\n";
  auto emulation = cuda::testing::buildEmulation(text);
  ASSERT_TRUE(static_cast<bool>(emulation))
      << llvm::toString(emulation.takeError());
  auto bytesOf = [](auto values) {
    std::vector<char> bytes(sizeof(values));
    std::memcpy(bytes.data(), &values, sizeof(values));
    return bytes;
  };
  auto floatsOf = [](const std::vector<char> &bytes) {
    std::vector<float> values(bytes.size() / 4);
    std::memcpy(values.data(), bytes.data(), bytes.size());
    return values;
  };
  // Ids 1 and 2 are words; 3 and 4 are padding rows.
  std::array<int32_t, 4> ids = {2, 3, 1, 4};
  std::array<float, 10> table = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<std::vector<char>> inputs = {bytesOf(table), bytesOf(ids)};
  std::vector<std::vector<char>> gathered = {std::vector<char>(4 * 2 * 4)};
  // A GPU's kernels report in the status word and return 0 (the first id
  // outside the rows: 3, at position 1; id 4 leaves the word alone).
  tandem_fragment_status status = {};
  ASSERT_EQ(runEmulated(*(*emulation)->library, "gather", inputs, gathered, 0,
                        &status, 17),
            0);
  expectReport(status, 0, 17, 1, 3);
  std::vector<float> rows = floatsOf(gathered[0]);
  EXPECT_EQ(rows[0], 5.0f);
  EXPECT_EQ(rows[1], 6.0f);
  EXPECT_TRUE(std::isnan(rows[2]) && std::isnan(rows[3]));
  EXPECT_EQ(rows[4], 3.0f);
  EXPECT_TRUE(std::isnan(rows[6]) && std::isnan(rows[7]));

  std::array<float, 8> cotangent = {1, 2, 10, 20, 100, 200, 1000, 2000};
  inputs = {bytesOf(cotangent), bytesOf(ids)};
  std::vector<std::vector<char>> scattered = {std::vector<char>(5 * 2 * 4)};
  // The gradient checks nothing (the forward gather reported).
  status = {};
  ASSERT_EQ(runEmulated(*(*emulation)->library, "scatter", inputs, scattered, 0,
                        &status),
            0);
  EXPECT_EQ(status.code, 0u);
  EXPECT_EQ(floatsOf(scattered[0]),
            (std::vector<float>{0, 0, 100, 200, 1, 2, 0, 0, 0, 0}));
}

// An id outside one_hot's classes gives its row NaN, as nn.embedding's
// gather does, and is reported; the other rows are exactly one-hot.
TEST(EmulationOneHot, IdsOutsideTheClassesGiveNaNRows) {
  const char *text =
      "func.func @hot(%t: tensor<4xi32>) -> tensor<4x3xf32> {\n"
      "  %y = nn.one_hot %t {classes = 3 : i64} : tensor<4xi32> -> "
      "tensor<4x3xf32>\n  return %y : tensor<4x3xf32>\n}\n";
  auto emulation = cuda::testing::buildEmulation(text);
  ASSERT_TRUE(static_cast<bool>(emulation))
      << llvm::toString(emulation.takeError());
  std::array<int32_t, 4> ids = {2, 3, 0, -1};
  std::vector<char> idBytes(sizeof(ids));
  std::memcpy(idBytes.data(), ids.data(), sizeof(ids));
  std::vector<std::vector<char>> inputs = {idBytes};
  std::vector<std::vector<char>> results = {std::vector<char>(4 * 3 * 4)};
  // Reported: the first id outside (3 at position 1), not the later -1; a
  // word already claimed is left alone.
  tandem_fragment_status status = {};
  ASSERT_EQ(runEmulated(*(*emulation)->library, "hot", inputs, results, 0,
                        &status, 5),
            0);
  expectReport(status, 0, 5, 1, 3);
  tandem_fragment_status claimed = {1, 9, 9, 9, 9};
  ASSERT_EQ(runEmulated(*(*emulation)->library, "hot", inputs, results, 0,
                        &claimed, 6),
            0);
  EXPECT_EQ(claimed.check, 9u);
  EXPECT_EQ(claimed.position, 9);
  // Without a word nothing is reported, and the rows are the same.
  ASSERT_EQ(runEmulated(*(*emulation)->library, "hot", inputs, results), 0);
  std::vector<float> rows(12);
  std::memcpy(rows.data(), results[0].data(), 48);
  EXPECT_EQ(std::vector<float>(rows.begin(), rows.begin() + 3),
            (std::vector<float>{0, 0, 1}));
  EXPECT_EQ(std::vector<float>(rows.begin() + 6, rows.begin() + 9),
            (std::vector<float>{1, 0, 0}));
  for (int i : {3, 4, 5, 9, 10, 11})
    EXPECT_TRUE(std::isnan(rows[i])) << "element " << i;
}

/// Random values in [-2, 2) as `count` elements of `elementBytes` bytes
/// (4: f32; 2: bf16, the upper halves of f32 values).
static std::vector<char> randomElements(std::mt19937 &rng, size_t count,
                                        size_t elementBytes) {
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<char> bytes(count * elementBytes);
  for (size_t i = 0; i < count; ++i) {
    float v = value(rng);
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    if (elementBytes == 2) {
      uint16_t high = static_cast<uint16_t>(bits >> 16);
      std::memcpy(&bytes[i * 2], &high, 2);
    } else {
      std::memcpy(&bytes[i * 4], &bits, 4);
    }
  }
  return bytes;
}

/// Runs @grads of `text` on two random microbatches (`inputs`: each
/// argument's element count and size) alone, then into the same result
/// buffers (`resultBytes` each), the second call with
/// TANDEM_FRAGMENT_ACCUMULATE, after filling them with garbage, which the
/// first call must write over. The f32 results below `accumulated` must
/// hold bitwise the sum of the two calls alone, the others the second
/// call's value. Returns the emitted source.
static std::string expectSecondCallAdds(
    const char *text, const std::vector<std::pair<size_t, size_t>> &inputs,
    const std::vector<size_t> &resultBytes, size_t accumulated, uint32_t seed) {
  auto emulation = cuda::testing::buildEmulation(llvm::StringRef(text));
  EXPECT_TRUE(static_cast<bool>(emulation))
      << llvm::toString(emulation.takeError());
  if (!emulation)
    return "";
  cpu::testing::Library &loaded = *(*emulation)->library;
  std::mt19937 rng(seed);
  std::vector<std::vector<char>> first, second;
  for (auto [count, elementBytes] : inputs)
    first.push_back(randomElements(rng, count, elementBytes));
  for (auto [count, elementBytes] : inputs)
    second.push_back(randomElements(rng, count, elementBytes));
  std::vector<std::vector<char>> fresh;
  for (size_t bytes : resultBytes)
    fresh.emplace_back(bytes);
  auto alone1 = fresh, alone2 = fresh, summed = fresh;
  EXPECT_EQ(runEmulated(loaded, "grads", first, alone1), 0);
  EXPECT_EQ(runEmulated(loaded, "grads", second, alone2), 0);
  for (auto &buffer : summed)
    std::fill(buffer.begin(), buffer.end(), 0x7f);
  EXPECT_EQ(runEmulated(loaded, "grads", first, summed), 0);
  EXPECT_EQ(
      runEmulated(loaded, "grads", second, summed, TANDEM_FRAGMENT_ACCUMULATE),
      0);
  for (size_t r = 0; r < summed.size(); ++r) {
    SCOPED_TRACE("result " + std::to_string(r));
    if (r >= accumulated) {
      EXPECT_EQ(summed[r], alone2[r]);
      continue;
    }
    for (size_t i = 0; i < summed[r].size() / 4; ++i) {
      float a, b, got;
      std::memcpy(&a, &alone1[r][i * 4], 4);
      std::memcpy(&b, &alone2[r][i * 4], 4);
      std::memcpy(&got, &summed[r][i * 4], 4);
      EXPECT_EQ(got, a + b) << "element " << i;
      if (got != a + b)
        break;
    }
  }
  return (*emulation)->source.text;
}

// Results accumulated across microbatches (nn.accumulated): a call with
// TANDEM_FRAGMENT_ACCUMULATE adds to what the result buffers hold, a call
// without it writes over them. The weight gradient's plain GEMM adds with
// beta = 1, the bias gradient (a column reduction) in its kernel, the
// returned argument (a copy) through the add at the end; the second
// microbatch's call
// gives bitwise the f32 sum of the two calls made alone, as the runtime's
// own sum would. Result 3 is not accumulated.
TEST(EmulationAccumulation, ASecondCallAddsToTheFirst) {
  const char *text =
      "func.func @grads(%x: tensor<8x16xf32>, %dy: tensor<8x12xf32>) -> "
      "(tensor<16x12xf32>, tensor<12xf32>, tensor<8x12xf32>, "
      "tensor<8x12xf32>) attributes {nn.accumulated = array<i64: 0, 1, 2>} "
      "{\n"
      "  %w = nn.matmul %x, %dy {transpose_lhs} : tensor<8x16xf32>, "
      "tensor<8x12xf32> -> tensor<16x12xf32>\n"
      "  %b = nn.reduce_sum %dy [0] : tensor<8x12xf32> -> tensor<12xf32>\n"
      "  return %w, %b, %dy, %dy : tensor<16x12xf32>, tensor<12xf32>, "
      "tensor<8x12xf32>, tensor<8x12xf32>\n}\n";
  std::string source =
      expectSecondCallAdds(text, {{8 * 16, 4}, {8 * 12, 4}},
                           {16 * 12 * 4, 12 * 4, 8 * 12 * 4, 8 * 12 * 4},
                           /*accumulated=*/3, 20261204);
  EXPECT_NE(source.find("TK_OP_GEMM_ACCUMULATE, "), std::string::npos);
  EXPECT_NE(source.find("TK_OP_ACCUMULATE, "), std::string::npos);
}

// A summed result that its kernel writes each element of once is written
// into its sum by that kernel (a tk_sum parameter, TK_SUM in the program):
// no scratch and no add at the end. An elementwise kernel in 16-byte
// vectors (8x16) and one element at a time (3x5), and a column reduction
// in two passes (300 terms per output: partials, then the pass that
// finishes each output adds it to the sum). The first call writes over
// what the buffers hold (zeros here: adding to them would turn the -0 of
// 0 x -1 into +0, and the 0x7f garbage of expectSecondCallAdds into
// ~3e38); the second adds in f32, bitwise the sum of the two calls alone.
TEST(EmulationAccumulation, KernelsWriteTheirSumsInPlace) {
  const char *text =
      "func.func @grads(%x: tensor<8x16xf32>, %y: tensor<8x16xf32>, "
      "%a: tensor<3x5xf32>, %b: tensor<3x5xf32>, %c: tensor<300x4xf32>) -> "
      "(tensor<8x16xf32>, tensor<3x5xf32>, tensor<4xf32>) "
      "attributes {nn.accumulated = array<i64: 0, 1, 2>} {\n"
      "  %p = nn.mul %x, %y : tensor<8x16xf32>, tensor<8x16xf32> -> "
      "tensor<8x16xf32>\n"
      "  %q = nn.mul %a, %b : tensor<3x5xf32>, tensor<3x5xf32> -> "
      "tensor<3x5xf32>\n"
      "  %r = nn.reduce_sum %c [0] : tensor<300x4xf32> -> tensor<4xf32>\n"
      "  return %p, %q, %r : tensor<8x16xf32>, tensor<3x5xf32>, "
      "tensor<4xf32>\n}\n";
  std::string source = expectSecondCallAdds(
      text, {{128, 4}, {128, 4}, {15, 4}, {15, 4}, {1200, 4}},
      {128 * 4, 15 * 4, 4 * 4}, /*accumulated=*/3, 20261207);
  EXPECT_EQ(source.find("TK_OP_ACCUMULATE, "), std::string::npos);
  EXPECT_NE(source.find(", TK_RESULT(0), TK_ARG(0), TK_ARG(1), TK_SUM,"),
            std::string::npos);
  EXPECT_NE(source.find(", TK_RESULT(1), TK_ARG(2), TK_ARG(3), TK_SUM,"),
            std::string::npos);
  EXPECT_NE(source.find("partials"), std::string::npos);

  // The -0 of the first microbatch survives its store.
  auto emulation = cuda::testing::buildEmulation(text);
  ASSERT_TRUE(static_cast<bool>(emulation))
      << llvm::toString(emulation.takeError());
  std::mt19937 rng(20261208);
  std::vector<std::vector<char>> inputs = {
      randomElements(rng, 128, 4), randomElements(rng, 128, 4),
      randomElements(rng, 15, 4), randomElements(rng, 15, 4),
      randomElements(rng, 1200, 4)};
  const float zero = 0.0f, minusOne = -1.0f;
  for (int k : {0, 2}) { // x[0] = 0, y[0] = -1; a[0] = 0, b[0] = -1
    std::memcpy(inputs[k].data(), &zero, 4);
    std::memcpy(inputs[k + 1].data(), &minusOne, 4);
  }
  std::vector<std::vector<char>> results = {std::vector<char>(128 * 4),
                                            std::vector<char>(15 * 4),
                                            std::vector<char>(4 * 4)};
  ASSERT_EQ(runEmulated(*(*emulation)->library, "grads", inputs, results), 0);
  for (int r : {0, 1}) {
    float first;
    std::memcpy(&first, results[r].data(), 4);
    EXPECT_EQ(first, 0.0f) << "result " << r;
    EXPECT_TRUE(std::signbit(first)) << "result " << r << " lost its -0";
  }
}

// Under mixed precision the weight gradient is a bf16 GEMM widened to f32
// (the cast is its epilogue): it too adds into the f32 sum with beta = 1,
// and no add kernel is left.
TEST(EmulationAccumulation, AWidenedGemmAddsWithBetaOne) {
  const char *text =
      "func.func @grads(%x: tensor<8x16xbf16>, %dy: tensor<8x12xbf16>) -> "
      "tensor<16x12xf32> attributes {nn.accumulated = array<i64: 0>} {\n"
      "  %w = nn.matmul %x, %dy {transpose_lhs} : tensor<8x16xbf16>, "
      "tensor<8x12xbf16> -> tensor<16x12xbf16>\n"
      "  %f = nn.cast %w : tensor<16x12xbf16> to tensor<16x12xf32>\n"
      "  return %f : tensor<16x12xf32>\n}\n";
  std::string source =
      expectSecondCallAdds(text, {{8 * 16, 2}, {8 * 12, 2}}, {16 * 12 * 4},
                           /*accumulated=*/1, 20261205);
  EXPECT_NE(source.find("TK_OP_GEMM_ACCUMULATE, "), std::string::npos);
  EXPECT_EQ(source.find("TK_OP_ACCUMULATE, "), std::string::npos);
}

// Under mixed precision a bias gradient is a bf16 column sum widened to
// f32; the widening cast is the reduction's epilogue, so the kernel that
// finishes each output (the one pass over 8 terms, or the pass over the
// partials of 300) adds the widened value into the f32 sum itself: no
// cast launch, no add at the end. The widened value is the bf16 sum's,
// bit for bit (@sums returns the bf16 sums of the same inputs).
TEST(EmulationAccumulation, AWidenedColumnSumAddsInItsReduction) {
  const char *text =
      "func.func @grads(%a: tensor<8x12xbf16>, %c: tensor<300x4xbf16>) -> "
      "(tensor<12xf32>, tensor<4xf32>) "
      "attributes {nn.accumulated = array<i64: 0, 1>} {\n"
      "  %s = nn.reduce_sum %a [0] : tensor<8x12xbf16> -> tensor<12xbf16>\n"
      "  %sf = nn.cast %s : tensor<12xbf16> to tensor<12xf32>\n"
      "  %r = nn.reduce_sum %c [0] : tensor<300x4xbf16> -> tensor<4xbf16>\n"
      "  %rf = nn.cast %r : tensor<4xbf16> to tensor<4xf32>\n"
      "  return %sf, %rf : tensor<12xf32>, tensor<4xf32>\n}\n"
      "func.func @sums(%a: tensor<8x12xbf16>, %c: tensor<300x4xbf16>) -> "
      "(tensor<12xbf16>, tensor<4xbf16>) {\n"
      "  %s = nn.reduce_sum %a [0] : tensor<8x12xbf16> -> tensor<12xbf16>\n"
      "  %r = nn.reduce_sum %c [0] : tensor<300x4xbf16> -> tensor<4xbf16>\n"
      "  return %s, %r : tensor<12xbf16>, tensor<4xbf16>\n}\n";
  std::string source = expectSecondCallAdds(
      text, {{96, 2}, {1200, 2}}, {12 * 4, 4 * 4}, /*accumulated=*/2, 20261209);
  EXPECT_EQ(source.find("TK_OP_ACCUMULATE, "), std::string::npos);
  EXPECT_NE(source.find(", TK_RESULT(0), TK_ARG(0), TK_SUM,"),
            std::string::npos);
  EXPECT_NE(source.find("TK_RESULT(1), TK_SCRATCH(0), TK_SUM,"),
            std::string::npos);

  auto emulation = cuda::testing::buildEmulation(text);
  ASSERT_TRUE(static_cast<bool>(emulation))
      << llvm::toString(emulation.takeError());
  std::mt19937 rng(20261210);
  std::vector<std::vector<char>> inputs = {randomElements(rng, 96, 2),
                                           randomElements(rng, 1200, 2)};
  std::vector<std::vector<char>> widened = {std::vector<char>(12 * 4),
                                            std::vector<char>(4 * 4)};
  std::vector<std::vector<char>> narrow = {std::vector<char>(12 * 2),
                                           std::vector<char>(4 * 2)};
  ASSERT_EQ(runEmulated(*(*emulation)->library, "grads", inputs, widened), 0);
  ASSERT_EQ(runEmulated(*(*emulation)->library, "sums", inputs, narrow), 0);
  for (size_t r = 0; r < 2; ++r)
    for (size_t i = 0; i < narrow[r].size() / 2; ++i) {
      uint16_t high;
      uint32_t bits;
      std::memcpy(&high, &narrow[r][i * 2], 2);
      std::memcpy(&bits, &widened[r][i * 4], 4);
      EXPECT_EQ(bits, uint32_t{high} << 16)
          << "result " << r << " element " << i;
    }
}

// A residual add computed in the norm's row kernel (the norm's row input)
// gives the bits of the add's own kernel followed by the norm: @fused
// computes the sums where the norms read them (the layer norm's stored,
// since it is returned), @apart reads each sum before its norm, which
// keeps the add a kernel of its own. The f32 stream plus a widened bf16
// branch into a layer norm, and two bf16 buffers into an RMS norm.
TEST(EmulationRowInput, GivesTheBitsOfTheAddsOwnKernel) {
  const char *body =
      "  %pf = nn.cast %p : tensor<3x300xbf16> to tensor<3x300xf32>\n"
      "  %x = nn.add %r, %pf : tensor<3x300xf32>, tensor<3x300xf32> -> "
      "tensor<3x300xf32>\n"
      "  %x2 = nn.add %r2, %p2 : tensor<3x300xbf16>, tensor<3x300xbf16> -> "
      "tensor<3x300xbf16>\n"
      "  {0}"
      "  %n = nn.layer_norm %x, %w, %b {{epsilon = 1.0e-05 : f64} : "
      "tensor<3x300xf32>, tensor<300xf32>, tensor<300xf32>\n"
      "  %n2 = nn.rms_norm %x2, %v {{epsilon = 1.0e-05 : f64} : "
      "tensor<3x300xbf16>, tensor<300xbf16>\n"
      "  return %n, %x, %n2 : tensor<3x300xf32>, tensor<3x300xf32>, "
      "tensor<3x300xbf16>\n}\n";
  const char *signature =
      "(%r: tensor<3x300xf32>, %p: tensor<3x300xbf16>, %w: tensor<300xf32>, "
      "%b: tensor<300xf32>, %r2: tensor<3x300xbf16>, %p2: "
      "tensor<3x300xbf16>, %v: tensor<300xbf16>) -> (tensor<3x300xf32>, "
      "tensor<3x300xf32>, tensor<3x300xbf16>) {\n";
  std::string text =
      std::string("func.func @fused") + signature +
      llvm::formatv(body, "").str() + "func.func @apart" + signature +
      llvm::formatv(body, "%e = nn.neg %x : tensor<3x300xf32>\n"
                          "  %e2 = nn.neg %x2 : tensor<3x300xbf16>\n")
          .str();
  auto emulation = cuda::testing::buildEmulation(text);
  ASSERT_TRUE(static_cast<bool>(emulation))
      << llvm::toString(emulation.takeError());
  const std::string &source = (*emulation)->source.text;
  EXPECT_NE(source.find("// nn.add + nn.layer_norm: 3 rows of 300"),
            std::string::npos);
  EXPECT_NE(source.find("// nn.add + nn.rms_norm: 3 rows of 300"),
            std::string::npos);
  std::mt19937 rng(20261211);
  std::vector<std::vector<char>> inputs = {
      randomElements(rng, 900, 4), randomElements(rng, 900, 2),
      randomElements(rng, 300, 4), randomElements(rng, 300, 4),
      randomElements(rng, 900, 2), randomElements(rng, 900, 2),
      randomElements(rng, 300, 2)};
  std::vector<std::vector<char>> fused = {std::vector<char>(900 * 4),
                                          std::vector<char>(900 * 4),
                                          std::vector<char>(900 * 2)};
  std::vector<std::vector<char>> apart = fused;
  ASSERT_EQ(runEmulated(*(*emulation)->library, "fused", inputs, fused), 0);
  ASSERT_EQ(runEmulated(*(*emulation)->library, "apart", inputs, apart), 0);
  for (size_t r = 0; r < fused.size(); ++r)
    EXPECT_TRUE(fused[r] == apart[r]) << "result " << r;
}

// Attention reading q, k and v in place from their split's operand and
// writing dq, dk and dv in place into their concat gives bitwise the
// general path's results, where the split and the concat copy (there the
// pieces are also returned, so they keep buffers of their own): only the
// addressing changes, not the arithmetic. 70 rows (two blocks of queries,
// several tiles), heads of odd width, ungrouped and grouped, f32 and bf16.
TEST(EmulationAttentionInPlace, GivesTheCopiesBits) {
  for (const char *t : {"f32", "bf16"}) {
    for (auto [heads, hd, kvHeads] :
         {std::array<int64_t, 3>{3, 5, 3}, std::array<int64_t, 3>{4, 3, 2}}) {
      SCOPED_TRACE(llvm::formatv("{0}, {1} heads of {2}, {3} key heads", t,
                                 heads, hd, kvHeads)
                       .str());
      const int64_t len = 70, width = heads * hd, kvWidth = kvHeads * hd,
                    all = width + 2 * kvWidth;
      auto tensor = [&](int64_t w) {
        return "tensor<2x" + std::to_string(len) + "x" + std::to_string(w) +
               "x" + t + ">";
      };
      std::string whole = tensor(all), qt = tensor(width), kt = tensor(kvWidth);
      std::string attrs =
          "{causal, heads = " + std::to_string(heads) + " : i64" +
          (kvHeads < heads
               ? ", kv_heads = " + std::to_string(kvHeads) + " : i64}"
               : "}");
      std::string body = llvm::formatv(
          "  %q, %k, %v = nn.split %x {{axis = 2 : i64, sizes = array<i64: "
          "{0}, {1}, {1}>} : {2} -> {3}, {4}, {4}\n"
          "  %y, %lse = nn.attention %q, %k, %v {5} : {3}, {4}, {4} -> {3}, "
          "{6}\n"
          "  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %y, %lse, %g {5} : "
          "{3}, {4}, {4}, {3}, {6}, {3} -> {3}, {4}, {4}\n"
          "  %d = nn.concat %dq, %dk, %dv {{axis = 2 : i64} : ({3}, {4}, {4}) "
          "-> {2}\n",
          width, kvWidth, whole, qt, kt, attrs,
          "tensor<2x" + std::to_string(heads) + "x" + std::to_string(len) +
              "xf32>");
      std::string text = llvm::formatv(
          "func.func @in_place(%x: {0}, %g: {1}) -> ({1}, {0}) {{\n{3}"
          "  return %y, %d : {1}, {0}\n}\n"
          "func.func @copied(%x: {0}, %g: {1}) -> ({1}, {0}, {1}, {2}, {2}, "
          "{1}, {2}, {2}) {{\n{3}"
          "  return %y, %d, %q, %k, %v, %dq, %dk, %dv : {1}, {0}, {1}, {2}, "
          "{2}, {1}, {2}, {2}\n}\n",
          whole, qt, kt, body);
      auto emulation = cuda::testing::buildEmulation(text);
      ASSERT_TRUE(static_cast<bool>(emulation))
          << llvm::toString(emulation.takeError());
      // In place: the forward and the backward's three kernels, no copy;
      // the general path adds three copies out of the split and three into
      // the concat.
      const std::string &source = (*emulation)->source.text;
      auto launches = [&](const std::string &name) {
        size_t from = source.find("tandem_" + name + "_program[] = {");
        size_t to = source.find("TK_OP_END", from);
        if (from == std::string::npos || to == std::string::npos)
          return -1;
        llvm::StringRef program(source.data() + from, to - from);
        return static_cast<int>(program.count("TK_OP_LAUNCH"));
      };
      EXPECT_EQ(launches("in_place"), 4);
      EXPECT_EQ(launches("copied"), 10);

      size_t bytes = std::string(t) == "f32" ? 4 : 2;
      std::mt19937 rng(20261206);
      std::vector<std::vector<char>> inputs = {
          randomElements(rng, 2 * len * all, bytes),
          randomElements(rng, 2 * len * width, bytes)};
      std::vector<std::vector<char>> inPlace = {
          std::vector<char>(2 * len * width * bytes),
          std::vector<char>(2 * len * all * bytes)};
      std::vector<std::vector<char>> copied = inPlace;
      for (int64_t w : {width, kvWidth, kvWidth, width, kvWidth, kvWidth})
        copied.emplace_back(2 * len * w * bytes);
      cpu::testing::Library &loaded = *(*emulation)->library;
      ASSERT_EQ(runEmulated(loaded, "in_place", inputs, inPlace), 0);
      ASSERT_EQ(runEmulated(loaded, "copied", inputs, copied), 0);
      // The elements whose bits differ.
      auto differing = [&](size_t r) {
        size_t n = 0;
        for (size_t i = 0; i < inPlace[r].size(); i += bytes)
          n += std::memcmp(&inPlace[r][i], &copied[r][i], bytes) != 0;
        return n;
      };
      EXPECT_EQ(differing(0), 0u) << "elements of y";
      EXPECT_EQ(differing(1), 0u) << "elements of the concat of dq, dk, dv";
    }
  }
}

// The tensor-core backward kernels (TensorCorePrelude.h) against the
// CUDA-core ones, bf16, from the same q, k, v, y, log-sum-exp and dy (so
// no side rounds y or computes the statistics differently): both walk
// every sum in increasing index with fmas from the same bf16 operands, so
// the scores and dP are the same; they differ by D = dy·y (another order:
// |D| <= HD, off by at most 2 HD² units u = 2^-24 on each side) and by the
// tensor cores' rounding of dS and P to bf16 (2^-9 relative each, 2^-8 for
// both sides' difference) before their products; were a score or dP
// computed in another order, by HD² u of the score (relatively, through
// P) and of dP. Per element, in double from the inputs: a term's dS within
// |dS| (2^-8 + HD² u + (T + 16) 4u) + 3 P HD² u (the last of |dS|'s
// factors: the f32 sum over T terms, each side), so dq_i within
// scale Σ_j (that) |k_j|, dk_j within scale Σ_i (that) |q_i|, dv_j within
// Σ_i P_ij (2^-8 + HD² u + (G Tq + 16) 4u) |dy_i|, plus each side's half
// ulp of the result. The log-sum-exp is max S·scale + 1 + u with
// u in [0, 1), so every P is at most 1. An index or fragment mistake is off
// by the values' magnitude.
TEST(EmulationTensorCoreAttention, BackwardWithinItsBoundOfTheCudaCoreKernels) {
  struct Shape {
    int64_t tq, tk, heads, kvHeads, hd;
    bool causal;
  };
  for (const Shape &shape :
       {Shape{70, 70, 2, 1, 16, true}, Shape{40, 90, 1, 1, 64, false}}) {
    SCOPED_TRACE(llvm::formatv("Tq {0}, Tk {1}, {2} heads of {3}, {4} key "
                               "heads, causal {5}",
                               shape.tq, shape.tk, shape.heads, shape.hd,
                               shape.kvHeads, shape.causal)
                     .str());
    const int64_t B = 2, H = shape.heads, KV = shape.kvHeads, HD = shape.hd;
    const int64_t G = H / KV, Tq = shape.tq, Tk = shape.tk;
    auto tensor = [&](int64_t t, int64_t w, const char *e) {
      return llvm::formatv("tensor<{0}x{1}x{2}x{3}>", B, t, w, e).str();
    };
    std::string qt = tensor(Tq, H * HD, "bf16"),
                kt = tensor(Tk, KV * HD, "bf16"),
                lt = llvm::formatv("tensor<{0}x{1}x{2}xf32>", B, H, Tq).str();
    std::string attrs = llvm::formatv("{{{0}heads = {1} : i64, kv_heads = {2} "
                                      ": i64}",
                                      shape.causal ? "causal, " : "", H, KV)
                            .str();
    std::string text = llvm::formatv(
        "func.func @grad(%q: {0}, %k: {1}, %v: {1}, %y: {0}, %lse: {2}, %g: "
        "{0}) -> ({0}, {1}, {1}) {{\n"
        "  %dq, %dk, %dv = nn.attention_grad %q, %k, %v, %y, %lse, %g {3} : "
        "{0}, {1}, {1}, {0}, {2}, {0} -> {0}, {1}, {1}\n"
        "  return %dq, %dk, %dv : {0}, {1}, {1}\n}\n",
        qt, kt, lt, attrs);
    cuda::EmitOptions cudaCores;
    cudaCores.tensorCoreAttention = false;
    auto tc = cuda::testing::buildEmulation(text);
    auto scalar = cuda::testing::buildEmulation(text, cudaCores);
    ASSERT_TRUE(static_cast<bool>(tc)) << llvm::toString(tc.takeError());
    ASSERT_TRUE(static_cast<bool>(scalar))
        << llvm::toString(scalar.takeError());
    ASSERT_NE((*tc)->source.text.find("tk_attention_grad_keys_tc<"),
              std::string::npos);
    ASSERT_EQ((*scalar)->source.text.find("tk_attention_grad_keys_tc<"),
              std::string::npos);

    std::mt19937 rng(20261208);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f), up(0.0f, 1.0f);
    auto bf16Values = [&](int64_t n) {
      std::vector<float> v(n);
      for (float &x : v)
        x = static_cast<float>(
            tandem_round::fromBF16(tandem_round::toBF16(unit(rng))));
      return v;
    };
    std::vector<float> q = bf16Values(B * Tq * H * HD),
                       k = bf16Values(B * Tk * KV * HD),
                       v = bf16Values(B * Tk * KV * HD),
                       y = bf16Values(B * Tq * H * HD),
                       g = bf16Values(B * Tq * H * HD);
    const double scale = 1.0 / std::sqrt(static_cast<double>(HD));
    auto qAt = [&](const std::vector<float> &x, int64_t b, int64_t i, int64_t h,
                   int64_t d) {
      return static_cast<double>(x[(b * Tq + i) * H * HD + h * HD + d]);
    };
    auto kAt = [&](const std::vector<float> &x, int64_t b, int64_t j, int64_t h,
                   int64_t d) {
      return static_cast<double>(x[(b * Tk + j) * KV * HD + h * HD + d]);
    };
    auto visible = [&](int64_t i, int64_t j) {
      return !shape.causal || j <= i;
    };
    auto score = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
      double s = 0;
      for (int64_t d = 0; d < HD; ++d)
        s += qAt(q, b, i, h, d) * kAt(k, b, j, h / G, d);
      return s * scale;
    };
    std::vector<float> lse(B * H * Tq);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < Tq; ++i) {
          double top = -1e30;
          for (int64_t j = 0; j < Tk; ++j)
            if (visible(i, j))
              top = std::max(top, score(b, h, i, j));
          lse[(b * H + h) * Tq + i] = static_cast<float>(top + 1 + up(rng));
        }
    auto bytes = [](const std::vector<float> &x, bool narrow) {
      std::vector<char> out(x.size() * (narrow ? 2 : 4));
      for (size_t i = 0; i < x.size(); ++i) {
        if (!narrow) {
          std::memcpy(&out[i * 4], &x[i], 4);
          continue;
        }
        uint16_t h = tandem_round::toBF16(x[i]);
        std::memcpy(&out[i * 2], &h, 2);
      }
      return out;
    };
    std::vector<std::vector<char>> inputs = {bytes(q, true),    bytes(k, true),
                                             bytes(v, true),    bytes(y, true),
                                             bytes(lse, false), bytes(g, true)};
    std::vector<std::vector<char>> a = {std::vector<char>(q.size() * 2),
                                        std::vector<char>(k.size() * 2),
                                        std::vector<char>(k.size() * 2)};
    std::vector<std::vector<char>> c = a;
    ASSERT_EQ(runEmulated(*(*tc)->library, "grad", inputs, a), 0);
    ASSERT_EQ(runEmulated(*(*scalar)->library, "grad", inputs, c), 0);
    auto value = [](const std::vector<char> &r, size_t i) {
      uint16_t h;
      std::memcpy(&h, &r[i * 2], 2);
      return tandem_round::fromBF16(h);
    };
    // Per term (query i, key j of head h): P, |dS| and the f32 slack.
    const double u = std::ldexp(1.0, -24), hd = static_cast<double>(HD);
    std::vector<double> dqBound(q.size()), dkBound(k.size()), dvBound(k.size());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < Tq; ++i) {
          double dot = 0;
          for (int64_t d = 0; d < HD; ++d)
            dot += qAt(g, b, i, h, d) * qAt(y, b, i, h, d);
          for (int64_t j = 0; j < Tk; ++j) {
            if (!visible(i, j))
              continue;
            double p = std::exp(score(b, h, i, j) - lse[(b * H + h) * Tq + i]),
                   dp = 0;
            for (int64_t d = 0; d < HD; ++d)
              dp += qAt(g, b, i, h, d) * kAt(v, b, j, h / G, d);
            double ds =
                std::fabs(p * (dp - dot)) *
                    (std::ldexp(1.0, -8) + hd * hd * u + (Tk + 16) * 4 * u) +
                p * 3 * hd * hd * u;
            for (int64_t d = 0; d < HD; ++d) {
              dqBound[(b * Tq + i) * H * HD + h * HD + d] +=
                  scale * ds * std::fabs(kAt(k, b, j, h / G, d));
              dkBound[(b * Tk + j) * KV * HD + h / G * HD + d] +=
                  scale * ds * std::fabs(qAt(q, b, i, h, d));
              dvBound[(b * Tk + j) * KV * HD + h / G * HD + d] +=
                  p *
                  (std::ldexp(1.0, -8) + hd * hd * u + (Tq * G + 16) * 4 * u) *
                  std::fabs(qAt(g, b, i, h, d));
            }
          }
        }
    auto compare = [&](const char *name, size_t r,
                       const std::vector<double> &bound) {
      SCOPED_TRACE(name);
      unsigned bad = 0;
      for (size_t i = 0; i < bound.size(); ++i) {
        double x = value(a[r], i), want = value(c[r], i);
        // Each side's rounding to bf16: half an ulp of each.
        double allowed = bound[i] + std::ldexp(std::fabs(want), -8) +
                         std::ldexp(std::fabs(x), -8);
        if (!(std::fabs(x - want) <= allowed) && ++bad <= 3)
          ADD_FAILURE() << "element " << i << ": " << x << " against " << want
                        << " (allowed " << allowed << ")";
      }
      EXPECT_EQ(bad, 0u);
    };
    compare("dq", 0, dqBound);
    compare("dk", 1, dkBound);
    compare("dv", 2, dvBound);
  }
}
