//===- CudaEmitter.cpp - CUDA C++ for functions and fragments -------------===//
//
// Each function becomes an entry point that launches one kernel per
// recorded kernel, in program order, on the context's stream; views
// (reshape, stage_end) are pointers; values live in the function's scratch
// or, when the function returns them, in their result buffers. Element
// types: f32, bf16 and f16 (computed in f32, each op's result rounded to its
// type as the IR says), i32 and i64 for data movement. What is not lowered
// yet (GEMMs, reductions, attention, ...) is an error naming the op.
//
//===----------------------------------------------------------------------===//

#include "tandem/Target/CUDA/CudaEmitter.h"

#include "PreludeSource.h"

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Lowering/Indexing.h"
#include "tandem/Lowering/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

using namespace mlir;
namespace nn = tandem::nn;
using tandem::lowering::EmittedFragment;
using tandem::lowering::EmittedSource;

namespace {

/// Scratch offsets are multiples of this: the alignment cudaMalloc gives,
/// so every buffer suits 16-byte vector access.
constexpr uint64_t kScratchAlignment = 256;
/// Enough blocks to fill any GPU the target supports; the grid-stride loop
/// covers larger tensors.
constexpr int64_t kMaxBlocks = 8192;

RankedTensorType tensorOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// The storage type of `type`'s elements in generated code.
std::optional<StringRef> storageType(Type type) {
  if (type.isF32())
    return StringRef("float");
  if (type.isBF16())
    return StringRef("tk_bf16");
  if (type.isF16())
    return StringRef("tk_f16");
  if (type.isInteger(32))
    return StringRef("int32_t");
  if (type.isInteger(64))
    return StringRef("int64_t");
  return std::nullopt;
}

bool isFloat(Value value) {
  Type type = tensorOf(value).getElementType();
  return type.isF32() || type.isBF16() || type.isF16();
}

StringRef storageOf(Value value) {
  return *storageType(tensorOf(value).getElementType());
}

/// The type of a kernel's local holding an element of `value`.
StringRef computeType(Value value) {
  return isFloat(value) ? StringRef("float") : storageOf(value);
}

uint64_t bytesOf(Value value) {
  RankedTensorType type = tensorOf(value);
  return static_cast<uint64_t>(type.getNumElements()) *
         ((type.getElementTypeBitWidth() + 7) / 8);
}

/// A float expression with exactly `value` (a float).
std::string floatLiteral(double value) {
  if (std::isnan(value))
    return "NAN";
  if (std::isinf(value))
    return value > 0 ? "INFINITY" : "(-INFINITY)";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%a", value) << "f";
  return "(" + text + ")";
}

/// Element `index` of a constant as a literal of the local's type.
std::string elementLiteral(DenseElementsAttr value, int64_t index) {
  if (isa<FloatType>(value.getElementType())) {
    llvm::APFloat x = value.getValues<llvm::APFloat>()[index];
    bool losesInfo = false;
    x.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
              &losesInfo);
    return floatLiteral(x.convertToDouble());
  }
  int64_t x = value.getValues<llvm::APInt>()[index].getSExtValue();
  return "INT64_C(" + std::to_string(x) + ")";
}

/// The bf16 or f16 bits of element `index` (exactly that type's value).
uint16_t narrowBits(DenseElementsAttr value, int64_t index) {
  llvm::APFloat x = value.getValues<llvm::APFloat>()[index];
  return static_cast<uint16_t>(x.bitcastToAPInt().getZExtValue());
}

