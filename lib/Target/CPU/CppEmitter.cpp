//===- CppEmitter.cpp - C++ source for the CPU target ---------------------===//
//
// Emission runs in three steps per function: read the kernels recorded in
// the IR as groups (loadKernels, KernelGroups.cpp), give every value that
// needs memory a buffer (assignStorage), then write the body in program
// order (emitBody), fused groups through FusedKernels.cpp.
//
// Numerics follow the evaluator (lib/Eval): each op computes from its
// operands in double and rounds once to the result type, so for elementwise
// ops, reductions, normalizations and the losses the emitted code produces
// bitwise the evaluator's values (sums run in the same order, in double).
// Only matmuls differ: BLAS sums in float in its own order.
//
//===----------------------------------------------------------------------===//

#include "tandem/Target/CPU/CppEmitter.h"

#include "FunctionEmitter.h"

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Lowering/TargetBackend.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include "PreludeSource.h"

#include <cmath>
#include <optional>

using namespace mlir;
namespace nn = tandem::nn;
using tandem::cpu::EmitResult;
using tandem::cpu::EmittedFunction;

using namespace tandem::cpu::detail;

namespace tandem::cpu::detail {

std::string FunctionEmitter::allocate(int64_t bytes, unsigned start,
                                      unsigned end) {
  // A result nothing reads is still written when its op runs.
  return "(tk_scratch + " +
         scratch.request(static_cast<uint64_t>(bytes), start, end) + ")";
}

unsigned FunctionEmitter::emitTime(Operation *op) {
  auto it = groupOf.find(op);
  if (it != groupOf.end())
    op = groups[it->second].members.back();
  return position.lookup(op);
}

unsigned FunctionEmitter::lastRead(Value value) {
  unsigned last = 0;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<nn::ReshapeOp, nn::StageEndOp>(user))
      last = std::max(last, lastRead(user->getResult(use.getOperandNumber())));
    last = std::max(last, emitTime(user));
  }
  return last;
}

LogicalResult FunctionEmitter::checkOp(Operation *op) {
  if (isa<func::ReturnOp, tandem::mpmd::YieldOp>(op))
    return success();
  if (isa<nn::AttentionOp>(op))
    return op->emitError("nn.attention is not supported by the CPU emitter: "
                         "run nn-decompose-attention first");
  if (isa<nn::AttentionGradOp>(op))
    return op->emitError("nn.attention_grad is not supported by the CPU "
                         "emitter: differentiate with "
                         "nn-autodiff{decompose-attention=true}");
  if (isa<nn::GeluGradOp>(op))
    return op->emitError("nn.gelu_grad is not supported by the CPU emitter: "
                         "differentiate with nn-autodiff{decompose-gelu=true}");
  if (isa<nn::LayerNormGradOp, nn::RMSNormGradOp>(op))
    return op->emitError()
           << op->getName()
           << " is not supported by the CPU emitter: differentiate with "
              "nn-autodiff{decompose-norms=true}";
  if (op->getDialect() == nullptr || op->getDialect()->getNamespace() != "nn" ||
      isa<nn::ParameterOp>(op))
    return op->emitError("'")
           << op->getName() << "' is not supported by the CPU emitter";
  for (Value value : llvm::concat<Value>(op->getOperands(), op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape())
      return op->emitError("the CPU emitter needs statically shaped tensors, "
                           "found ")
             << value.getType();
    Type element = type.getElementType();
    if (!cType(element) ||
        (nn::payloadCode(element) >= 0 && !nn::handlesPayloads(op)))
      return op->emitError("'")
             << op->getName() << "' on " << element
             << " is not supported by the CPU emitter yet (supported element "
                "types: f32, f64, bf16, f16, i32, i64; i8, f8E4M3FN and "
                "f8E5M2 only as codec payloads, which nn.quantize, "
                "nn.dequantize and data movement handle)";
  }
  for (Value result : op->getResults())
    if (isa<IntegerType>(tensorType(result).getElementType()) &&
        !allowsIntegerResult(op) && !isa<nn::QuantizeOp>(op))
      return op->emitError("'")
             << op->getName()
             << "' with integer results is not supported by the CPU emitter "
                "yet";
  if (auto castOp = dyn_cast<nn::CastOp>(op))
    if (!isa<FloatType>(tensorType(castOp.getResult()).getElementType()))
      return op->emitError("'nn.cast' to an integer type is not supported by "
                           "the CPU emitter yet");
  return success();
}

