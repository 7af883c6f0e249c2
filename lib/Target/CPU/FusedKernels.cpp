//===- FusedKernels.cpp - fused functions of the CPU emitter --------------===//
//
// Writes one C++ function per fused group (elementwise loop nests,
// reductions with their prologue and epilogue, GEMM epilogues), shared by
// every group with the same text.
//
//===----------------------------------------------------------------------===//

#include "FunctionEmitter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/xxhash.h"

using namespace mlir;
namespace nn = tandem::nn;

namespace tandem::cpu::detail {

//===----------------------------------------------------------------------===//
// Fused groups
//===----------------------------------------------------------------------===//

std::string FunctionEmitter::groupExpr(Operation *op,
                                       llvm::ArrayRef<std::string> in) {
  StringRef t = cTypeOf(op->getResult(0));
  std::string type = t.str();
  auto unaryDouble = [&](StringRef fn) {
    return "(" + type + ")" + fn.str() + "((double)" + in[0] + ")";
  };
  return llvm::TypeSwitch<Operation *, std::string>(op)
      .Case([&](nn::NegOp) { return "(" + type + ")(-" + in[0] + ")"; })
      .Case([&](nn::ExpOp) { return unaryDouble("tandem_math::exp"); })
      .Case([&](nn::LogOp) { return unaryDouble("std::log"); })
      .Case([&](nn::TanhOp) { return unaryDouble("tandem_math::tanh"); })
      .Case([&](nn::SqrtOp) { return unaryDouble("std::sqrt"); })
      .Case([&](nn::RsqrtOp) { return unaryDouble("tk_rsqrt"); })
      .Case([&](nn::ReluOp) { return unaryDouble("tk_relu"); })
      .Case([&](nn::GeluOp) { return unaryDouble("tk_gelu"); })
      .Case([&](nn::SiluOp) { return unaryDouble("tk_silu"); })
      .Case([&](nn::SinOp) { return unaryDouble("std::sin"); })
      .Case([&](nn::CosOp) { return unaryDouble("std::cos"); })
      // In double rounded once, as the evaluator.
      .Case([&](nn::ErfOp) { return unaryDouble("std::erf"); })
      .Case([&](nn::ErfcOp) { return unaryDouble("std::erfc"); })
      // The value unchanged: only its gradient is zero.
      .Case([&](nn::StopGradientOp) { return in[0]; })
      .Case([&](nn::PowOp pow) {
        return "(" + type + ")std::pow((double)" + in[0] + ", " +
               doubleLiteral(pow.getExponent().convertToDouble()) + ")";
      })
      // +, -, *, / of two floats rounded once to float equal the double
      // operation rounded to float (double has more than 2p+2 bits), so
      // they run in the storage type and vectorize at full width.
      .Case([&](nn::AddOp) { return "(" + in[0] + " + " + in[1] + ")"; })
      .Case([&](nn::SubOp) { return "(" + in[0] + " - " + in[1] + ")"; })
      .Case([&](nn::MulOp) { return "(" + in[0] + " * " + in[1] + ")"; })
      .Case([&](nn::DivOp) { return "(" + in[0] + " / " + in[1] + ")"; })
      .Case([&](nn::MaximumOp) {
        return "tk_maximum(" + in[0] + ", " + in[1] + ")";
      })
      .Case([&](nn::MinimumOp) {
        return "tk_minimum(" + in[0] + ", " + in[1] + ")";
      })
      .Case([&](nn::GreaterEqualOp) {
        return "(" + in[0] + " >= " + in[1] + " ? (" + type + ")1 : (" + type +
               ")0)";
      })
      .Case([&](nn::SelectOp) {
        return "(" + in[0] + " != 0 ? " + in[1] + " : " + in[2] + ")";
      })
      .Case([&](nn::BroadcastToOp) { return in[0]; })
      // Through double, as the evaluator: an i64 operand rounds to double
      // first.
      .Case([&](nn::CastOp) { return "(" + type + ")(double)" + in[0]; })
      .Default([](Operation *) { return std::string(); });
}

/// Loads every input `readers` read into a local (t_i<k>), at `indexOf`'s
/// index. A GEMM product is read from the output it shares memory with.
void FunctionEmitter::writeLoads(llvm::raw_ostream &b,
                                 llvm::ArrayRef<Operation *> readers,
                                 llvm::ArrayRef<Value> inputs,
                                 llvm::function_ref<std::string(Value)> indexOf,
                                 StringRef indent,
                                 llvm::DenseMap<Value, std::string> &local) {
  for (auto [i, input] : llvm::enumerate(inputs)) {
    bool read = llvm::any_of(readers, [&](Operation *reader) {
      return llvm::is_contained(reader->getOperands(), input);
    });
    if (!read)
      continue;
    std::string index = numElements(input) == 1 ? "0" : indexOf(input);
    local[input] = "t_i" + std::to_string(i);
    b << indent << "const " << cTypeOf(input) << " t_i" << i << " = i" << i
      << "[" << index << "];\n";
  }
}

/// Computes `ops` (members of `group`, not its reduction) into locals t<k>,
/// k the member's index in the group.
void FunctionEmitter::writeMembers(llvm::raw_ostream &b, const Group &group,
                                   llvm::ArrayRef<Operation *> ops,
                                   StringRef indent,
                                   llvm::DenseMap<Value, std::string> &local) {
  for (Operation *member : ops) {
    llvm::SmallVector<std::string> operands;
    for (Value operand : member->getOperands())
      operands.push_back(splats.count(operand) ? splats.lookup(operand)
                                               : local.lookup(operand));
    std::string name = "t" + std::to_string(llvm::find(group.members, member) -
                                            group.members.begin());
    b << indent << "const " << cTypeOf(member->getResult(0)) << " " << name
      << " = " << groupExpr(member, operands) << ";\n";
    local[member->getResult(0)] = name;
  }
}

/// One loop nest over the group's shape: flat when every input has the
/// shape or one element, else one loop per dimension with broadcast reads.
void FunctionEmitter::writeElementwiseLoops(llvm::raw_ostream &b,
                                            int groupIndex,
                                            llvm::ArrayRef<Value> inputs,
                                            llvm::ArrayRef<Value> outputs) {
  Group &group = groups[groupIndex];
  llvm::ArrayRef<int64_t> shape = group.shape;
  int64_t count = numElementsOf(shape);
  bool flat = llvm::all_of(inputs, [&](Value input) {
    return tensorType(input).getShape() == shape || numElements(input) == 1;
  });
  int depth = 1;
  std::string indent = "  ";
  // Iterations are independent: `simd` gets the loop vectorized inside
  // OpenMP's outlined function, where GCC otherwise leaves it scalar.
  if (flat) {
    b << "  #pragma omp parallel for simd if (" << count << " >= 32768)\n";
    b << "  for (int64_t i = 0; i < " << count << "; ++i) {\n";
    indent = "    ";
  } else {
    depth = openLoops(b, shape, "  ", /*parallel=*/true, /*simd=*/true);
    indent = std::string(2 + 2 * depth, ' ');
  }
  std::string flatIndex = flat ? "i" : offsetExpr(rowMajorStrides(shape));
  llvm::DenseMap<Value, std::string> local;
  writeLoads(
      b, group.members, inputs,
      [&](Value input) {
        if (flat)
          return std::string("i");
        return offsetExpr(
            broadcastStrides(tensorType(input).getShape(), shape));
      },
      indent, local);
  if (group.gemm) {
    // The GEMM product lives in the output this iteration overwrites: read
    // it before any store.
    unsigned slot = llvm::find(outputs, group.gemmOutput) - outputs.begin();
    local[group.gemm->getResult(0)] = "t_g";
    b << indent << "const " << cTypeOf(group.gemmOutput) << " t_g = o" << slot
      << "[" << flatIndex << "];\n";
  }
  writeMembers(b, group, group.members, indent, local);
  for (auto [i, output] : llvm::enumerate(outputs))
    b << indent << "o" << i << "[" << flatIndex << "] = " << local[output]
      << ";\n";
  if (flat)
    b << "  }\n";
  else
    closeLoops(b, depth, "  ");
}

/// The reduction's loop nest, parallel over output elements only, so every
/// output sums its inputs in increasing row-major index (in double, as the
/// evaluator) whatever the thread count. Any loop order that keeps the
/// reduced dimensions in their relative order visits each output's inputs
/// in that order; two orders are used:
///
/// - the last dimension reduced ("rows"): one output per iteration of a
///   flat parallel loop, the reduced dimensions nested inside, one scalar
///   accumulator;
/// - the last dimension kept ("columns", e.g. bias gradients): blocks of up
///   to 64 consecutive outputs along it per parallel iteration, the reduced
///   dimensions nested outside the block so memory is read contiguously.
///
/// The prologue runs at every input element inside the innermost loop,
/// storing the values read elsewhere later; the epilogue runs once per
/// output after its sum is rounded.
void FunctionEmitter::writeReductionLoops(llvm::raw_ostream &b, int groupIndex,
                                          llvm::ArrayRef<Value> inputs,
                                          llvm::ArrayRef<Value> outputs) {
  Group &group = groups[groupIndex];
  Operation *reduction = group.reduction;
  Value input = reduction->getOperand(0), result = reduction->getResult(0);
  llvm::ArrayRef<int64_t> shape = tensorType(input).getShape();
  llvm::ArrayRef<int64_t> resultShape = tensorType(result).getShape();
  auto axes = reduction->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
  bool mean = isa<nn::ReduceMeanOp>(reduction);
  bool max = isa<nn::ReduceMaxOp>(reduction);
  int64_t rank = shape.size();
  int64_t count = numElements(result), total = numElements(input);
  StringRef type = cTypeOf(result);

  llvm::SmallVector<std::string> inputVars;
  llvm::SmallVector<int64_t> kept, reduced;
  for (int64_t d = 0; d < rank; ++d) {
    inputVars.push_back("d" + std::to_string(d));
    (llvm::is_contained(axes, d) ? reduced : kept).push_back(d);
  }
  // The result's dimensions named by the input's loop variables (keepdims
  // keeps the reduced ones as size 1, which no index reads).
  llvm::SmallVector<std::string> resultVars;
  if (static_cast<int64_t>(resultShape.size()) == rank)
    resultVars = inputVars;
  else
    for (int64_t d : kept)
      resultVars.push_back(inputVars[d]);
  double divisor = 1.0;
  for (int64_t axis : axes)
    divisor *= static_cast<double>(shape[axis]);

  auto split = llvm::find(group.members, reduction);
  llvm::ArrayRef<Operation *> members = group.members;
  llvm::ArrayRef<Operation *> prologue =
      members.take_front(split - group.members.begin());
  llvm::ArrayRef<Operation *> epilogue =
      members.drop_front(prologue.size() + 1);
  llvm::SmallVector<Operation *> readers(prologue.begin(), prologue.end());
  readers.push_back(reduction);
  auto isPrologue = [&](Value value) {
    return llvm::is_contained(prologue, value.getDefiningOp());
  };

  if (count == 0) {
    b << "  // empty result\n";
    return;
  }
  bool columns = rank > 0 && !llvm::is_contained(axes, rank - 1);
  int64_t last = columns ? shape[rank - 1] : 1;
  int64_t width = std::min<int64_t>(last, 64);
  int64_t blocks = (last + width - 1) / width;
  // Kept dimensions enumerated by the parallel loop (all of them for rows;
  // all but the last for columns), row-major.
  llvm::SmallVector<int64_t> outerDims(kept);
  if (columns)
    outerDims.pop_back();
  llvm::SmallVector<int64_t> outerSizes;
  for (int64_t d : outerDims)
    outerSizes.push_back(shape[d]);
  llvm::SmallVector<int64_t> outerStrides = rowMajorStrides(outerSizes);
  int64_t outer = numElementsOf(outerSizes);

  b << "  #pragma omp parallel for if (" << total << " >= 32768)\n";
  if (columns) {
    b << "  for (int64_t q = 0; q < " << outer * blocks << "; ++q) {\n";
    b << "    const int64_t j0 = q / " << blocks << ", c0 = q % " << blocks
      << " * " << width << ";\n";
    b << "    const int64_t c1 = c0 + " << width << " < " << last << " ? c0 + "
      << width << " : " << last << ";\n";
  } else {
    b << "  for (int64_t j0 = 0; j0 < " << outer << "; ++j0) {\n";
  }
  for (auto [i, d] : llvm::enumerate(outerDims)) {
    b << "    const int64_t d" << d << " = j0";
    if (outerStrides[i] != 1)
      b << " / " << outerStrides[i];
    if (i != 0) // j0 / stride is below the outermost size already.
      b << " % " << shape[d];
    b << ";\n";
  }
  std::string init = max ? "-(double)INFINITY" : "0.0";
  std::string acc = columns ? "acc[d" + std::to_string(rank - 1) + " - c0]"
                            : std::string("acc");
  if (columns)
    b << "    double acc[" << width << "];\n    for (int64_t c = 0; c < "
      << width << "; ++c)\n      acc[c] = " << init << ";\n";
  else
    b << "    double acc = " << init << ";\n";

  // The reduced dimensions in order, then (columns) the block.
  std::string indent = "    ";
  int depth = 0;
  for (int64_t d : reduced) {
    b << indent << "for (int64_t d" << d << " = 0; d" << d << " < " << shape[d]
      << "; ++d" << d << ") {\n";
    indent += "  ";
    ++depth;
  }
  std::string lastVar = "d" + std::to_string(rank - 1);
  if (columns) {
    // Each iteration owns one column's accumulator: no dependence between
    // them, and `omp simd` gets the loop vectorized inside OpenMP's
    // outlined function (where GCC otherwise leaves it scalar).
    b << indent << "#pragma omp simd\n";
    b << indent << "for (int64_t " << lastVar << " = c0; " << lastVar
      << " < c1; ++" << lastVar << ") {\n";
    indent += "  ";
    ++depth;
  }
  if (depth == 0) {
    b << indent << "{\n";
    indent += "  ";
    ++depth;
  }
  llvm::DenseMap<Value, std::string> local;
  writeLoads(
      b, readers, inputs,
      [&](Value value) {
        return offsetExpr(broadcastStrides(tensorType(value).getShape(), shape),
                          0, inputVars);
      },
      indent, local);
  writeMembers(b, group, prologue, indent, local);
  std::string inputIndex = offsetExpr(rowMajorStrides(shape), 0, inputVars);
  for (auto [i, output] : llvm::enumerate(outputs))
    if (isPrologue(output))
      b << indent << "o" << i << "[" << inputIndex << "] = " << local[output]
        << ";\n";
  std::string x =
      splats.count(input) ? splats.lookup(input) : local.lookup(input);
  b << indent << "const double x = (double)" << x << ";\n";
  if (max)
    b << indent << acc << " = (std::isnan(x) || std::isnan(" << acc
      << ")) ? (double)NAN : std::fmax(" << acc << ", x);\n";
  else
    b << indent << acc << " += x;\n";
  for (int i = depth - 1; i >= 0; --i)
    b << "    " << std::string(2 * i, ' ') << "}\n";

  indent = "    ";
  std::string resultIndex = "j0";
  if (columns) {
    b << "    #pragma omp simd\n";
    b << "    for (int64_t " << lastVar << " = c0; " << lastVar << " < c1; ++"
      << lastVar << ") {\n";
    b << "      const int64_t j = j0 * " << last << " + " << lastVar << ";\n";
    indent = "      ";
    resultIndex = "j";
  }
  // Rounded once to the result type, as the evaluator.
  b << indent << "const " << type << " t_r = (" << type << ")(" << acc
    << (mean ? " / " + doubleLiteral(divisor) : "") << ");\n";
  local[result] = "t_r";
  writeLoads(
      b, epilogue, inputs,
      [&](Value value) {
        return offsetExpr(
            broadcastStrides(tensorType(value).getShape(), resultShape), 0,
            resultVars);
      },
      indent, local);
  writeMembers(b, group, epilogue, indent, local);
  for (auto [i, output] : llvm::enumerate(outputs))
    if (!isPrologue(output))
      b << indent << "o" << i << "[" << resultIndex << "] = " << local[output]
        << ";\n";
  if (columns)
    b << "    }\n";
  b << "  }\n";
}

void FunctionEmitter::emitGroup(llvm::raw_ostream &os, int groupIndex) {
  Group &group = groups[groupIndex];
  // Inputs in order of first use, outputs in member order: the body text
  // then depends only on the group's structure, shapes and types. A GEMM
  // product is no input: it is read from the output it was written to.
  Value product = group.gemm ? group.gemm->getResult(0) : Value();
  llvm::SmallVector<Value> inputs, outputs;
  for (Operation *member : group.members)
    for (Value operand : member->getOperands())
      if (!inGroup(operand.getDefiningOp(), groupIndex) &&
          !splats.count(operand) && operand != product &&
          !llvm::is_contained(inputs, operand))
        inputs.push_back(operand);
  for (Operation *member : group.members)
    if (pointers.count(member->getResult(0)))
      outputs.push_back(member->getResult(0));

  std::string bodyText;
  llvm::raw_string_ostream b(bodyText);
  b << "(";
  StringRef restrict = group.mayAlias ? "" : "__restrict ";
  for (auto [i, output] : llvm::enumerate(outputs))
    b << (i ? ", " : "") << cTypeOf(output) << " *" << restrict << "o" << i;
  for (auto [i, input] : llvm::enumerate(inputs))
    b << (outputs.empty() && i == 0 ? "" : ", ") << "const " << cTypeOf(input)
      << " *" << restrict << "i" << i;
  b << ") {\n  // ";
  if (group.gemm)
    b << "epilogue of nn.matmul: ";
  for (auto [i, member] : llvm::enumerate(group.members))
    b << (i ? ", " : "") << member->getName();
  b << "\n";
  if (group.reduction)
    writeReductionLoops(b, groupIndex, inputs, outputs);
  else
    writeElementwiseLoops(b, groupIndex, inputs, outputs);
  b << "}\n";

  std::string &name = unit.groupByBody[bodyText];
  if (name.empty()) {
    uint64_t hash = llvm::xxh3_64bits(bodyText);
    name = std::string(group.reduction ? "tk_reduce_" : "tk_fused_") +
           llvm::utohexstr(hash, /*LowerCase=*/true);
    while (!unit.groupNames.insert(name).second)
      name += "_";
    unit.groups += "void " + name + bodyText + "\n";
  }
  ++unit.numGroupCalls;
  unsigned fusedOps = group.members.size() - (group.reduction ? 1 : 0);
  info.numFusedOps += fusedOps;
  if (fusedOps)
    ++info.numFusedGroups;
  if (group.reduction && fusedOps)
    ++info.numFusedReductions;
  // The GEMM and its epilogue are one kernel, counted at the matmul.
  if (group.gemm)
    ++info.numGemmEpilogues;
  else
    ++info.numKernels;

  if (group.gemm)
    os << "  // gemm epilogue of " << group.members.size() << " ops:";
  else if (group.reduction)
    os << "  // fused reduction of " << group.members.size() << " ops:";
  else
    os << "  // fused group of " << group.members.size() << " ops:";
  for (Operation *member : group.members)
    os << " " << member->getName().stripDialect();
  os << "\n  " << name << "(";
  bool firstArg = true;
  for (Value output : outputs) {
    os << (firstArg ? "" : ", ") << ptr(output);
    firstArg = false;
  }
  for (Value input : inputs) {
    os << (firstArg ? "" : ", ") << ptr(input);
    firstArg = false;
  }
  os << ");\n";
}

} // namespace tandem::cpu::detail