/// Ops that compute an element from the operands' elements at the same
/// (broadcast) index, with the expression for each.
std::optional<std::string> elementExpr(Operation *op,
                                       llvm::ArrayRef<std::string> in) {
  auto call = [&](StringRef fn) { return fn.str() + "(" + in[0] + ")"; };
  auto infix = [&](StringRef symbol) {
    return "(" + in[0] + " " + symbol.str() + " " + in[1] + ")";
  };
  return llvm::TypeSwitch<Operation *, std::optional<std::string>>(op)
      .Case([&](nn::NegOp) { return "(-" + in[0] + ")"; })
      .Case([&](nn::ExpOp) { return call("tk_exp"); })
      .Case([&](nn::LogOp) { return call("tk_log"); })
      .Case([&](nn::TanhOp) { return call("tk_tanh"); })
      .Case([&](nn::SqrtOp) { return call("tk_sqrt"); })
      .Case([&](nn::RsqrtOp) { return call("tk_rsqrt"); })
      .Case([&](nn::ReluOp) { return call("tk_relu"); })
      .Case([&](nn::GeluOp) { return call("tk_gelu"); })
      .Case([&](nn::SiluOp) { return call("tk_silu"); })
      .Case([&](nn::SinOp) { return call("tk_sin"); })
      .Case([&](nn::CosOp) { return call("tk_cos"); })
      .Case([&](nn::PowOp pow) {
        // The exponent as the float the kernel computes with.
        float e = static_cast<float>(pow.getExponent().convertToDouble());
        return "tk_pow(" + in[0] + ", " + floatLiteral(e) + ")";
      })
      // +, -, *, / of bf16 or f16 values in f32 rounded to the storage type
      // equal the exact operation rounded once (f32 has at least 2p + 2
      // bits for both), so these give the evaluator's bits.
      .Case([&](nn::AddOp) { return infix("+"); })
      .Case([&](nn::SubOp) { return infix("-"); })
      .Case([&](nn::MulOp) { return infix("*"); })
      .Case([&](nn::DivOp) { return infix("/"); })
      .Case([&](nn::MaximumOp) {
        return "tk_maximum(" + in[0] + ", " + in[1] + ")";
      })
      .Case([&](nn::MinimumOp) {
        return "tk_minimum(" + in[0] + ", " + in[1] + ")";
      })
      .Case([&](nn::GreaterEqualOp) {
        return "(" + in[0] + " >= " + in[1] + " ? 1.0f : 0.0f)";
      })
      .Case([&](nn::SelectOp) {
        return "(" + in[0] + " != 0 ? " + in[1] + " : " + in[2] + ")";
      })
      .Case([&](nn::BroadcastToOp) { return in[0]; })
      .Case([&](nn::CastOp) { return "(float)" + in[0]; })
      .Default([](Operation *) { return std::nullopt; });
}

/// What the translation unit's functions share.
struct Unit {
  std::string constants;
  std::string kernels;
  /// Kernel text without its name -> its name: identical kernels once.
  llvm::StringMap<std::string> kernelByBody;
  /// (attribute, storage type) -> array name: one array per constant.
  std::map<std::pair<const void *, std::string>, std::string> constantNames;
  unsigned numConstants = 0;
};

class FunctionEmitter {
public:
  FunctionEmitter(Operation *function, Unit &unit)
      : function(function), unit(unit) {}

  FailureOr<EmittedFragment> emit(llvm::raw_ostream &os);

private:
  LogicalResult check(Operation *op);
  std::string newName() { return "v" + std::to_string(counter++); }
  /// A scratch buffer of `bytes` for `value`, declared in the entry point.
  void allocate(Value value);
  void emitKernel(const tandem::lowering::Kernel &kernel);
  /// An operand's element in a kernel: a literal (splat constant) or the
  /// name of an input to load.
  std::string splatOf(Value value) { return splats.lookup(value); }

  Operation *function;
  Unit &unit;
  Block *body = nullptr;
  std::string code;
  unsigned counter = 0;
  uint64_t scratchBytes = 0;
  /// Pointer expressions of buffers.
  llvm::DenseMap<Value, std::string> pointers;
  /// Splat constants: their element as a literal.
  llvm::DenseMap<Value, std::string> splats;
  /// Dense constants: the array the kernels read.
  llvm::DenseMap<Value, std::string> arrays;
  /// Values computed straight into result `k`'s buffer.
  llvm::DenseMap<Value, unsigned> resultSlot;
};

LogicalResult FunctionEmitter::check(Operation *op) {
  for (Value value : llvm::concat<Value>(op->getOperands(), op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !storageType(type.getElementType()))
      return op->emitError("the cuda target does not support type ")
             << value.getType() << " (f32, bf16, f16, i32 and i64 tensors)";
  }
  if (op->hasTrait<OpTrait::IsTerminator>() ||
      isa<nn::ConstantOp, nn::ReshapeOp, nn::StageEndOp>(op))
    return success();
  llvm::SmallVector<std::string> operands(op->getNumOperands(), "x");
  if (!op->hasTrait<nn::ElementwiseKernel>() || !elementExpr(op, operands))
    return op->emitError("the cuda target does not lower '")
           << op->getName() << "' yet (docs/cuda-backend.md)";
  // Integers only move: arithmetic and conversions to them are not written.
  if (!isa<nn::BroadcastToOp>(op) && !isFloat(op->getResult(0)))
    return op->emitError("the cuda target computes '")
           << op->getName() << "' only on f32, bf16 or f16 results";
  if (!isa<nn::CastOp, nn::BroadcastToOp>(op))
    for (Value operand : op->getOperands())
      if (!isFloat(operand))
        return op->emitError("the cuda target computes '")
               << op->getName() << "' only on f32, bf16 or f16 operands";
  return success();
}