LogicalResult FunctionEmitter::assignStorage() {
  for (BlockArgument argument : body->getArguments()) {
    std::string name = newName();
    declarations += "  " + cTypeOf(argument).str() + " *" + name + " = (" +
                    cTypeOf(argument).str() + " *)args[" +
                    std::to_string(argument.getArgNumber()) + "];\n";
    pointers[argument] = name;
  }
  Operation *terminator = body->getTerminator();
  llvm::DenseMap<Value, unsigned> returnCount;
  for (Value result : terminator->getOperands())
    ++returnCount[result];

  llvm::StringMap<std::string> parameterPointers;
  for (Operation &op : body->without_terminator()) {
    if (auto param = dyn_cast<nn::ParamOp>(op)) {
      std::string &name = parameterPointers[param.getName()];
      if (name.empty()) {
        name = newName();
        unsigned slot = info.argumentTypes.size() + info.parameters.size();
        info.parameters.push_back(
            {param.getName().str(), tensorType(param.getResult())});
        declarations += "  " + cTypeOf(param).str() + " *" + name + " = (" +
                        cTypeOf(param).str() + " *)args[" +
                        std::to_string(slot) + "];\n";
      }
      pointers[param.getResult()] = name;
      continue;
    }
    if (isa<nn::ReshapeOp, nn::StageEndOp>(op))
      continue; // Views, named when emitted.
    if (auto constant = dyn_cast<nn::ConstantOp>(op)) {
      auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!value)
        return op.emitError("the CPU emitter supports dense constants only");
      StringRef type = cTypeOf(constant);
      if (value.isSplat()) {
        splats[constant.getResult()] = elementLiteral(value, 0, type);
        bool needsMemory =
            llvm::any_of(constant->getUsers(), [&](Operation *user) {
              return !isElementwise(user) || user == terminator;
            });
        if (!needsMemory)
          continue;
        std::string name = newName();
        declarations +=
            "  " + type.str() + " *" + name + " = (" + type.str() + " *)" +
            allocate(byteSize(constant), 0, lastRead(constant.getResult())) +
            ";\n";
        declarations += "  for (int64_t i = 0; i < " +
                        std::to_string(numElements(constant)) + "; ++i)\n    " +
                        name + "[i] = " + splats[constant.getResult()] + ";\n";
        pointers[constant.getResult()] = name;
        continue;
      }
      std::string &name =
          unit.constantNames[{value.getAsOpaquePointer(), type.str()}];
      if (name.empty()) {
        name = "tk_const" + std::to_string(unit.numConstants++);
        if (emitDenseConstant(unit.constants, name, value, type))
          unit.expanders.push_back(name);
      }
      // Through tk_opaque (Prelude.h): GCC miscompiles some copies out of a
      // constant array whose contents it can see.
      pointers[constant.getResult()] =
          "tk_opaque((" + type.str() + " *)" + name + ")";
      continue;
    }
    if (llvm::any_of(groups,
                     [&](const Group &group) { return group.gemm == &op; }))
      continue; // Writes into its epilogue's output, resolved below.
    auto it = groupOf.find(&op);
    for (OpResult result : op.getResults()) {
      if (it != groupOf.end()) {
        // A group value needs memory only when read outside the group.
        bool external = llvm::any_of(result.getUsers(), [&](Operation *user) {
          return !inGroup(user, it->second);
        });
        if (!external)
          continue;
      }
      StringRef type = cTypeOf(result);
      std::string name = newName();
      if (returnCount.lookup(result) == 1) {
        unsigned slot = 0;
        for (OpOperand &use : terminator->getOpOperands())
          if (use.get() == result)
            slot = use.getOperandNumber();
        declarations += "  " + type.str() + " *" + name + " = (" + type.str() +
                        " *)results[" + std::to_string(slot) + "];\n";
        inPlace.insert(result);
      } else {
        // A GEMM writes into its epilogue's output at the matmul, before
        // the group runs (the output is picked below, so all of them).
        unsigned start = emitTime(&op);
        if (it != groupOf.end() && groups[it->second].gemm)
          start = position.lookup(groups[it->second].gemm);
        unsigned end = returnCount.lookup(result) ? position.lookup(terminator)
                                                  : lastRead(result);
        declarations += "  " + type.str() + " *" + name + " = (" + type.str() +
                        " *)" + allocate(byteSize(result), start, end) + ";\n";
      }
      pointers[result] = name;
    }
  }
  // A GEMM with an epilogue writes into the first group output of its
  // element type; without one (every output a cast) it keeps its own
  // buffer and the group reads it as before.
  for (Group &group : groups) {
    if (!group.gemm)
      continue;
    Value product = group.gemm->getResult(0);
    for (Operation *member : group.members) {
      Value result = member->getResult(0);
      if (pointers.count(result) && tensorType(result).getElementType() ==
                                        tensorType(product).getElementType()) {
        group.gemmOutput = result;
        break;
      }
    }
    if (group.gemmOutput) {
      pointers[product] = ptr(group.gemmOutput);
      continue;
    }
    group.gemm = nullptr;
    std::string name = newName();
    StringRef type = cTypeOf(product);
    declarations += "  " + type.str() + " *" + name + " = (" + type.str() +
                    " *)" +
                    allocate(byteSize(product), position.lookup(group.gemm),
                             lastRead(product)) +
                    ";\n";
    pointers[product] = name;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Other kernels
//===----------------------------------------------------------------------===//

void FunctionEmitter::emitMatmul(llvm::raw_ostream &os, nn::MatmulOp op) {
  auto lhsType = tensorType(op.getLhs()), rhsType = tensorType(op.getRhs());
  llvm::ArrayRef<int64_t> lhs = lhsType.getShape(), rhs = rhsType.getShape();
  bool transLhs = op.getTransposeLhs(), transRhs = op.getTransposeRhs();
  int64_t lr = lhs.size(), rr = rhs.size();
  int64_t m = transLhs ? lhs[lr - 1] : lhs[lr - 2];
  int64_t k = transLhs ? lhs[lr - 2] : lhs[lr - 1];
  int64_t n = transRhs ? rhs[rr - 2] : rhs[rr - 1];
  int64_t batches = numElementsOf(lhs.drop_back(2));
  bool sharedRhs = rr == 2;
  std::string out = ptr(op.getResult());
  StringRef type = cTypeOf(op.getResult());
  bool f32 = type == "float";
  if (k == 0 || m == 0 || n == 0) {
    os << "  std::memset(" << out << ", 0, " << byteSize(op.getResult())
       << ");\n";
    return;
  }
  // bf16 and f16: BLAS multiplies float copies of the operands (exact) into
  // a float product, rounded once to the result type per element.
  bool lowPrecision = type == "tk_bf16" || type == "tk_f16";
  std::string lhsData = ptr(op.getLhs()), rhsData = ptr(op.getRhs());
  std::string product = out;
  if (lowPrecision) {
    f32 = true;
    auto widen = [&](Value value) {
      std::string name = newName();
      os << "  float *" << name << " = (float *)"
         << allocateTemporary(numElements(value) * 4) << ";\n";
      os << "  for (int64_t i = 0; i < " << numElements(value) << "; ++i)\n"
         << "    " << name << "[i] = (float)(double)" << ptr(value) << "[i];\n";
      return name;
    };
    lhsData = widen(op.getLhs());
    rhsData = widen(op.getRhs());
    product = newName();
    os << "  float *" << product << " = (float *)"
       << allocateTemporary(numElements(op.getResult()) * 4) << ";\n";
  }
  // A rhs shared by every batch of an untransposed lhs: the batches are
  // rows of one tall matrix, one call.
  if (sharedRhs && !transLhs) {
    m *= batches;
    batches = 1;
  }
  int64_t lda = transLhs ? m : k, ldb = transRhs ? k : n;
  std::string call = f32 ? "cblas_sgemm" : "cblas_dgemm";
  std::string one = f32 ? "1.0f" : "1.0", zero = f32 ? "0.0f" : "0.0";
  std::string lhsAt = lhsData, rhsAt = rhsData, outAt = product;
  std::string indent = "  ";
  if (batches > 1) {
    os << "  for (int64_t b = 0; b < " << batches << "; ++b)\n";
    lhsAt += " + b * " + std::to_string(m * k);
    if (!sharedRhs)
      rhsAt += " + b * " + std::to_string(k * n);
    outAt += " + b * " + std::to_string(m * n);
    indent = "    ";
  }
  os << indent << call << "(kRowMajor, " << (transLhs ? "kTrans" : "kNoTrans")
     << ", " << (transRhs ? "kTrans" : "kNoTrans") << ", " << m << ", " << n
     << ", " << k << ", " << one << ", " << lhsAt << ", " << lda << ", "
     << rhsAt << ", " << ldb << ", " << zero << ", " << outAt << ", " << n
     << ");\n";
  if (lowPrecision)
    os << "  for (int64_t i = 0; i < " << numElements(op.getResult())
       << "; ++i)\n    " << out << "[i] = (" << type << ")(double)" << product
       << "[i];\n";
}

/// Writes `sum += e^(expr)` for j in [0, count) in increasing j, as the
/// evaluator sums: each block of 256 exponentials first (a loop without a
/// dependence, which the compiler vectorizes), then their sum in order.
static void writeBlockedExpSum(llvm::raw_ostream &os, int64_t count,
                               const std::string &expr, StringRef indent) {
  os << indent << "for (int64_t j0 = 0; j0 < " << count << "; j0 += 256) {\n"
     << indent << "  const int64_t j1 = j0 + 256 < " << count
     << " ? j0 + 256 : " << count << ";\n"
     << indent << "  double tk_e[256];\n"
     << indent << "  for (int64_t j = j0; j < j1; ++j)\n"
     << indent << "    tk_e[j - j0] = tandem_math::exp(" << expr << ");\n"
     << indent << "  for (int64_t j = j0; j < j1; ++j)\n"
     << indent << "    sum += tk_e[j - j0];\n"
     << indent << "}\n";
}

void FunctionEmitter::emitSoftmax(llvm::raw_ostream &os, Operation *op,
                                  int64_t axis, bool log) {
  Value input = op->getOperand(0), result = op->getResult(0);
  llvm::ArrayRef<int64_t> shape = tensorType(input).getShape();
  int64_t outer = numElementsOf(shape.take_front(axis)), size = shape[axis],
          inner = numElementsOf(shape.drop_front(axis + 1));
  std::string x = ptr(input), y = ptr(result);
  StringRef type = cTypeOf(result);
  os << "  #pragma omp parallel for if (" << numElements(input)
     << " >= 32768)\n";
  os << "  for (int64_t o = 0; o < " << outer << "; ++o)\n";
  os << "    for (int64_t in = 0; in < " << inner << "; ++in) {\n";
  os << "      const int64_t base = o * " << size * inner << " + in;\n";
  std::string at = x + "[base + j * " + std::to_string(inner) + "]";
  os << "      double mx = -(double)INFINITY;\n";
  os << "      for (int64_t j = 0; j < " << size << "; ++j)\n";
  os << "        mx = std::fmax(mx, (double)" << at << ");\n";
  os << "      double sum = 0.0;\n";
  writeBlockedExpSum(os, size, "(double)" + at + " - mx", "      ");
  os << "      for (int64_t j = 0; j < " << size << "; ++j) {\n";
  os << "        const double s = (double)" << at << " - mx;\n";
  os << "        " << y << "[base + j * " << inner << "] = (" << type << ")("
     << (log ? "s - std::log(sum)" : "tandem_math::exp(s) / sum") << ");\n";
  os << "      }\n    }\n";
}

/// out[i] = in[base + Σ d_k * strides[k]] over out's row-major indices.
void FunctionEmitter::emitStrided(llvm::raw_ostream &os, Value in, Value out,
                                  llvm::ArrayRef<int64_t> strides,
                                  int64_t base) {
  llvm::ArrayRef<int64_t> shape = tensorType(out).getShape();
  int depth = openLoops(os, shape, "  ", /*parallel=*/true);
  std::string indent(2 + 2 * depth, ' ');
  os << indent << ptr(out) << "[" << offsetExpr(rowMajorStrides(shape))
     << "] = " << ptr(in) << "[" << offsetExpr(strides, base) << "];\n";
  closeLoops(os, depth, "  ");
}

/// The statement returning the status of `op`'s index `value` at
/// `position` outside its range, reported in the status word.
static std::string indexError(Unit &unit, Operation *op,
                              llvm::StringRef position, llvm::StringRef value) {
  return ("return tk_index_error(tk_context, " +
          llvm::Twine(unit.indexChecks.add(op)) + ", " + position + ", " +
          value + ");")
      .str();
}

LogicalResult FunctionEmitter::emitKernel(llvm::raw_ostream &os,
                                          Operation *op) {
  ++info.numKernels;
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](nn::MatmulOp matmul) {
        emitMatmul(os, matmul);
        return success();
      })
      .Case([&](nn::SoftmaxOp softmax) {
        emitSoftmax(os, op, softmax.getAxis(), false);
        return success();
      })
      .Case([&](nn::LogSoftmaxOp softmax) {
        emitSoftmax(os, op, softmax.getAxis(), true);
        return success();
      })
      .Case<nn::LayerNormOp, nn::RMSNormOp>([&](Operation *) {
        bool layer = isa<nn::LayerNormOp>(op);
        double epsilon =
            layer ? cast<nn::LayerNormOp>(op).getEpsilon().convertToDouble()
                  : cast<nn::RMSNormOp>(op).getEpsilon().convertToDouble();
        Value input = op->getOperand(0), result = op->getResult(0);
        int64_t d = tensorType(input).getShape().back();
        int64_t rows = d ? numElements(input) / d : 0;
        std::string dd = doubleLiteral(static_cast<double>(d));
        os << "  #pragma omp parallel for if (" << numElements(input)
           << " >= 32768)\n";
        os << "  for (int64_t row = 0; row < " << rows << "; ++row) {\n";
        os << "    const " << cTypeOf(input) << " *x = " << ptr(input)
           << " + row * " << d << ";\n";
        os << "    " << cTypeOf(result) << " *y = " << ptr(result)
           << " + row * " << d << ";\n";
        os << "    const " << cTypeOf(input)
           << " *w = " << ptr(op->getOperand(1)) << ";\n";
        if (layer) {
          os << "    const " << cTypeOf(input)
             << " *bias = " << ptr(op->getOperand(2)) << ";\n";
          os << "    double sum = 0.0;\n";
          os << "    for (int64_t j = 0; j < " << d
             << "; ++j)\n      sum += (double)x[j];\n";
          os << "    const double mean = sum / " << dd << ";\n";
          os << "    double squares = 0.0;\n";
          os << "    for (int64_t j = 0; j < " << d
             << "; ++j)\n      squares += ((double)x[j] - mean) * "
                "((double)x[j] - mean);\n";
        } else {
          os << "    double squares = 0.0;\n";
          os << "    for (int64_t j = 0; j < " << d
             << "; ++j)\n      squares += (double)x[j] * (double)x[j];\n";
        }
        os << "    const double inv = 1.0 / std::sqrt(squares / " << dd << " + "
           << doubleLiteral(epsilon) << ");\n";
        os << "    for (int64_t j = 0; j < " << d << "; ++j)\n      y[j] = ("
           << cTypeOf(result) << ")("
           << (layer ? "((double)x[j] - mean) * inv * (double)w[j] + "
                       "(double)bias[j]"
                     : "(double)x[j] * inv * (double)w[j]")
           << ");\n  }\n";
        return success();
      })
      .Case([&](nn::EmbeddingOp embedding) {
        Value table = embedding.getTable(), ids = embedding.getIds();
        int64_t vocab = embedding.getRowCount();
        int64_t dim = tensorType(table).getShape()[1];
        os << "  for (int64_t i = 0; i < " << numElements(ids) << "; ++i) {\n";
        os << "    const int64_t id = (int64_t)" << ptr(ids) << "[i];\n";
        os << "    if (id < 0 || id >= " << vocab << ")\n      "
           << indexError(unit, op, "i", "id") << "\n";
        os << "    std::memcpy(" << ptr(embedding.getResult()) << " + i * "
           << dim << ", " << ptr(table) << " + id * " << dim << ", "
           << dim * (byteSize(table) / std::max<int64_t>(numElements(table), 1))
           << ");\n  }\n";
        return success();
      })
      .Case([&](nn::OneHotOp oneHot) {
        Value ids = oneHot.getIds(), result = oneHot.getResult();
        int64_t classes = oneHot.getClasses();
        std::string type = cTypeOf(result).str();
        os << "  for (int64_t i = 0; i < " << numElements(ids) << "; ++i) {\n";
        os << "    const int64_t id = (int64_t)" << ptr(ids) << "[i];\n";
        os << "    if (id < 0 || id >= " << classes << ")\n      "
           << indexError(unit, op, "i", "id") << "\n";
        os << "    " << type << " *row = " << ptr(result) << " + i * "
           << classes << ";\n";
        os << "    for (int64_t j = 0; j < " << classes
           << "; ++j)\n      row[j] = (" << type
           << ")(j == id ? 1.0 : 0.0);\n  }\n";
        return success();
      })
      .Case([&](nn::EmbeddingGradOp grad) {
        Value cot = grad.getCotangent(), ids = grad.getIds(),
              result = grad.getResult();
        int64_t vocab = grad.getRowCount();
        int64_t dim = tensorType(result).getShape()[1];
        // Sums in double in increasing position order, as the evaluator.
        os << "  {\n    double *acc = (double *)"
           << allocateTemporary(numElements(result) * 8) << ";\n";
        os << "    for (int64_t j = 0; j < " << numElements(result)
           << "; ++j)\n      acc[j] = 0.0;\n";
        os << "    for (int64_t i = 0; i < " << numElements(ids)
           << "; ++i) {\n";
        os << "      const int64_t id = (int64_t)" << ptr(ids) << "[i];\n";
        os << "      if (id < 0 || id >= " << vocab << ")\n        "
           << indexError(unit, op, "i", "id") << "\n";
        os << "      for (int64_t d = 0; d < " << dim << "; ++d)\n";
        os << "        acc[id * " << dim << " + d] += (double)" << ptr(cot)
           << "[i * " << dim << " + d];\n    }\n";
        os << "    for (int64_t j = 0; j < " << numElements(result)
           << "; ++j)\n      " << ptr(result) << "[j] = (" << cTypeOf(result)
           << ")acc[j];\n  }\n";
        return success();
      })
      .Case<nn::CrossEntropyOp, nn::CrossEntropyGradOp>([&](Operation *) {
        bool grad = isa<nn::CrossEntropyGradOp>(op);
        Value logits = op->getOperand(0), targets = op->getOperand(1),
              result = op->getResult(0);
        // Rows of `vocab` columns; the first `classes` are classes.
        int64_t vocab = tensorType(logits).getShape().back();
        int64_t classes = grad
                              ? cast<nn::CrossEntropyGradOp>(op).getClassCount()
                              : cast<nn::CrossEntropyOp>(op).getClassCount();
        int64_t positions = numElements(targets);
        std::string l = ptr(logits);
        os << "  {\n";
        if (grad)
          os << "    const double factor = (double)" << ptr(op->getOperand(2))
             << "[0] / " << doubleLiteral(static_cast<double>(positions))
             << ";\n";
        else
          os << "    double total = 0.0;\n";
        os << "    for (int64_t p = 0; p < " << positions << "; ++p) {\n";
        os << "      const int64_t target = (int64_t)" << ptr(targets)
           << "[p];\n";
        os << "      if (target < 0 || target >= " << classes << ")\n        "
           << indexError(unit, op, "p", "target") << "\n";
        os << "      const " << cTypeOf(logits) << " *row = " << l << " + p * "
           << vocab << ";\n";
        os << "      double mx = -(double)INFINITY;\n";
        os << "      for (int64_t j = 0; j < " << classes
           << "; ++j)\n        mx = std::fmax(mx, (double)row[j]);\n";
        os << "      double sum = 0.0;\n";
        writeBlockedExpSum(os, classes, "(double)row[j] - mx", "      ");
        if (grad) {
          os << "      for (int64_t j = 0; j < " << classes << "; ++j) {\n";
          os << "        const double prob = tandem_math::exp((double)row[j] "
                "- mx) / sum;\n";
          os << "        " << ptr(result) << "[p * " << vocab << " + j] = ("
             << cTypeOf(result)
             << ")((prob - (j == target ? 1.0 : 0.0)) * factor);\n";
          os << "      }\n";
          if (classes < vocab)
            os << "      for (int64_t j = " << classes << "; j < " << vocab
               << "; ++j)\n        " << ptr(result) << "[p * " << vocab
               << " + j] = 0;\n";
          os << "    }\n  }\n";
        } else {
          os << "      total += mx + std::log(sum) - (double)row[target];\n";
          os << "    }\n    " << ptr(result) << "[0] = (" << cTypeOf(result)
             << ")("
             << (positions ? "total / " + doubleLiteral(positions)
                           : std::string("(double)NAN"))
             << ");\n  }\n";
        }
        return success();
      })
      .Case([&](nn::QuantizeOp quantize) {
        emitQuantize(os, quantize);
        return success();
      })
      .Case([&](nn::DequantizeOp dequantize) {
        emitDequantize(os, dequantize);
        return success();
      })
      .Case([&](nn::TransposeOp transpose) {
        llvm::SmallVector<int64_t> in =
            rowMajorStrides(tensorType(transpose.getInput()).getShape());
        llvm::SmallVector<int64_t> strides;
        for (int64_t p : transpose.getPermutation())
          strides.push_back(in[p]);
        emitStrided(os, transpose.getInput(), transpose.getResult(), strides,
                    0);
        return success();
      })
      .Case([&](nn::SliceOp slice) {
        llvm::SmallVector<int64_t> in =
            rowMajorStrides(tensorType(slice.getInput()).getShape());
        llvm::SmallVector<int64_t> strides;
        int64_t base = 0;
        for (auto [d, start, step] :
             llvm::enumerate(slice.getStarts(), slice.getStrides())) {
          base += start * in[d];
          strides.push_back(step * in[d]);
        }
        emitStrided(os, slice.getInput(), slice.getResult(), strides, base);
        return success();
      })
      .Case<nn::ConcatOp, nn::SplitOp>([&](Operation *) {
        // Both move contiguous runs of `size * inner` elements per outer
        // index between the whole tensor and its pieces.
        bool concat = isa<nn::ConcatOp>(op);
        Value whole = concat ? op->getResult(0) : op->getOperand(0);
        int64_t axis = concat ? cast<nn::ConcatOp>(op).getAxis()
                              : cast<nn::SplitOp>(op).getAxis();
        llvm::ArrayRef<int64_t> shape = tensorType(whole).getShape();
        int64_t outer = numElementsOf(shape.take_front(axis));
        int64_t inner = numElementsOf(shape.drop_front(axis + 1));
        int64_t element =
            byteSize(whole) / std::max<int64_t>(numElements(whole), 1);
        int64_t start = 0;
        ValueRange pieces = concat ? ValueRange(op->getOperands())
                                   : ValueRange(op->getResults());
        for (Value piece : pieces) {
          int64_t size = tensorType(piece).getShape()[axis];
          std::string wholeAt = ptr(whole) + " + o * " +
                                std::to_string(shape[axis] * inner) + " + " +
                                std::to_string(start * inner);
          std::string pieceAt =
              ptr(piece) + " + o * " + std::to_string(size * inner);
          os << "  for (int64_t o = 0; o < " << outer << "; ++o)\n";
          os << "    std::memcpy(" << (concat ? wholeAt : pieceAt) << ", "
             << (concat ? pieceAt : wholeAt) << ", " << size * inner * element
             << ");\n";
          start += size;
        }
        return success();
      })
      .Default([&](Operation *) {
        return op->emitError("'")
               << op->getName() << "' is not supported by the CPU emitter";
      });
}

LogicalResult FunctionEmitter::emitBody(llvm::raw_ostream &os) {
  for (Operation &op : body->without_terminator()) {
    now = emitTime(&op);
    if (isa<nn::ParamOp, nn::ConstantOp>(op))
      continue;
    if (isa<nn::ReshapeOp, nn::StageEndOp>(op)) {
      // Views: same memory, new name.
      for (auto [operand, result] :
           llvm::zip(op.getOperands(), op.getResults())) {
        std::string name = newName();
        std::string source = pointers.count(operand) ? ptr(operand) : "";
        if (source.empty()) // A splat constant read only by views so far.
          return op.emitError("the CPU emitter cannot view a constant that "
                              "was not materialized");
        os << "  " << cTypeOf(result) << " *" << name << " = " << source
           << "; // " << op.getName() << "\n";
        pointers[result] = name;
      }
      continue;
    }
    auto it = groupOf.find(&op);
    if (it != groupOf.end()) {
      if (groups[it->second].members.back() == &op)
        emitGroup(os, it->second);
      continue;
    }
    os << "  // " << op.getName() << "\n";
    if (failed(emitKernel(os, &op)))
      return failure();
  }
  // Results not written in place: arguments, views, constants and values
  // returned more than once.
  Operation *terminator = body->getTerminator();
  for (OpOperand &use : terminator->getOpOperands()) {
    Value value = use.get();
    std::string slot =
        "results[" + std::to_string(use.getOperandNumber()) + "]";
    std::string source = pointers.lookup(value);
    if (source.empty() && splats.count(value)) {
      os << "  for (int64_t i = 0; i < " << numElements(value) << "; ++i)\n"
         << "    ((" << cTypeOf(value) << " *)" << slot
         << ")[i] = " << splats.lookup(value) << ";\n";
      continue;
    }
    if (!inPlace.contains(value))
      os << "  std::memcpy(" << slot << ", " << source << ", "
         << byteSize(value) << ");\n";
  }
  return success();
}