void FunctionEmitter::allocate(Value value) {
  std::string name = newName();
  code += "  " + storageOf(value).str() + " *" + name + " = (" +
          storageOf(value).str() + " *)(tk_scratch + " +
          std::to_string(scratchBytes) + ");\n";
  scratchBytes += (bytesOf(value) + kScratchAlignment - 1) / kScratchAlignment *
                  kScratchAlignment;
  pointers[value] = name;
}

void FunctionEmitter::emitKernel(const tandem::lowering::Kernel &kernel) {
  llvm::SmallPtrSet<Operation *, 16> members(kernel.members.begin(),
                                             kernel.members.end());
  llvm::SetVector<Value> inputs, outputs;
  for (Operation *member : kernel.members) {
    for (Value operand : member->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if ((def && members.contains(def)) || splats.count(operand))
        continue;
      inputs.insert(operand);
    }
    Value result = member->getResult(0);
    if (llvm::any_of(result.getUsers(),
                     [&](Operation *user) { return !members.contains(user); }))
      outputs.insert(result);
  }
  // Nothing reads a dead kernel's values.
  if (outputs.empty())
    return;
  llvm::ArrayRef<int64_t> shape = kernel.shape;
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  bool flat = llvm::all_of(inputs, [&](Value input) {
    return tensorOf(input).getShape() == shape ||
           tensorOf(input).getNumElements() == 1;
  });

  std::string params, text;
  llvm::raw_string_ostream b(text);
  for (auto [i, output] : llvm::enumerate(outputs))
    params += (i ? ", " : "") + storageOf(output).str() + " *__restrict__ o" +
              std::to_string(i);
  unsigned numPointers = 0;
  for (Value input : inputs) {
    if (arrays.count(input))
      continue;
    params += ", const " + storageOf(input).str() + " *__restrict__ i" +
              std::to_string(numPointers);
    ++numPointers;
  }
  b << "(TK_KERNEL_ARGS " << params << ") {\n";
  b << "  // ";
  llvm::interleave(
      kernel.members, b, [&](Operation *op) { b << op->getName(); }, ", ");
  b << "\n  TK_PHASE\n";
  b << "  for (int64_t i = TK_BLOCK * TK_BLOCK_DIM + TK_THREAD; i < " << count
    << "; i += TK_GRID_DIM * TK_BLOCK_DIM) {\n";
  if (!flat) {
    b << "    int64_t tk_r = i;\n";
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      b << "    const int64_t d" << d << " = tk_r % " << shape[d] << ";\n";
      if (d > 0)
        b << "    tk_r /= " << shape[d] << ";\n";
    }
  }
  llvm::DenseMap<Value, std::string> local;
  numPointers = 0;
  for (auto [i, input] : llvm::enumerate(inputs)) {
    std::string index =
        tensorOf(input).getNumElements() == 1 ? "0"
        : flat
            ? "i"
            : tandem::lowering::offsetExpr(tandem::lowering::broadcastStrides(
                  tensorOf(input).getShape(), shape));
    std::string source = arrays.count(input)
                             ? arrays.lookup(input)
                             : "i" + std::to_string(numPointers++);
    std::string name = "t_i" + std::to_string(i);
    b << "    const " << computeType(input) << " " << name << " = tk_load("
      << source << ", " << index << ");\n";
    local[input] = name;
  }
  for (auto [k, member] : llvm::enumerate(kernel.members)) {
    llvm::SmallVector<std::string> operands;
    for (Value operand : member->getOperands())
      operands.push_back(splats.count(operand) ? splatOf(operand)
                                               : local.lookup(operand));
    Value result = member->getResult(0);
    std::string expr = *elementExpr(member, operands);
    StringRef storage = storageOf(result);
    if (storage == "tk_bf16" || storage == "tk_f16")
      expr = "tk_round(" + expr + ", (" + storage.str() + " *)0)";
    std::string name = "t" + std::to_string(k);
    b << "    const " << computeType(result) << " " << name << " = " << expr
      << ";\n";
    local[result] = name;
  }
  for (auto [i, output] : llvm::enumerate(outputs))
    b << "    tk_store(o" << i << ", i, " << local[output] << ");\n";
  b << "  }\n  TK_END_PHASE\n}\n";

  auto [it, inserted] = unit.kernelByBody.try_emplace(text, "");
  if (inserted) {
    it->second = "tk_k" + llvm::utohexstr(llvm::xxh3_64bits(text), true);
    unit.kernels += "TK_KERNEL " + it->second + text + "\n";
  }

  // The outputs' buffers, then the launch.
  for (Value output : outputs)
    if (!resultSlot.count(output))
      allocate(output);
    else
      pointers[output] = "r" + std::to_string(resultSlot.lookup(output));
  if (count == 0)
    return;
  int64_t grid = std::min<int64_t>((count + tandem::cuda::kBlockSize - 1) /
                                       tandem::cuda::kBlockSize,
                                   kMaxBlocks);
  code += "  TK_LAUNCH(" + it->second + ", " + std::to_string(grid) + ", " +
          std::to_string(tandem::cuda::kBlockSize);
  for (Value output : outputs)
    code += ", " + pointers.lookup(output);
  for (Value input : inputs)
    if (!arrays.count(input))
      code += ", " + pointers.lookup(input);
  code += ");\n";
}