FailureOr<EmittedFunction> FunctionEmitter::emit(llvm::raw_ostream &os) {
  auto fn = cast<FunctionOpInterface>(function);
  info.name = SymbolTable::getSymbolName(function).str();
  info.symbol = tandem::lowering::entrySymbol(info.name);
  if (fn.isExternal())
    return function->emitError("the CPU emitter needs a function body");
  if (!llvm::hasSingleElement(fn.getFunctionBody()))
    return function->emitError("the CPU emitter needs a single-block body");
  body = &fn.getFunctionBody().front();
  // Ops first: an unsupported type is best reported at the op using it.
  for (Operation &op : body->getOperations())
    if (failed(checkOp(&op)))
      return failure();
  for (Type type : fn.getArgumentTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() || !cType(tensor.getElementType()))
      return function->emitError("the CPU emitter does not support argument "
                                 "type ")
             << type << " yet";
    info.argumentTypes.push_back(tensor);
  }
  for (Type type : fn.getResultTypes()) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() || !cType(tensor.getElementType()))
      return function->emitError("the CPU emitter does not support result "
                                 "type ")
             << type << " yet";
    info.resultTypes.push_back(tensor);
  }
  if (failed(loadKernels()) || failed(assignStorage()))
    return failure();
  std::string code;
  llvm::raw_string_ostream bodyStream(code);
  if (failed(emitBody(bodyStream)))
    return failure();
  info.scratchBytes = scratch.place({&declarations, &code});

  // A fragment's entry point is named by its kind and a hash of its code,
  // not by its stage: two ranks running equal fragments (the middle stages
  // of a GPT) get equal sources, which tandemc compiles once.
  auto fragment = dyn_cast<tandem::mpmd::FragmentOp>(function);
  constexpr llvm::StringLiteral kSymbol = "@TANDEM_ENTRY@";
  std::string entry;
  llvm::raw_string_ostream e(entry);
  e << "// " << (fragment ? StringRef(kSymbol) : StringRef(info.name)) << ": "
    << info.argumentTypes.size() << " argument(s), " << info.parameters.size()
    << " parameter(s), " << info.resultTypes.size() << " result(s), "
    << info.scratchBytes << " scratch bytes\n";
  e << "extern \"C\" uint64_t " << kSymbol << "_scratch_bytes(void) { return "
    << info.scratchBytes << "; }\n";
  // Fragment ABI v3 (FragmentABI.h): the host needs only the status word
  // from the context (tk_index_error), but takes it like every target's
  // code.
  e << "extern \"C\" int " << kSymbol
    << "(const tandem_fragment_context *tk_context, const void *const *args, "
       "void *const *results, void *scratch) {\n";
  e << "  (void)tk_context;\n";
  e << "  char *tk_scratch = (char *)scratch;\n  (void)tk_scratch;\n";
  e << "  tk_expand_constants();\n";
  e << declarations << code << "  return 0;\n}\n\n";
  if (fragment)
    info.symbol =
        ("tandem_" + tandem::mpmd::stringifyFragmentKind(fragment.getKind()) +
         "_" + llvm::utohexstr(llvm::xxh3_64bits(entry), true, 16))
            .str();
  llvm::StringRef rest = entry;
  while (!rest.empty()) {
    auto [before, after] = rest.split(kSymbol);
    os << before;
    if (before.size() != rest.size())
      os << info.symbol;
    rest = after;
  }
  return info;
}

} // namespace tandem::cpu::detail

FailureOr<EmitResult>
tandem::cpu::emitCpp(llvm::ArrayRef<Operation *> functions,
                     const EmitOptions &options) {
  Unit unit;
  EmitResult result;
  std::string entries;
  llvm::raw_string_ostream os(entries);
  llvm::StringMap<std::string> symbols;
  for (Operation *function : functions) {
    if (!isa<FunctionOpInterface>(function))
      return function->emitError("the CPU emitter expects a function or an "
                                 "mpmd.fragment");
    FunctionEmitter emitter(function, unit, options);
    std::string text;
    llvm::raw_string_ostream textStream(text);
    FailureOr<EmittedFunction> info = emitter.emit(textStream);
    if (failed(info))
      return failure();
    // Fragments with equal code (equal chunks of one rank) share one entry
    // point, named by that code; other equal names are an error.
    auto [it, inserted] = symbols.try_emplace(info->symbol, text);
    if (inserted)
      os << text;
    else if (it->second != text || !isa<tandem::mpmd::FragmentOp>(function))
      return function->emitError("two functions map to the C symbol '")
             << info->symbol << "'";
    result.functions.push_back(std::move(*info));
  }
  result.numUniqueGroups = unit.groupByBody.size();
  result.numGroupCalls = unit.numGroupCalls;
  // The prelude: the shared rounding and transcendental code, the fragment
  // ABI and the CPU helpers (PreludeSource.h, made from real files).
  std::string source = kPreludeSource;
  llvm::raw_string_ostream out(source);
  out << "// tandem-cpu: " << result.functions.size() << " function(s), "
      << result.numUniqueGroups << " fused group function(s) for "
      << result.numGroupCalls << " group call(s)\n";
  // Run-length constants expand on the first call of any entry point, not
  // in a load-time constructor: loading the library runs none of its code,
  // so the runtime can check tandem_cpu_features first.
  out << "namespace {\n" << unit.constants << unit.groups;
  out << "void tk_expand_constants() {\n"
      << "  static const bool expanded = [] {\n";
  for (const std::string &name : unit.expanders)
    out << "    " << name << "_expand();\n";
  out << "    return true;\n  }();\n  (void)expanded;\n}\n";
  out << "} // namespace\n\n" << entries;
  result.source = std::move(source);
  result.indexChecks = unit.indexChecks.entries();
  return result;
}