FailureOr<EmittedFragment> FunctionEmitter::emit(llvm::raw_ostream &os) {
  EmittedFragment info;
  info.name = SymbolTable::getSymbolName(function).str();
  info.symbol = tandem::lowering::entrySymbol(info.name);
  Region &region = function->getRegion(0);
  if (!region.hasOneBlock())
    return function->emitError("the cuda target needs a single-block body");
  body = &region.front();
  for (Operation &op : body->getOperations())
    if (failed(check(&op)))
      return failure();

  FailureOr<std::optional<tandem::lowering::KernelPlan>> recorded =
      tandem::lowering::readKernels(function);
  if (failed(recorded))
    return failure();
  tandem::lowering::KernelPlan plan =
      *recorded ? **recorded
                : tandem::lowering::formKernels(function,
                                                tandem::cuda::fusionPolicy());
  // The kernel each op launches with: at its kernel's last member.
  llvm::DenseMap<Operation *, int> lastOf;
  for (auto [index, kernel] : llvm::enumerate(plan.kernels)) {
    if (kernel.members.empty())
      continue;
    if (kernel.reduction || kernel.gemm)
      return (kernel.reduction ? kernel.reduction : kernel.gemm)
          ->emitError("the cuda target does not fuse reductions or "
                      "GEMM epilogues yet (docs/cuda-backend.md)");
    lastOf[kernel.members.back()] = index;
  }

  for (BlockArgument arg : body->getArguments()) {
    std::string name = "a" + std::to_string(arg.getArgNumber());
    code += "  " + storageOf(arg).str() + " *" + name + " = (" +
            storageOf(arg).str() + " *)args[" +
            std::to_string(arg.getArgNumber()) + "];\n";
    pointers[arg] = name;
  }
  Operation *terminator = body->getTerminator();
  for (auto [k, value] : llvm::enumerate(terminator->getOperands())) {
    code += "  " + storageOf(value).str() + " *r" + std::to_string(k) + " = (" +
            storageOf(value).str() + " *)results[" + std::to_string(k) + "];\n";
    Operation *def = value.getDefiningOp();
    if (def && def->hasTrait<nn::ElementwiseKernel>() &&
        !resultSlot.count(value))
      resultSlot[value] = k;
  }

  for (Operation &op : body->getOperations()) {
    if (auto constant = dyn_cast<nn::ConstantOp>(op)) {
      auto value = cast<DenseElementsAttr>(constant.getValue());
      Value result = constant.getResult();
      if (value.isSplat()) {
        splats[result] = elementLiteral(value, 0);
        continue;
      }
      std::string type = storageOf(result).str();
      auto key = std::make_pair(value.getAsOpaquePointer(), type);
      auto [it, inserted] = unit.constantNames.try_emplace(key, "");
      if (inserted) {
        it->second = "c" + std::to_string(unit.numConstants++);
        // The array holds the storage type's bits: the constant's values
        // are that type's by the IR's types.
        unit.constants += "TK_CONSTANT " + type + " " + it->second + "[" +
                          std::to_string(value.getNumElements()) + "] = {";
        for (int64_t i = 0, e = value.getNumElements(); i < e; ++i) {
          std::string element = elementLiteral(value, i);
          if (type == "tk_bf16" || type == "tk_f16")
            element = "{" + std::to_string(narrowBits(value, i)) + "}";
          unit.constants += (i % 8 ? " " : "\n    ") + element + ",";
        }
        unit.constants += "\n};\n";
      }
      arrays[result] = it->second;
      continue;
    }
    if (isa<nn::ReshapeOp, nn::StageEndOp>(op)) {
      Value source = op.getOperand(0);
      if (!pointers.count(source))
        return op.emitError("the cuda target does not lower a view of a "
                            "constant yet");
      pointers[op.getResult(0)] = pointers.lookup(source);
      continue;
    }
    auto last = lastOf.find(&op);
    if (last != lastOf.end())
      emitKernel(plan.kernels[last->second]);
  }

  for (auto [k, value] : llvm::enumerate(terminator->getOperands())) {
    auto slot = resultSlot.find(value);
    if (slot != resultSlot.end() && slot->second == k)
      continue;
    if (!pointers.count(value))
      return terminator->emitError("the cuda target does not return a "
                                   "constant yet (result ")
             << k << ")";
    if (bytesOf(value))
      code += "  TK_COPY(r" + std::to_string(k) + ", " +
              pointers.lookup(value) + ", " + std::to_string(bytesOf(value)) +
              ");\n";
  }
  info.scratchBytes = scratchBytes;

  os << "// " << info.name << ": " << body->getNumArguments()
     << " argument(s), " << terminator->getNumOperands() << " result(s), "
     << scratchBytes << " scratch bytes\n";
  os << "extern \"C\" uint64_t " << info.symbol
     << "_scratch_bytes(void) { return " << scratchBytes << "; }\n";
  os << "extern \"C\" int " << info.symbol
     << "(const tandem_fragment_context *tk_context, const void *const "
        "*args, void *const *results, void *scratch) {\n"
     << "  TK_STREAM(tk_context)\n"
     << (scratchBytes ? "  char *tk_scratch = (char *)scratch;\n"
                      : "  (void)scratch;\n")
     << code << "  return TK_STATUS();\n}\n\n";
  return info;
}

} // namespace