std::vector<std::string> tandem::cpu::supportedOps() {
  std::vector<std::string> ops = {"nn.add",           "nn.broadcast_to",
                                  "nn.cast",          "nn.concat",
                                  "nn.constant",      "nn.cos",
                                  "nn.cross_entropy", "nn.cross_entropy_grad",
                                  "nn.dequantize",    "nn.div",
                                  "nn.embedding",     "nn.embedding_grad",
                                  "nn.erf",           "nn.erfc",
                                  "nn.one_hot",       "nn.stop_gradient",
                                  "nn.exp",           "nn.gelu",
                                  "nn.greater_equal", "nn.layer_norm",
                                  "nn.log",           "nn.log_softmax",
                                  "nn.matmul",        "nn.maximum",
                                  "nn.minimum",       "nn.mul",
                                  "nn.neg",           "nn.param",
                                  "nn.pow",           "nn.quantize",
                                  "nn.reduce_max",    "nn.reduce_mean",
                                  "nn.reduce_sum",    "nn.relu",
                                  "nn.reshape",       "nn.rms_norm",
                                  "nn.rsqrt",         "nn.select",
                                  "nn.silu",          "nn.sin",
                                  "nn.slice",         "nn.softmax",
                                  "nn.split",         "nn.sqrt",
                                  "nn.stage_end",     "nn.sub",
                                  "nn.tanh",          "nn.transpose"};
  llvm::sort(ops);
  return ops;
}

std::vector<std::pair<std::string, std::string>>
tandem::cpu::opsHandledElsewhere() {
  return {{"nn.attention", "run nn-decompose-attention before emitting"},
          {"nn.attention_grad",
           "the CPU target differentiates decomposed attention "
           "(nn-autodiff's default)"},
          {"nn.layer_norm_grad",
           "the CPU target differentiates layer_norm into elementwise ops "
           "and reductions (nn-autodiff's default)"},
          {"nn.rms_norm_grad",
           "the CPU target differentiates rms_norm into elementwise ops and "
           "reductions (nn-autodiff's default)"},
          {"nn.gelu_grad", "the CPU target differentiates gelu into "
                           "elementwise ops (nn-autodiff's default)"},
          {"nn.parameter", "a module-level declaration: functions read "
                           "parameters with nn.param, which become argument "
                           "slots"}};
}