tandem::lowering::FusionPolicy tandem::cuda::fusionPolicy() {
  tandem::lowering::FusionPolicy policy;
  // Reductions and GEMM epilogues come with their kernels; until then every
  // reduction and matmul stands alone.
  policy.fuseReductions = false;
  policy.fuseGemmEpilogues = false;
  return policy;
}

FailureOr<EmittedSource>
tandem::cuda::emitCuda(llvm::ArrayRef<Operation *> functions) {
  Unit unit;
  std::string entries;
  llvm::raw_string_ostream os(entries);
  EmittedSource source;
  llvm::StringMap<Operation *> symbols;
  for (Operation *function : functions) {
    FunctionEmitter emitter(function, unit);
    FailureOr<EmittedFragment> info = emitter.emit(os);
    if (failed(info))
      return failure();
    auto [it, inserted] = symbols.try_emplace(info->symbol, function);
    if (!inserted)
      return function->emitError("two functions map to the C symbol '")
             << info->symbol << "'";
    source.fragments.push_back(std::move(*info));
  }
  source.text = std::string(kPreludeSource) + "\nnamespace {\n" +
                unit.constants + unit.kernels + "} // namespace\n\n" + entries;
  return source;
}

std::vector<std::string> tandem::cuda::supportedOps() {
  return {"nn.add",           "nn.broadcast_to", "nn.cast",      "nn.constant",
          "nn.cos",           "nn.div",          "nn.exp",       "nn.gelu",
          "nn.greater_equal", "nn.log",          "nn.maximum",   "nn.minimum",
          "nn.mul",           "nn.neg",          "nn.pow",       "nn.relu",
          "nn.reshape",       "nn.rsqrt",        "nn.select",    "nn.silu",
          "nn.sin",           "nn.sqrt",         "nn.stage_end", "nn.sub",
          "nn.tanh"};
}

std::vector<std::pair<std::string, std::string>>
tandem::cuda::opsNotLoweredYet() {
  const char *rows = "a row reduction with warp shuffles and shared memory";
  return {
      {"nn.attention", "a fused causal attention kernel (online softmax)"},
      {"nn.concat", "a strided copy kernel"},
      {"nn.cross_entropy", "a row reduction fused with its gradient"},
      {"nn.cross_entropy_grad", "a row reduction fused with the loss"},
      {"nn.embedding", "a gather kernel"},
      {"nn.embedding_grad", "a scatter-add without float atomics"},
      {"nn.layer_norm", rows},
      {"nn.log_softmax", rows},
      {"nn.matmul", "cuBLASLt with its epilogues"},
      {"nn.param", "argument slots, as in the CPU target"},
      {"nn.parameter", "a module-level declaration: fragments read "
                       "parameters as arguments"},
      {"nn.reduce_max", rows},
      {"nn.reduce_mean", rows},
      {"nn.reduce_sum", rows},
      {"nn.rms_norm", rows},
      {"nn.slice", "a strided copy kernel"},
      {"nn.softmax", rows},
      {"nn.split", "strided copy kernels"},
      {"nn.transpose", "a tiled transpose kernel"},
  };
}
