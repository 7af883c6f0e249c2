//===- CudaEmitter.cpp - CUDA C++ for functions and fragments -------------===//
//
// Each function becomes an entry point that launches, in program order on
// the context's stream, one kernel per recorded elementwise kernel, a row
// kernel per reduction, softmax, norm or cross-entropy, copy and gather
// kernels for the data movement, and the blockwise codecs' kernels
// (tandem/Support/Codec.h's arithmetic, payloads a byte per code); views
// (reshape, stage_end) are pointers;
// values live in the function's scratch or, when the function returns
// them, in their result buffers. Element types: f32, bf16 and f16
// (computed in f32, each op's result rounded to its type as the IR says),
// i32 and i64 for data movement; a matmul is a GEMM call (GemmPrelude.h),
// attention and its gradient fused kernels (AttentionPrelude.h). What is
// not lowered (opsNotLoweredYet) is an error naming the op.
//
//===----------------------------------------------------------------------===//

#include "tandem/Target/CUDA/CudaEmitter.h"

#include "PreludeSource.h"

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/NN/IR/NNOps.h"
#include "tandem/Lowering/IndexChecks.h"
#include "tandem/Lowering/Indexing.h"
#include "tandem/Lowering/Kernels.h"
#include "tandem/Lowering/ScratchPlan.h"
#include "tandem/Support/Codec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <array>
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
/// A reduction whose outputs alone would not fill the GPU splits its
/// reduced range into chunks reduced in parallel, then sums each output's
/// chunk partials in order (FunctionEmitter::emitReduction): rows of at
/// least kSplitRowLength elements when fewer than kSplitRowsBelow rows (a
/// row is one block), columns of more than 2 · kColumnChunk terms when
/// fewer than kSplitColumnsBelow outputs (a column is one thread).
constexpr int64_t kSplitRowsBelow = 64;
constexpr int64_t kSplitRowLength = 32768;
/// Elements of a row per block of the first pass.
constexpr int64_t kRowChunk = 8192;
constexpr int64_t kSplitColumnsBelow = 16384;
/// Terms of a column per thread of the first pass.
constexpr int64_t kColumnChunk = 64;
/// The attention kernels keep a head's row in registers (AttentionPrelude.h).
constexpr int64_t kMaxAttentionHeadDim = 256;
/// Floats the dk and dv kernels keep per query row of a tile: its
/// log-sum-exp and D (AttentionPrelude.h, tk_attention_grad_keys).
constexpr int64_t kAttentionTileStats = 2;
/// The attention kernels' tiles and row caches (AttentionPrelude.h) are
/// static shared memory, which CUDA limits to 48 KiB per block.
constexpr int64_t kMaxStaticShared = 48 * 1024;

/// An attention kernel's shape: `rows` threads a block, a row each, tiles
/// of `tile` rows of the other side, and its own `cached` rows a thread in
/// the row cache (0: read from memory).
struct AttentionBlock {
  int64_t rows, tile, cached;
  /// Threads a block (0: `rows`, a row each) and each tile's elements
  /// (none: two tiles of `tile` rows of HD each).
  int64_t threads = 0;
  llvm::SmallVector<int64_t, 4> tileElements;
  /// The kernel's declaration (AttentionPrelude.h, TensorCorePrelude.h).
  llvm::StringRef declaration = "TK_ATTENTION_KERNEL";
};

/// A tensor-core kernel's shape (TensorCorePrelude.h): 64 rows a block of
/// 4 warps, and tiles of BT rows of the other side, `rowTiles` of them as
/// rows (HD + 8 values) then `columnTiles` transposed (HD rows of BT + 8),
/// and `stats` floats a tile row: BT = 64 where that fits 48 KiB of static
/// shared memory, else 32 (the backward's at HD = 128 in bf16).
AttentionBlock tensorCoreAttentionBlock(int64_t hd, int64_t bytes,
                                        int64_t rowTiles, int64_t columnTiles,
                                        int64_t stats) {
  int64_t tile = 32;
  if (rowTiles * 64 * (hd + 8) * bytes + columnTiles * hd * (64 + 8) * bytes +
          stats * 64 * 4 <=
      kMaxStaticShared)
    tile = 64;
  AttentionBlock block{64, tile, 0};
  block.threads = 128;
  for (int64_t t = 0; t < rowTiles; ++t)
    block.tileElements.push_back(tile * (hd + 8));
  for (int64_t t = 0; t < columnTiles; ++t)
    block.tileElements.push_back(hd * (tile + 8));
  block.declaration = "TK_TC_ATTENTION_KERNEL";
  return block;
}

/// The largest shape whose shared memory fits: two tiles of HD elements of
/// `bytes` a row, `stats` floats a tile row, and `cache` rows of the
/// thread's own in the row cache. Blocks of 64 threads when they fit (then
/// 32), tiles of 64 rows down to 8; without the row cache when not even 32
/// threads' rows fit.
AttentionBlock attentionBlock(int64_t hd, int64_t bytes, int64_t stats,
                              int64_t cache) {
  for (int64_t cached : {cache, int64_t(0)})
    for (int64_t rows : {64, 32})
      for (int64_t tile : {64, 32, 16, 8}) {
        int64_t shared = cached * hd * bytes * rows + 2 * tile * hd * bytes +
                         stats * tile * 4;
        if (shared <= kMaxStaticShared)
          return {rows, tile, cached};
      }
  // Heads are at most kMaxAttentionHeadDim wide: 8 rows of two f32 tiles
  // of 256 always fit.
  return {64, 8, 0};
}

RankedTensorType tensorOf(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// An attention operand or result that is a piece of a wider buffer, read
/// or written in place (AttentionPrelude.h's tk_attention_layout): element
/// c of row t of batch b at offset + b·batch + t·row + c of `whole`'s
/// buffer.
struct AttentionView {
  Value whole;
  int64_t offset, batch, row;
};

/// The pieces of splits and concats that the attention kernels read or
/// write in place, at the whole's strides, instead of copy kernels: a
/// split's result whose every use is an operand of nn.attention or
/// nn.attention_grad (a GPT's q, k and v, columns of the QKV projection),
/// and an attention result whose one use is an operand of a concat (the
/// backward's dq, dk and dv joined for the projection's gradient). Splits
/// and concats of rank 3 along any axis; their other pieces are copied as
/// before.
llvm::DenseMap<Value, AttentionView> planAttentionViews(Block &body) {
  llvm::DenseMap<Value, AttentionView> views;
  // A row tensor of an attention op (not its log-sum-exp, which has rows
  // of its own shape).
  auto isAttentionRows = [](Operation *op, Value value) {
    if (auto at = dyn_cast<nn::AttentionOp>(op))
      return value != at.getLse();
    if (auto grad = dyn_cast<nn::AttentionGradOp>(op))
      return value != grad.getLse();
    return false;
  };
  auto plan = [&](Value whole, ValueRange pieces, int64_t axis,
                  llvm::function_ref<bool(Value)> inPlace) {
    llvm::ArrayRef<int64_t> shape = tensorOf(whole).getShape();
    if (shape.size() != 3)
      return;
    if (axis < 0)
      axis += 3;
    llvm::SmallVector<int64_t> strides =
        tandem::lowering::rowMajorStrides(shape);
    int64_t start = 0;
    for (Value piece : pieces) {
      if (inPlace(piece))
        views[piece] = {whole, start * strides[axis], strides[0], strides[1]};
      start += tensorOf(piece).getShape()[axis];
    }
  };
  for (Operation &op : body) {
    if (auto split = dyn_cast<nn::SplitOp>(op))
      plan(split.getInput(), split.getResults(), split.getAxis(),
           [&](Value piece) {
             return llvm::all_of(piece.getUsers(), [&](Operation *user) {
               return isAttentionRows(user, piece);
             });
           });
    else if (auto concat = dyn_cast<nn::ConcatOp>(op))
      plan(concat.getResult(), concat.getInputs(), concat.getAxis(),
           [&](Value piece) {
             Operation *def = piece.getDefiningOp();
             return def && isAttentionRows(def, piece) && piece.hasOneUse();
           });
  }
  return views;
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
  // Codec payloads (nn.quantize): a byte per code, Codec.h's codeByte. Only
  // the codecs and data movement touch them (nn::handlesPayloads).
  if (nn::payloadCode(type) >= 0)
    return StringRef("uint8_t");
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
      .Case([&](nn::ErfOp) { return call("tk_erf"); })
      .Case([&](nn::ErfcOp) { return call("tk_erfc"); })
      // The value unchanged: only its gradient is zero.
      .Case([&](nn::StopGradientOp) { return in[0]; })
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
      .Case([&](nn::GeluGradOp) {
        return "(" + in[1] + " * tk_gelu_grad(" + in[0] + "))";
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

/// How the emitter lowers an op; check() and the dispatch in emit() both
/// read this, so an op is accepted exactly when it is emitted.
enum class Lowering {
  /// Not lowered (yet): an error at the op.
  None,
  /// Nothing of its own: terminators, constants, views.
  Structure,
  /// A member of a recorded elementwise kernel (or a reduction, alone).
  Kernel,
  /// softmax, log_softmax, layer_norm, rms_norm and the norms' gradients:
  /// a row kernel.
  Row,
  CrossEntropy,
  Embedding,
  /// transpose, slice, concat, split: copy kernels.
  Copy,
  /// matmul: a GEMM call (cuBLASLt, or the CPU BLAS in the emulation).
  Gemm,
  /// param: an argument slot after the function's arguments.
  Parameter,
  /// attention, attention_grad: fused kernels (AttentionPrelude.h).
  Attention,
  /// quantize: a thread per block; dequantize: a thread per element
  /// (Codec.h's arithmetic).
  Codec,
};

Lowering loweringOf(Operation *op) {
  if (op->hasTrait<OpTrait::IsTerminator>() ||
      isa<nn::ConstantOp, nn::ReshapeOp, nn::StageEndOp>(op))
    return Lowering::Structure;
  if (op->hasTrait<nn::ReductionKernel>())
    return Lowering::Kernel;
  if (isa<nn::SoftmaxOp, nn::LogSoftmaxOp, nn::LayerNormOp, nn::RMSNormOp,
          nn::LayerNormGradOp, nn::RMSNormGradOp>(op))
    return Lowering::Row;
  if (isa<nn::CrossEntropyOp, nn::CrossEntropyGradOp>(op))
    return Lowering::CrossEntropy;
  if (isa<nn::EmbeddingOp, nn::EmbeddingGradOp, nn::OneHotOp>(op))
    return Lowering::Embedding;
  if (isa<nn::TransposeOp, nn::SliceOp, nn::ConcatOp, nn::SplitOp>(op))
    return Lowering::Copy;
  if (isa<nn::MatmulOp>(op))
    return Lowering::Gemm;
  if (isa<nn::ParamOp>(op))
    return Lowering::Parameter;
  if (isa<nn::AttentionOp, nn::AttentionGradOp>(op))
    return Lowering::Attention;
  if (isa<nn::QuantizeOp, nn::DequantizeOp>(op))
    return Lowering::Codec;
  llvm::SmallVector<std::string> operands(op->getNumOperands(), "x");
  if (op->hasTrait<nn::ElementwiseKernel>() && elementExpr(op, operands))
    return Lowering::Kernel;
  return Lowering::None;
}

/// The head of a grid-stride loop of `var` over [0, count).
std::string gridStrideLoop(StringRef var, llvm::StringRef count) {
  return ("  for (int64_t " + var + " = TK_BLOCK * TK_BLOCK_DIM + TK_THREAD; " +
          var + " < " + count + "; " + var +
          " += TK_GRID_DIM * TK_BLOCK_DIM) {\n")
      .str();
}
std::string gridStrideLoop(StringRef var, int64_t count) {
  return gridStrideLoop(var, std::to_string(count));
}

/// The blocks of kBlockSize threads a grid-stride loop over `count` steps
/// launches: enough for one step per thread, at most kMaxBlocks.
int64_t gridFor(int64_t count) {
  return std::min<int64_t>((count + tandem::cuda::kBlockSize - 1) /
                               tandem::cuda::kBlockSize,
                           kMaxBlocks);
}

/// A multi-tensor launch's table (tk_tensors in KernelPrelude.h) is a
/// kernel parameter: within the 4 KiB every CUDA version accepts, 8 bytes
/// per buffer and 16 per tensor, at most 32 tensors.
constexpr size_t kMaxTablePointers = 64;
int64_t tablesPerLaunch(size_t pointers) {
  return std::min<int64_t>(32, (4096 - 16) / (8 * pointers + 16));
}
/// The table type for kernels of `pointers` buffers.
std::string tableType(size_t pointers) {
  return "tk_tensors<" + std::to_string(pointers) + ", " +
         std::to_string(tablesPerLaunch(pointers)) + ">";
}

/// A multi-tensor kernel (its text without its name): `loopBody` over the
/// elements (`var`) of the table's tensor tk_which, whose `buffers` (storage
/// type, name, reference) the table holds in order, on its share of the
/// grid's blocks.
std::string
multiTensorKernel(const std::string &title,
                  llvm::ArrayRef<std::array<std::string, 3>> buffers,
                  const std::string &var, const std::string &loopBody) {
  std::string text = "(TK_KERNEL_ARGS const " + tableType(buffers.size()) +
                     " tk_m) {\n" + title +
                     "\n  TK_PHASE\n  const int32_t tk_which = "
                     "tk_tensor_of(tk_m, TK_BLOCK);\n";
  for (auto [k, buffer] : llvm::enumerate(buffers))
    text += "  " + buffer[0] + " *__restrict__ " + buffer[1] + " = (" +
            buffer[0] + " *)tk_m.ptr[tk_which][" + std::to_string(k) + "];\n";
  text += "  const int64_t tk_first = tk_m.first[tk_which], tk_blocks = "
          "tk_m.first[tk_which + 1] - tk_first;\n  for (int64_t " +
          var + " = (TK_BLOCK - tk_first) * TK_BLOCK_DIM + TK_THREAD; " + var +
          " < tk_m.steps[tk_which]; " + var +
          " += tk_blocks * TK_BLOCK_DIM) {\n" + loopBody +
          "  }\n  TK_END_PHASE\n}\n";
  return text;
}

/// One tensor of a multi-tensor launch: its loop's steps and its buffers'
/// references.
struct TableEntry {
  int64_t steps = 0;
  llvm::ArrayRef<std::string> buffers;
};

/// A multi-tensor launch's table operand (ProgramPrelude.h: its size, each
/// tensor's first block and the blocks' end, then each tensor's steps and
/// buffers) and its grid, the tensors' blocks together.
std::pair<std::string, int64_t>
tableOperand(llvm::ArrayRef<TableEntry> tensors) {
  std::string table = "TK_TABLE(" + std::to_string(tensors.size()) + "), 0",
              rest;
  int64_t blocks = 0;
  for (const TableEntry &tensor : tensors) {
    blocks += gridFor(tensor.steps);
    table += ", " + std::to_string(blocks);
    rest += ", " + std::to_string(tensor.steps);
    for (const std::string &buffer : tensor.buffers)
      rest += ", " + buffer;
  }
  return {table + rest, blocks};
}

/// Declares d0, d1, ... as the digits of `tk_r` in `shape` (row-major).
void writeDigits(llvm::raw_ostream &b, llvm::ArrayRef<int64_t> shape) {
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    b << "    const int64_t d" << d << " = tk_r % " << shape[d] << ";\n";
    if (d > 0)
      b << "    tk_r /= " << shape[d] << ";\n";
  }
}

/// `expr` (a float) rounded to `storage` where that is narrower than f32.
std::string roundTo(const std::string &expr, StringRef storage) {
  if (storage != "tk_bf16" && storage != "tk_f16")
    return expr;
  return "tk_round(" + expr + ", (" + storage.str() + " *)0)";
}

/// One reduction over a row: `term` (an expression of the element `x` and
/// the earlier passes' statistics s0, s1, ...) combined by `combine`, and
/// the statistic made of the combined `tk_acc`.
struct RowPass {
  std::string combine, init, term, statistic;
};

/// The two passes of a softmax: the row's max, then the sum of e^{x - max}.
const RowPass kRowMax{"tk_op_max", "(-INFINITY)", "x", "tk_acc"};
const RowPass kRowSumExp{"tk_op_add", "0.0f", "tk_exp(x - s0)", "tk_acc"};

/// A matmul's epilogue as cuBLASLt runs it (CUBLASLT_EPILOGUE_BIAS,
/// _GELU_BIAS, _GELU_AUX_BIAS, a residual as C with beta = 1): the GEMM's
/// f32 result plus a bias per column, then GELU or plus a residual.
struct GemmEpilogue {
  /// The bias add's other operand (n elements) and its result.
  Value bias, biased;
  /// The residual added after the bias, when there is one.
  Value residual;
  bool gelu = false;
  /// The value before GELU is read outside the kernel: stored (`aux`).
  bool aux = false;
  /// DGELU: the product times GELU's derivative at this buffer (the
  /// forward's value before GELU), no bias.
  Value dgelu;
  /// The product widened to f32 first (a bf16 or f16 GEMM under mixed
  /// precision): the GEMM writes f32, and what follows works on f32.
  Value widened;
  /// What the kernel computes last: the GEMM's output buffer.
  Value output;
};

/// `value` is a GEMM's own output that holds nothing but the product: a
/// matmul without an epilogue, or the f32 widening of a bf16 or f16 one
/// (Megatron's gradient-accumulation fusion), with no empty operand. Such a
/// GEMM can add its product into the buffer (beta = 1).
bool isPlainGemmResult(
    Value value, const llvm::DenseMap<Operation *, GemmEpilogue> &epilogues) {
  auto matmul = value.getDefiningOp<nn::MatmulOp>();
  if (matmul) {
    if (epilogues.count(matmul))
      return false;
  } else if (auto cast = value.getDefiningOp<nn::CastOp>()) {
    matmul = cast.getInput().getDefiningOp<nn::MatmulOp>();
    auto epilogue = matmul ? epilogues.find(matmul) : epilogues.end();
    if (epilogue == epilogues.end() || epilogue->second.widened != value ||
        epilogue->second.output != value)
      return false;
  } else {
    return false;
  }
  return llvm::all_of(matmul->getOperands(), [](Value operand) {
    return tensorOf(operand).getNumElements() > 0;
  });
}

/// The epilogue `kernel` is for `matmul` when cuBLASLt can run it: a GEMM
/// with no empty dimension, optionally a cast of a bf16 or f16 product to
/// f32 (the GEMM then writes f32), then nothing more; or, for one GEMM
/// call (a weight shared by untransposed rows), exactly `+ bias` optionally
/// followed by GELU or by `+ residual`, or exactly nn.gelu_grad of the product
/// (DGELU), every later value of one type; else nullopt.
std::optional<GemmEpilogue>
gemmEpilogueOf(Operation *op, const tandem::lowering::Kernel &kernel) {
  auto matmul = dyn_cast<nn::MatmulOp>(op);
  if (!matmul || tensorOf(matmul.getLhs()).getNumElements() == 0 ||
      tensorOf(matmul.getRhs()).getNumElements() == 0 ||
      tensorOf(matmul.getResult()).getNumElements() == 0)
    return std::nullopt;
  GemmEpilogue epilogue;
  Value product = matmul.getResult();
  llvm::ArrayRef<Operation *> members = kernel.members;
  if (members.empty())
    return std::nullopt;
  // A widening cast first: the GEMM accumulates in f32 and writes it (the
  // product's rounding to bf16 or f16 skipped); nothing else may read the
  // narrow product or, unless it is the result, the widened one.
  if (auto cast = dyn_cast<nn::CastOp>(members.front())) {
    Type from = tensorOf(product).getElementType();
    if (cast.getInput() != product || !(from.isBF16() || from.isF16()) ||
        !tensorOf(cast.getResult()).getElementType().isF32() ||
        (members.size() > 1 &&
         llvm::any_of(cast.getResult().getUsers(), [&](Operation *user) {
           return !llvm::is_contained(members, user);
         })))
      return std::nullopt;
    epilogue.widened = cast.getResult();
    product = cast.getResult();
    members = members.drop_front();
    if (members.empty()) {
      // Any GEMM can write f32: no bias or aux layout to match.
      epilogue.output = product;
      return epilogue;
    }
  }
  // A bias, residual or aux needs the rows of one call.
  if (tensorOf(matmul.getRhs()).getRank() != 2 || matmul.getTransposeLhs() ||
      tensorOf(matmul.getLhs()).getRank() < 2)
    return std::nullopt;
  Type type = product.getType();
  int64_t n = tensorOf(product).getShape().back();
  if (members.size() > 2 || llvm::any_of(members, [&](Operation *member) {
        return member->getNumResults() != 1 ||
               member->getResult(0).getType() != type;
      }))
    return std::nullopt;
  // The other operand of a binary add whose one operand is `value`.
  auto otherOf = [](Operation *member, Value value) -> Value {
    auto add = dyn_cast<nn::AddOp>(member);
    if (!add)
      return Value();
    if (add.getLhs() == value && add.getRhs() != value)
      return add.getRhs();
    if (add.getRhs() == value && add.getLhs() != value)
      return add.getLhs();
    return Value();
  };
  // Operands come from buffers (not constants) of the right type.
  auto isBuffer = [&](Value value, llvm::ArrayRef<int64_t> shape) {
    return value && !value.getDefiningOp<nn::ConstantOp>() &&
           tensorOf(value).getElementType() ==
               tensorOf(product).getElementType() &&
           tensorOf(value).getShape() == shape;
  };
  // DGELU: the product is the cotangent; GELU's input an m×n buffer whose
  // leading dimension, like the aux output's, is a multiple of 8.
  if (auto grad = dyn_cast<nn::GeluGradOp>(members[0])) {
    if (members.size() != 1 || grad.getCotangent() != product ||
        grad.getInput() == product ||
        !isBuffer(grad.getInput(), tensorOf(product).getShape()) || n % 8 != 0)
      return std::nullopt;
    epilogue.dgelu = grad.getInput();
    epilogue.output = grad.getResult();
    return epilogue;
  }
  epilogue.bias = otherOf(members[0], product);
  if (!isBuffer(epilogue.bias, {n}))
    return std::nullopt;
  epilogue.biased = members[0]->getResult(0);
  epilogue.output = members.back()->getResult(0);
  bool readOutside =
      llvm::any_of(epilogue.biased.getUsers(), [&](Operation *user) {
        return !llvm::is_contained(members, user);
      });
  if (members.size() == 1)
    return epilogue;
  if (auto gelu = dyn_cast<nn::GeluOp>(members[1])) {
    if (gelu.getInput() != epilogue.biased)
      return std::nullopt;
    epilogue.gelu = true;
    epilogue.aux = readOutside;
    // cuBLASLt's auxiliary matrix's leading dimension is a multiple of 8.
    if (epilogue.aux && n % 8 != 0)
      return std::nullopt;
    return epilogue;
  }
  epilogue.residual = otherOf(members[1], epilogue.biased);
  if (readOutside || !isBuffer(epilogue.residual, tensorOf(product).getShape()))
    return std::nullopt;
  return epilogue;
}

/// A norm gradient's dx plus the residual stream's gradient, in the norm
/// gradient's row kernel (llm.c's layer norm backward accumulates the
/// same way): the kernel is one nn.add of dx and `other`, a buffer of dx's
/// type defined before the op.
struct RowEpilogue {
  Value other, output;
};

std::optional<RowEpilogue>
rowEpilogueOf(Operation *row, const tandem::lowering::Kernel &kernel) {
  if (!isa<nn::LayerNormGradOp, nn::RMSNormGradOp>(row) ||
      kernel.members.size() != 1)
    return std::nullopt;
  auto add = dyn_cast<nn::AddOp>(kernel.members.front());
  Value dx = row->getResult(0);
  if (!add || add.getResult().getType() != dx.getType())
    return std::nullopt;
  Value lhs = add->getOperand(0), rhs = add->getOperand(1);
  Value other = lhs == dx ? rhs : lhs;
  if ((lhs != dx && rhs != dx) || other == dx ||
      other.getType() != dx.getType() || other.getDefiningOp<nn::ConstantOp>())
    return std::nullopt;
  return RowEpilogue{other, add.getResult()};
}

/// A residual add computed where the norm after it reads its rows (the
/// residual stream plus a layer's output, as llm.c's fused residual and
/// layer norm forward): the kernel is one nn.add of the norm's input type,
/// each operand a buffer of that type, or a cast to it of a narrower one
/// (a bf16 projection's output joining the f32 stream), of the input's
/// shape, no constant.
struct RowPrologue {
  /// The buffers the add reads (each through its cast, if any).
  std::array<Value, 2> inputs;
};

std::optional<RowPrologue>
rowPrologueOf(Operation *row, const tandem::lowering::Kernel &kernel) {
  if (!isa<nn::LayerNormOp, nn::RMSNormOp>(row) || kernel.members.empty() ||
      kernel.members.size() > 3)
    return std::nullopt;
  Value rows = row->getOperand(0);
  auto add = dyn_cast<nn::AddOp>(kernel.members.back());
  if (!add || add.getResult() != rows)
    return std::nullopt;
  RowPrologue prologue;
  size_t casts = 0;
  for (unsigned i = 0; i < 2; ++i) {
    Value operand = add->getOperand(i);
    if (auto widen = operand.getDefiningOp<nn::CastOp>();
        widen && llvm::is_contained(kernel.members, widen.getOperation())) {
      ++casts;
      operand = widen.getInput();
      auto from = dyn_cast<FloatType>(tensorOf(operand).getElementType());
      auto to = cast<FloatType>(tensorOf(rows).getElementType());
      if (!from || from.getWidth() >= to.getWidth() ||
          !storageType(tensorOf(operand).getElementType()))
        return std::nullopt;
    } else if (operand.getType() != rows.getType()) {
      return std::nullopt;
    }
    if (tensorOf(operand).getShape() != tensorOf(rows).getShape() ||
        operand.getDefiningOp<nn::ConstantOp>() ||
        llvm::is_contained(kernel.members, operand.getDefiningOp()))
      return std::nullopt;
    prologue.inputs[i] = operand;
  }
  if (kernel.members.size() != casts + 1)
    return std::nullopt;
  return prologue;
}

/// True when the expression `text` reads the identifier `name`.
bool readsName(llvm::StringRef text, llvm::StringRef name) {
  auto isIdentifier = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  for (size_t at = text.find(name); at != llvm::StringRef::npos;
       at = text.find(name, at + 1)) {
    size_t end = at + name.size();
    if ((at == 0 || !isIdentifier(text[at - 1])) &&
        (end == text.size() || !isIdentifier(text[end])))
      return true;
  }
  return false;
}

/// A kernel of one block per row (FunctionEmitter::emitRows).
struct RowKernel {
  /// The comment naming it.
  std::string title;
  /// (storage type, pointer) of each input; input 0 holds the rows.
  std::vector<std::pair<std::string, std::string>> inputs;
  std::string outputType, outputPointer;
  int64_t rows = 0, n = 0;
  /// The passes read the first `reduced` of the n columns (all when 0): a
  /// padded vocabulary's padding is no class.
  int64_t reduced = 0;
  std::vector<RowPass> passes;
  /// The row's element j, x, when it is computed rather than loaded from
  /// input 0 (a row prologue): an expression of row and j.
  std::string x;
  /// An expression of x (the row's element j), the statistics s<k> and the
  /// loaded values p<i>: written for every element, or with `perRow` once
  /// per row.
  std::string output;
  bool perRow = false;
  /// p<i> = input i at the index expression (of row and j), loaded where a
  /// pass's term or an output reads it.
  std::vector<std::pair<unsigned, std::string>> loads;
  /// Further per-element outputs: (storage type, pointer, expression).
  std::vector<std::array<std::string, 3>> moreOutputs;
  /// An index checked once per row (IndexChecks.h): the condition, of the
  /// loaded values p<i>, it must meet, the index reported when it does
  /// not (the row is its position) and the check's operand; none when
  /// `checkOperand` is empty.
  std::string checkCondition, checkValue, checkOperand;
};

/// A flat elementwise kernel's launch, waiting to share a launch with the
/// other tensors of the same kernel (FunctionEmitter::flushPending).
struct PendingLaunch {
  /// The kernel text with its buffers as parameters, and with them read
  /// from a table of tensors (tableType(args.size())).
  std::string single, multi;
  /// The loop's steps (elements or vectors) and the buffers' pointers.
  int64_t steps = 0;
  std::vector<std::string> args;
  /// The pointers of the buffers it writes.
  llvm::SmallVector<std::string> outputs;
};

/// Strings numbered in the order they were first seen.
struct Numbering {
  llvm::StringMap<unsigned> numbers;
  std::vector<std::string> entries;

  unsigned of(const std::string &entry) {
    auto [it, inserted] = numbers.try_emplace(entry, entries.size());
    if (inserted)
      entries.push_back(entry);
    return it->second;
  }
};

/// What the translation unit's functions share.
struct Unit {
  tandem::cuda::EmitOptions options;
  std::string constants;
  std::string kernels;
  /// Kernel text without its name -> its name: identical kernels once.
  llvm::StringMap<std::string> kernelByBody;
  /// The kernels' names in the order of their launchers (tk_launchers).
  std::vector<std::string> kernelNames;
  /// GEMM and attention shapes (their initializers), each once, in the
  /// order of the unit's arrays the programs index.
  Numbering gemmShapes, attentionShapes;
  /// The index checks the programs name (TK_CHECK), for the manifest.
  tandem::lowering::IndexCheckTable indexChecks;
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
  /// A scratch buffer of `bytes` for `value`, declared in the entry point.
  void allocate(Value value);
  /// Writes a constant (a splat or a constant array) into a scratch buffer
  /// of its own, for the kernels that read their operands from memory.
  void materialize(Value constant);
  void emitKernel(const tandem::lowering::Kernel &kernel);
  /// A reduction alone: one block per row when it reduces the trailing
  /// dimensions, else one thread per output combining in row-major order.
  void emitReduction(const tandem::lowering::Kernel &kernel);
  /// A row reduction of few long rows in two passes (kSplitRowsBelow).
  void emitSplitRows(Operation *op, int64_t rows, int64_t n,
                     const std::string &combine, const std::string &init,
                     const std::string &finish);
  /// One block per row: the passes' statistics, then `output` (an
  /// expression of x, the statistics s<k> and the per-column operands p<i>)
  /// for every element, or with `perRow` once per row.
  void emitRowKernel(Operation *op, llvm::ArrayRef<RowPass> passes,
                     const std::string &output, bool perRow = false,
                     llvm::ArrayRef<std::string> moreOutputs = {});
  void emitRows(const RowKernel &kernel);
  /// Scratch of `bytes` for a temporary; its reference.
  std::string allocateTemporary(uint64_t bytes);
  /// cross_entropy: each row's loss, then their mean; cross_entropy_grad:
  /// the softmax minus the target's one-hot, times the cotangent's share.
  void emitCrossEntropy(Operation *op);
  /// embedding (a gather), embedding_grad (sums without atomics) and
  /// one_hot.
  void emitEmbedding(Operation *op);
  /// softmax, log_softmax, rms_norm and layer_norm along the last dimension.
  void emitRowOp(Operation *op);
  /// softmax and log_softmax along another axis: one thread per column
  /// (the other indices), the axis's n elements at a stride.
  void emitAxisSoftmax(Operation *op, int64_t axis);
  /// A kernel copying every element of `shape` from `src` at strides
  /// `srcStrides` + `srcBase` to `dst` at `dstStrides` + `dstBase`.
  void emitCopy(Value src, Value dst, llvm::ArrayRef<int64_t> shape,
                llvm::ArrayRef<int64_t> srcStrides, int64_t srcBase,
                llvm::ArrayRef<int64_t> dstStrides, int64_t dstBase);
  /// transpose, slice, concat and split as copy kernels.
  void emitDataMovement(Operation *op);
  /// A matmul as one (batched, strided) GEMM call.
  /// With `epilogue`, cuBLASLt's epilogue computes the kernel's values.
  void emitGemm(nn::MatmulOp op, const GemmEpilogue *epilogue = nullptr);
  /// attention: one thread per query row; attention_grad: one per query
  /// row (dq and the rows' statistics), then one per key row (dk, dv).
  void emitAttention(Operation *op);
  /// quantize: one thread per block (its amax, its scale, its codes);
  /// dequantize: one thread per element.
  void emitCodec(Operation *op);
  /// Launches kernel `name` over `count` elements (a grid-stride loop of
  /// kBlockSize threads per block) with `args`; nothing when count is 0.
  void launchElements(const std::string &name, int64_t count,
                      llvm::ArrayRef<std::string> args);
  /// Appends a step (one line of the program) and makes the scratch it
  /// references live at it.
  void addStep(const std::string &line);
  /// The program's step launching kernel `name` on `grid` blocks of
  /// `block` threads with the parameters `operands`.
  void launch(const std::string &name, int64_t grid,
              llvm::ArrayRef<std::string> operands,
              int64_t block = tandem::cuda::kBlockSize);
  /// Launches the waiting flat kernels, those with the same text together.
  void flushPending();
  /// An f32 result added to its sum across microbatches: the references
  /// of the sum and of this call's value, and their elements.
  struct Sum {
    std::array<std::string, 2> buffers;
    int64_t count;
  };
  /// The steps adding this call's results to their sums
  /// (TK_OP_ACCUMULATE).
  void emitSums(llvm::ArrayRef<Sum> sums);
  /// Adds `text` (a kernel without its name) to the unit once, declared
  /// with `qualifier` (TK_KERNEL, or AttentionPrelude.h's
  /// TK_ATTENTION_KERNEL); its name.
  std::string addKernel(const std::string &text,
                        llvm::StringRef qualifier = "TK_KERNEL");
  /// The buffer `value` is computed into: its result slot, else scratch.
  std::string outputBuffer(Value value);
  /// The program operand naming `op`'s index check (IndexChecks.h).
  std::string checkOperand(Operation *op) {
    return "TK_CHECK(" + std::to_string(unit.indexChecks.add(op)) + ")";
  }
  /// An element loop's report of `id` outside its range (`inRange` false),
  /// made by the first of each `perId` elements: its position is i / perId.
  static std::string reportOutside(const std::string &inRange,
                                   const std::string &i, int64_t perId) {
    std::string n = std::to_string(perId);
    return "    if (" + i + " % " + n + " == 0 && !(" + inRange +
           "))\n      tk_report(tk_c, " + i + " / " + n + ", id);\n";
  }

  Operation *function;
  Unit &unit;
  Block *body = nullptr;
  /// The entry point's program (ProgramPrelude.h): a step per line.
  std::string code;
  unsigned steps = 0;
  /// Temporaries share scratch when no step uses both: the program runs
  /// its steps in order on one stream.
  tandem::lowering::ScratchPlan scratch{kScratchAlignment};
  /// References of buffers (TK_ARG, TK_RESULT, TK_SCRATCH), equal for a
  /// value and its views.
  llvm::DenseMap<Value, std::string> pointers;
  /// Splat constants: their element as a literal.
  llvm::DenseMap<Value, std::string> splats;
  /// Dense constants: the array the kernels read.
  llvm::DenseMap<Value, std::string> arrays;
  /// Values computed straight into result `k`'s buffer.
  llvm::DenseMap<Value, unsigned> resultSlot;
  /// Results the fragment adds into (lowering::readAccumulated), and the
  /// values among them a plain GEMM adds into its result itself.
  llvm::DenseSet<unsigned> accumulatedResults;
  llvm::DenseSet<Value> gemmAccumulated;
  /// Summed results the kernel computing them writes into their sums
  /// itself (a tk_sum parameter: the value on the first microbatch, the sum
  /// plus the value after it), each element once: an elementwise kernel's
  /// output or a column reduction's.
  llvm::DenseSet<Value> summedInPlace;
  /// Flat elementwise kernels not launched yet: consecutive independent
  /// ones with the same text share a multi-tensor launch (flushPending).
  std::vector<PendingLaunch> pending;
  /// Row ops whose row kernel also runs a kernel of the plan.
  llvm::DenseMap<Operation *, RowEpilogue> rowEpilogues;
  /// Row ops whose rows a kernel computes, with that kernel's reads.
  llvm::DenseMap<Operation *, RowPrologue> rowPrologues;
  /// Attention operands and results read or written in place in a split's
  /// operand or a concat's result (planAttentionViews): they have no
  /// buffer of their own, and the split or concat copies only its other
  /// pieces.
  llvm::DenseMap<Value, AttentionView> attentionViews;
};

LogicalResult FunctionEmitter::check(Operation *op) {
  for (Value value : llvm::concat<Value>(op->getOperands(), op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !storageType(type.getElementType()))
      return op->emitError("the cuda target does not support type ")
             << value.getType()
             << " (f32, bf16, f16, i32 and i64 tensors; i8, f8E4M3FN and "
                "f8E5M2 as codec payloads)";
    if (nn::payloadCode(type.getElementType()) >= 0 && !nn::handlesPayloads(op))
      return op->emitError("'")
             << op->getName() << "' on " << type.getElementType()
             << " is not supported by the cuda target (i8, f8E4M3FN and "
                "f8E5M2 only as codec payloads, which nn.quantize, "
                "nn.dequantize and data movement handle)";
  }
  Lowering lowering = loweringOf(op);
  if (lowering == Lowering::None)
    return op->emitError("the cuda target does not lower '")
           << op->getName() << "' yet (docs/cuda-backend.md)";
  if (auto matmul = dyn_cast<nn::MatmulOp>(op)) {
    // BLAS and cuBLASLt take 32-bit dimensions and batch counts.
    for (Value value : op->getOperands())
      for (int64_t size : tensorOf(value).getShape())
        if (size > INT32_MAX)
          return op->emitError("the cuda target's GEMMs take dimensions "
                               "below 2^31, found ")
                 << size;
    if (tensorOf(matmul.getResult()).getNumElements() > INT32_MAX)
      return op->emitError("the cuda target's GEMMs write fewer than 2^31 "
                           "elements per call, found ")
             << tensorOf(matmul.getResult()).getNumElements();
  }
  if (isa<nn::AttentionOp, nn::AttentionGradOp>(op)) {
    auto query = tensorOf(op->getOperand(0));
    int64_t heads = op->getAttrOfType<IntegerAttr>("heads").getInt();
    int64_t headDim = query.getShape()[2] / heads;
    if (headDim > kMaxAttentionHeadDim)
      return op->emitError("the cuda target's attention takes heads of at "
                           "most ")
             << kMaxAttentionHeadDim << " elements, found " << headDim;
    // The kernels divide block and head indices in 32 bits
    // (AttentionPrelude.h, tk_attention_div).
    auto forward = dyn_cast<nn::AttentionOp>(op);
    int64_t kvHeads = forward
                          ? forward.getKeyValueHeads()
                          : cast<nn::AttentionGradOp>(op).getKeyValueHeads();
    int64_t batch = query.getShape()[0];
    int64_t queryRows = batch * heads * query.getShape()[1];
    int64_t keyRows =
        batch * kvHeads * tensorOf(op->getOperand(1)).getShape()[1];
    if (std::max(queryRows, keyRows) > INT32_MAX)
      return op->emitError("the cuda target's attention takes fewer than "
                           "2^31 query and key rows (batch x heads x "
                           "sequence), found ")
             << queryRows << " and " << keyRows;
  }
  if (!op->hasTrait<nn::ElementwiseKernel>())
    return success();
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

std::string FunctionEmitter::allocateTemporary(uint64_t bytes) {
  return "TK_SCRATCH(" + scratch.request(bytes) + ")";
}

void FunctionEmitter::materialize(Value constant) {
  int64_t count = tensorOf(constant).getNumElements();
  std::string text;
  llvm::raw_string_ostream b(text);
  b << "(TK_KERNEL_ARGS " << storageOf(constant)
    << " *__restrict__ o0) {\n  // nn.constant\n  TK_PHASE\n"
    << gridStrideLoop("i", count) << "    tk_store(o0, i, "
    << (splats.count(constant) ? splats.lookup(constant)
                               : "tk_load(" + arrays.lookup(constant) + ", i)")
    << ");\n  }\n  TK_END_PHASE\n}\n";
  std::string name = addKernel(text);
  allocate(constant);
  launchElements(name, count, {pointers.lookup(constant)});
}

void FunctionEmitter::allocate(Value value) {
  pointers[value] = allocateTemporary(bytesOf(value));
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
  // A flat kernel moves its buffers in 16-byte vectors: `width` elements
  // per thread and step, 16 bytes of the narrowest buffer. Every buffer the
  // code is given is aligned (the manifest's target alignment) and so is
  // every step's first element; single elements and constant arrays are
  // read one by one.
  auto vectorized = [&](Value value) {
    return !arrays.count(value) && tensorOf(value).getNumElements() != 1;
  };
  uint64_t narrowest = 16;
  for (Value value : llvm::concat<const Value>(inputs, outputs))
    if (vectorized(value))
      narrowest = std::min<uint64_t>(
          narrowest, (tensorOf(value).getElementTypeBitWidth() + 7) / 8);
  int64_t width = flat ? static_cast<int64_t>(16 / narrowest) : 1;
  if (width > 1 && count % width != 0)
    width = 1;

  // The loop's body: the step `var` (an element, or a vector of `width`).
  std::string loopBody;
  llvm::raw_string_ostream b(loopBody);
  std::string w = std::to_string(width);
  // Buffer pointer -> the local vector holding this step's elements.
  llvm::DenseMap<Value, std::string> vectors;
  unsigned numPointers = 0;
  if (width > 1) {
    for (auto [i, input] : llvm::enumerate(inputs)) {
      if (arrays.count(input))
        continue;
      std::string pointer = "i" + std::to_string(numPointers++);
      if (!vectorized(input))
        continue;
      std::string vector = "tk_" + pointer;
      b << "    alignas(16) " << storageOf(input) << " " << vector << "[" << w
        << "];\n    tk_load_vec<" << w << ">(" << pointer << " + tk_v * " << w
        << ", " << vector << ");\n";
      vectors[input] = vector;
    }
    for (auto [i, output] : llvm::enumerate(outputs))
      b << "    alignas(16) " << storageOf(output) << " tk_o" << i << "[" << w
        << "];\n";
    b << "    TK_UNROLL(" << w << ")\n    for (int64_t tk_e = 0; tk_e < " << w
      << "; ++tk_e) {\n";
    if (llvm::any_of(inputs, [&](Value input) { return arrays.count(input); }))
      b << "    const int64_t i = tk_v * " << w << " + tk_e;\n";
  }
  if (!flat) {
    b << "    int64_t tk_r = i;\n";
    writeDigits(b, shape);
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
    if (vectors.count(input)) {
      source = vectors.lookup(input);
      index = "tk_e";
    }
    std::string name = "t_i" + std::to_string(i);
    b << "    const " << computeType(input) << " " << name << " = tk_load("
      << source << ", " << index << ");\n";
    local[input] = name;
  }
  for (auto [k, member] : llvm::enumerate(kernel.members)) {
    llvm::SmallVector<std::string> operands;
    for (Value operand : member->getOperands())
      operands.push_back(splats.count(operand) ? splats.lookup(operand)
                                               : local.lookup(operand));
    Value result = member->getResult(0);
    std::string expr =
        roundTo(*elementExpr(member, operands), storageOf(result));
    std::string name = "t" + std::to_string(k);
    b << "    const " << computeType(result) << " " << name << " = " << expr
      << ";\n";
    local[result] = name;
  }
  // A summed output (f32) is its sum: the value on a step's first
  // microbatch, else the sum plus the value (tk_summed).
  bool sums = llvm::any_of(
      outputs, [&](Value output) { return summedInPlace.count(output); });
  if (width > 1) {
    for (auto [i, output] : llvm::enumerate(outputs))
      b << "    tk_store(tk_o" << i << ", tk_e, " << local[output] << ");\n";
    b << "    }\n";
    for (auto [i, output] : llvm::enumerate(outputs)) {
      std::string o = "o" + std::to_string(i);
      if (summedInPlace.count(output))
        b << "    if (tk_s.on) {\n      alignas(16) float tk_s" << i << "[" << w
          << "];\n      tk_load_vec<" << w << ">(" << o << " + tk_v * " << w
          << ", tk_s" << i << ");\n      TK_UNROLL(" << w
          << ")\n      for (int64_t tk_e = 0; tk_e < " << w
          << "; ++tk_e)\n        tk_o" << i << "[tk_e] = tk_s" << i
          << "[tk_e] + tk_o" << i << "[tk_e];\n    }\n";
      b << "    tk_store_vec<" << w << ">(" << o << " + tk_v * " << w
        << ", tk_o" << i << ");\n";
    }
  } else {
    for (auto [i, output] : llvm::enumerate(outputs)) {
      std::string o = "o" + std::to_string(i);
      if (summedInPlace.count(output))
        b << "    tk_store(" << o << ", i, tk_summed(tk_s, " << o << " + i, "
          << local[output] << "));\n";
      else
        b << "    tk_store(" << o << ", i, " << local[output] << ");\n";
    }
  }

  // The buffers: (storage type, pointer name, argument) of the outputs,
  // then of the inputs read from memory.
  std::vector<std::array<std::string, 3>> buffers;
  for (auto [i, output] : llvm::enumerate(outputs))
    buffers.push_back({storageOf(output).str(), "o" + std::to_string(i),
                       outputBuffer(output)});
  numPointers = 0;
  for (Value input : inputs)
    if (!arrays.count(input))
      buffers.push_back({"const " + storageOf(input).str(),
                         "i" + std::to_string(numPointers++),
                         pointers.lookup(input)});
  std::string title = "  // ";
  llvm::raw_string_ostream t(title);
  llvm::interleave(
      kernel.members, t, [&](Operation *op) { t << op->getName(); }, ", ");
  std::string var = width > 1 ? "tk_v" : "i";

  // Alone: the buffers are the kernel's parameters.
  std::string single = "(TK_KERNEL_ARGS ";
  for (auto [k, buffer] : llvm::enumerate(buffers))
    single += (k ? ", " : "") + buffer[0] + " *__restrict__ " + buffer[1];
  if (sums)
    single += ", const tk_sum tk_s";
  single += ") {\n" + title + "\n  TK_PHASE\n" +
            gridStrideLoop(var, std::to_string(count / width)) + loopBody +
            "  }\n  TK_END_PHASE\n}\n";

  PendingLaunch launch;
  launch.steps = count / width;
  launch.single = single;
  for (const auto &buffer : buffers)
    launch.args.push_back(buffer[2]);
  for (size_t k = 0; k < outputs.size(); ++k)
    launch.outputs.push_back(buffers[k][2]);
  // A kernel writing a sum launches alone: a table's kernels take buffers
  // only.
  if (sums)
    launch.args.push_back("TK_SUM");
  if (!flat || sums || buffers.size() > kMaxTablePointers) {
    flushPending();
    launchElements(addKernel(single), launch.steps, launch.args);
    return;
  }
  // In a table: tensor tk_which's buffers, its steps and its blocks.
  launch.multi = multiTensorKernel(title, buffers, var, loopBody);
  // A kernel reading what a waiting one writes (its buffer, perhaps
  // through a view) runs after it.
  if (llvm::any_of(buffers, [&](const std::array<std::string, 3> &buffer) {
        return llvm::any_of(pending, [&](const PendingLaunch &earlier) {
          return llvm::is_contained(earlier.outputs, buffer[2]);
        });
      }))
    flushPending();
  pending.push_back(std::move(launch));
}

void FunctionEmitter::flushPending() {
  // Every waiting kernel is independent of the others (emitKernel flushes
  // before one that reads another's output; no kernel writes a buffer
  // another reads: values are written once, two values share scratch only
  // when no step uses both (the launches below are steps), and
  // an in-place result's argument has no other reader), so they may run in
  // any order: kernels with the same text share launches, in the order of
  // their first member.
  std::vector<PendingLaunch> waiting = std::move(pending);
  pending.clear();
  llvm::MapVector<llvm::StringRef, llvm::SmallVector<const PendingLaunch *>>
      groups;
  for (const PendingLaunch &launch : waiting)
    if (launch.steps > 0)
      groups[launch.multi].push_back(&launch);
  for (auto &[multi, members] : groups) {
    if (members.size() == 1) {
      const PendingLaunch &only = *members.front();
      launchElements(addKernel(only.single), only.steps, only.args);
      continue;
    }
    std::string name = addKernel(multi.str());
    size_t pointers = members.front()->args.size();
    int64_t perLaunch = tablesPerLaunch(pointers);
    for (size_t begin = 0; begin < members.size(); begin += perLaunch) {
      size_t end = std::min(members.size(), begin + perLaunch);
      std::vector<TableEntry> tensors;
      for (size_t k = begin; k < end; ++k)
        tensors.push_back({members[k]->steps, members[k]->args});
      auto [table, blocks] = tableOperand(tensors);
      launch(name, blocks, {table});
    }
  }
}

void FunctionEmitter::emitSums(llvm::ArrayRef<Sum> sums) {
  if (sums.empty())
    return;
  // One kernel adds every microbatch's results to their sums, another
  // copies the first microbatch's (the program picks by the call's
  // flags): a launch per 32 sums instead of one each (a copy keeps a -0
  // that 0 + x would not).
  std::vector<std::array<std::string, 3>> buffers = {{"float", "o0", ""},
                                                     {"const float", "i0", ""}};
  std::string add = addKernel(
      multiTensorKernel("  // microbatches added to their sums", buffers, "i",
                        "    o0[i] = o0[i] + i0[i];\n"));
  std::string copy = addKernel(
      multiTensorKernel("  // a step's first microbatch copied to its sums",
                        buffers, "i", "    o0[i] = i0[i];\n"));
  size_t perLaunch = static_cast<size_t>(tablesPerLaunch(buffers.size()));
  for (size_t begin = 0; begin < sums.size(); begin += perLaunch) {
    std::vector<TableEntry> tensors;
    for (size_t k = begin; k < std::min(sums.size(), begin + perLaunch); ++k)
      tensors.push_back({sums[k].count, sums[k].buffers});
    auto [table, blocks] = tableOperand(tensors);
    addStep("TK_OP_ACCUMULATE, " + add + "_id, " + copy + "_id, " +
            std::to_string(blocks) + ", " +
            std::to_string(tandem::cuda::kBlockSize) + ", " + table + ",");
  }
}

void FunctionEmitter::launchElements(const std::string &name, int64_t count,
                                     llvm::ArrayRef<std::string> args) {
  if (count == 0)
    return;
  launch(name, gridFor(count), args);
}

void FunctionEmitter::launch(const std::string &name, int64_t grid,
                             llvm::ArrayRef<std::string> operands,
                             int64_t block) {
  // No blocks, no work (a tensor with a zero extent): a GPU refuses a
  // launch of zero blocks (cudaErrorInvalidConfiguration) where the
  // emulation's loop over blocks would just do nothing.
  if (grid <= 0)
    return;
  std::string line = "TK_OP_LAUNCH, " + name + "_id, " + std::to_string(grid) +
                     ", " + std::to_string(block);
  for (const std::string &operand : operands)
    line += ", " + operand;
  addStep(line + ",");
}

void FunctionEmitter::addStep(const std::string &line) {
  llvm::StringRef rest = line;
  for (size_t at = rest.find("@TK_SCRATCH_"); at != llvm::StringRef::npos;
       at = rest.find("@TK_SCRATCH_")) {
    rest = rest.drop_front(at);
    scratch.extend(rest, steps);
    rest = rest.drop_front(rest.find('@', 1) + 1);
  }
  code += "    " + line + "\n";
  ++steps;
}

std::string FunctionEmitter::addKernel(const std::string &text,
                                       llvm::StringRef qualifier) {
  // Named by its text, and by its qualifier where that is not the default.
  std::string key =
      qualifier == "TK_KERNEL" ? text : qualifier.str() + " " + text;
  auto [it, inserted] = unit.kernelByBody.try_emplace(key, "");
  if (inserted) {
    it->second = "tk_k" + llvm::utohexstr(llvm::xxh3_64bits(key), true);
    unit.kernels += qualifier.str() + " " + it->second + text + "\n";
    unit.kernelNames.push_back(it->second);
  }
  return it->second;
}

std::string FunctionEmitter::outputBuffer(Value value) {
  if (resultSlot.count(value))
    pointers[value] =
        "TK_RESULT(" + std::to_string(resultSlot.lookup(value)) + ")";
  else
    allocate(value);
  return pointers.lookup(value);
}

/// Whether reduction `op` reduces trailing axes (each output's inputs are
/// one contiguous row: a row kernel, or two passes over few long rows),
/// rather than columns (a thread per output, perhaps over partials).
static bool reducesRows(Operation *op) {
  int64_t rank = tensorOf(op->getOperand(0)).getRank();
  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
  llvm::SmallVector<int64_t> reducedDims;
  for (int64_t d = 0; d < rank; ++d)
    if (llvm::is_contained(axes, d))
      reducedDims.push_back(d);
  return llvm::equal(reducedDims,
                     llvm::seq<int64_t>(rank - reducedDims.size(), rank));
}

/// `op` converts column reduction `reduction`'s result, which nothing else
/// reads, between f32, bf16 and f16 (a bf16 bias gradient widened for its
/// f32 master weight): the pass that finishes each output stores the
/// converted value, so the unconverted result never reaches memory and the
/// conversion costs no launch.
static bool isReductionCast(Operation *reduction, Operation *op) {
  auto cast = dyn_cast<nn::CastOp>(op);
  Value result = reduction->getResult(0);
  auto plain = [](Value value) {
    std::optional<StringRef> storage =
        storageType(tensorOf(value).getElementType());
    return storage && (*storage == "float" || *storage == "tk_bf16" ||
                       *storage == "tk_f16");
  };
  return cast && cast.getInput() == result && result.hasOneUse() &&
         !reducesRows(reduction) && plain(result) && plain(cast.getResult());
}

/// The cast a reduction kernel ends with (isReductionCast), or null when
/// it is the reduction alone.
static Operation *reductionEpilogue(const tandem::lowering::Kernel &kernel) {
  return kernel.members.size() == 2 ? kernel.members[1] : nullptr;
}

void FunctionEmitter::emitReduction(const tandem::lowering::Kernel &kernel) {
  Operation *op = kernel.reduction;
  Operation *epilogue = reductionEpilogue(kernel);
  Value input = op->getOperand(0);
  Value result = epilogue ? epilogue->getResult(0) : op->getResult(0);
  llvm::ArrayRef<int64_t> shape = tensorOf(input).getShape();
  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef();
  bool max = isa<nn::ReduceMaxOp>(op), mean = isa<nn::ReduceMeanOp>(op);
  std::string combine = max ? "tk_op_max" : "tk_op_add";
  std::string init = max ? "(-INFINITY)" : "0.0f";
  int64_t rank = shape.size(), reduced = 1, outputs = 1;
  llvm::SmallVector<int64_t> keptDims, reducedDims;
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(axes, d)) {
      reducedDims.push_back(d);
      reduced *= shape[d];
    } else {
      keptDims.push_back(d);
      outputs *= shape[d];
    }
  }
  bool rows = reducesRows(op);
  std::string finish =
      mean ? "tk_acc / " + floatLiteral(static_cast<float>(reduced)) : "tk_acc";
  // A cast epilogue converts the reduction's value as stored in its type.
  if (epilogue)
    finish = roundTo(finish, storageOf(op->getResult(0)));
  if (rows && !(outputs < kSplitRowsBelow && reduced >= kSplitRowLength)) {
    emitRowKernel(op, {{combine, init, "x", finish}}, "s0", /*perRow=*/true);
    return;
  }
  if (rows) {
    emitSplitRows(op, outputs, reduced, combine, init, finish);
    return;
  }
  // Columns: one thread per output (and chunk of the reduced range, when
  // split), its inputs in row-major order; adjacent threads read adjacent
  // elements.
  bool split = outputs < kSplitColumnsBelow && reduced > 2 * kColumnChunk;
  int64_t chunks = split ? (reduced + kColumnChunk - 1) / kColumnChunk : 1;
  int64_t chunk = split ? kColumnChunk : reduced;
  std::string partials =
      split ? allocateTemporary(4 * static_cast<uint64_t>(outputs * chunks))
            : "";
  llvm::SmallVector<int64_t> strides = tandem::lowering::rowMajorStrides(shape);
  // A summed result is its sum: the value on a step's first microbatch,
  // else the sum plus the value (each output written once, by the pass
  // that finishes it).
  bool sums = summedInPlace.count(result);
  std::string sumParameter = sums ? ", const tk_sum tk_s" : "";
  std::string text;
  llvm::raw_string_ostream b(text);
  b << "(TK_KERNEL_ARGS "
    << (split ? std::string("float") : storageOf(result).str())
    << " *__restrict__ o0, const " << storageOf(input) << " *__restrict__ i0"
    << (split ? "" : sumParameter) << ") {\n";
  b << "  // " << op->getName() << ": " << outputs << " outputs of " << reduced
    << " strided inputs";
  if (split)
    b << ", partials of " << chunks << " chunks";
  b << "\n  TK_PHASE\n"
    << gridStrideLoop("tk_g", outputs * chunks)
    << "    const int64_t o = tk_g % " << outputs << ", tk_first = (tk_g / "
    << outputs << ") * " << chunk << ";\n"
    << "    const int64_t tk_end = tk_first + " << chunk << " < " << reduced
    << " ? tk_first + " << chunk << " : " << reduced << ";\n"
    << "    int64_t tk_r = o, tk_base = 0;\n";
  for (int64_t k = static_cast<int64_t>(keptDims.size()) - 1; k >= 0; --k) {
    int64_t d = keptDims[k];
    b << "    tk_base += (tk_r % " << shape[d] << ") * " << strides[d]
      << ";\n    tk_r /= " << shape[d] << ";\n";
  }
  b << "    float tk_acc = " << init << ";\n"
    << "    for (int64_t j = tk_first; j < tk_end; ++j) {\n"
    << "      int64_t tk_q = j, tk_offset = tk_base;\n";
  for (int64_t k = static_cast<int64_t>(reducedDims.size()) - 1; k >= 0; --k) {
    int64_t d = reducedDims[k];
    b << "      tk_offset += (tk_q % " << shape[d] << ") * " << strides[d]
      << ";\n      tk_q /= " << shape[d] << ";\n";
  }
  b << "      tk_acc = " << combine
    << "::apply(tk_acc, tk_load(i0, tk_offset));\n"
    << "    }\n";
  auto store = [&](const std::string &o) {
    return sums ? "tk_store(o0, " + o + ", tk_summed(tk_s, o0 + " + o + ", " +
                      finish + "));\n"
                : "tk_store(o0, " + o + ", " + finish + ");\n";
  };
  if (split)
    b << "    o0[tk_g] = tk_acc;\n";
  else
    b << "    " << store("tk_g");
  b << "  }\n  TK_END_PHASE\n}\n";
  llvm::SmallVector<std::string, 3> args = {
      split ? partials : outputBuffer(result), pointers.lookup(input)};
  if (!split && sums)
    args.push_back("TK_SUM");
  launchElements(addKernel(text), outputs * chunks, args);
  if (!split)
    return;
  // Each output's partials, chunk by chunk.
  std::string sum;
  llvm::raw_string_ostream c(sum);
  c << "(TK_KERNEL_ARGS " << storageOf(result)
    << " *__restrict__ o0, const float *__restrict__ i0" << sumParameter
    << ") {\n"
    << "  // " << op->getName() << ": " << outputs << " outputs of " << chunks
    << " partials\n  TK_PHASE\n"
    << gridStrideLoop("o", outputs) << "    float tk_acc = " << init << ";\n"
    << "    for (int64_t p = 0; p < " << chunks << "; ++p)\n"
    << "      tk_acc = " << combine << "::apply(tk_acc, i0[p * " << outputs
    << " + o]);\n"
    << "    " << store("o") << "  }\n  TK_END_PHASE\n}\n";
  llvm::SmallVector<std::string, 3> finalArgs = {outputBuffer(result),
                                                 partials};
  if (sums)
    finalArgs.push_back("TK_SUM");
  launchElements(addKernel(sum), outputs, finalArgs);
}

void FunctionEmitter::emitSplitRows(Operation *op, int64_t rows, int64_t n,
                                    const std::string &combine,
                                    const std::string &init,
                                    const std::string &finish) {
  Value input = op->getOperand(0), result = op->getResult(0);
  int64_t chunks = (n + kRowChunk - 1) / kRowChunk;
  std::string partials =
      allocateTemporary(4 * static_cast<uint64_t>(rows * chunks));
  // First pass: a block per chunk of kRowChunk elements of a row, reduced
  // as a row kernel reduces its row (a strided partial per thread, the
  // warp butterfly, thread 0 over the warps in order).
  std::string text;
  llvm::raw_string_ostream b(text);
  b << "(TK_KERNEL_ARGS float *__restrict__ o0, const " << storageOf(input)
    << " *__restrict__ i0) {\n"
    << "  // " << op->getName() << ": " << rows << " rows of " << n << ", "
    << chunks << " chunks each\n"
    << "  TK_LOCAL(float, tk_v);\n"
    << "  TK_SHARED(float, tk_warps, " << tandem::cuda::kBlockSize / 32
    << ");\n"
    << "  for (int64_t tk_b = TK_BLOCK; tk_b < " << rows * chunks
    << "; tk_b += TK_GRID_DIM) {\n"
    << "    const int64_t row = tk_b / " << chunks << ", tk_first = (tk_b % "
    << chunks << ") * " << kRowChunk << ";\n"
    << "    const int64_t tk_end = tk_first + " << kRowChunk << " < " << n
    << " ? tk_first + " << kRowChunk << " : " << n << ";\n"
    << "    TK_PHASE\n"
    << "    float tk_acc = " << init << ";\n"
    << "    for (int64_t j = tk_first + TK_THREAD; j < tk_end; j += "
       "TK_BLOCK_DIM)\n"
    << "      tk_acc = " << combine << "::apply(tk_acc, tk_load(i0, row * " << n
    << " + j));\n"
    << "    TK_AT(tk_v) = tk_acc;\n"
    << "    TK_END_PHASE\n"
    << "    TK_WARP_REDUCE(tk_v, " << combine << ");\n"
    << "    TK_PHASE\n"
    << "    if (TK_THREAD % 32 == 0)\n"
    << "      tk_warps[TK_THREAD / 32] = TK_AT(tk_v);\n"
    << "    TK_END_PHASE\n"
    << "    TK_PHASE\n"
    << "    if (TK_THREAD == 0) {\n"
    << "      float tk_acc = tk_warps[0];\n"
    << "      for (int64_t w = 1; w < TK_BLOCK_DIM / 32; ++w)\n"
    << "        tk_acc = " << combine << "::apply(tk_acc, tk_warps[w]);\n"
    << "      o0[tk_b] = tk_acc;\n"
    << "    }\n"
    << "    TK_END_PHASE\n"
    << "  }\n}\n";
  launch(addKernel(text), std::min<int64_t>(rows * chunks, kMaxBlocks),
         {partials, pointers.lookup(input)});
  // Second pass: each row's partials as a row of their own, the reduction
  // finished there (a mean divides by n).
  RowKernel k;
  k.title = op->getName().getStringRef().str() + " partials";
  k.inputs.push_back({"float", partials});
  k.rows = rows;
  k.n = chunks;
  k.passes.push_back({combine, init, "x", finish});
  k.output = "s0";
  k.perRow = true;
  k.outputType = storageOf(result).str();
  k.outputPointer = outputBuffer(result);
  emitRows(k);
}

void FunctionEmitter::emitRows(const RowKernel &k) {
  std::string text;
  llvm::raw_string_ostream b(text);
  b << "(TK_KERNEL_ARGS " << k.outputType << " *__restrict__ o0";
  for (auto [i, output] : llvm::enumerate(k.moreOutputs))
    b << ", " << output[0] << " *__restrict__ o" << i + 1;
  for (auto [i, input] : llvm::enumerate(k.inputs))
    b << ", const " << input.first << " *__restrict__ i" << i;
  if (!k.checkOperand.empty())
    b << ", const tk_check tk_c";
  b << ") {\n  // " << k.title << ": " << k.rows << " rows of " << k.n << "\n";
  b << "  TK_LOCAL(float, tk_v);\n"
    << "  TK_SHARED(float, tk_warps, " << tandem::cuda::kBlockSize / 32
    << ");\n"
    << "  TK_SHARED(float, tk_stats, " << k.passes.size() << ");\n"
    << "  for (int64_t row = TK_BLOCK; row < " << k.rows
    << "; row += TK_GRID_DIM) {\n";
  // The statistics `uses` reads, of the first `count`.
  auto statistics = [&](size_t count, llvm::StringRef uses) {
    for (size_t s = 0; s < count; ++s)
      if (uses.contains("s" + std::to_string(s)))
        b << "    const float s" << s << " = tk_stats[" << s << "];\n";
  };
  // The loads `uses` reads: p<i>, and x (the row's element j) unless
  // `perRow`.
  auto loadsFor = [&](llvm::StringRef uses, bool perRow = false) {
    std::string text;
    if (!perRow && readsName(uses, "x"))
      text +=
          "      const float x = " +
          (k.x.empty() ? "tk_load(i0, row * " + std::to_string(k.n) + " + j)"
                       : k.x) +
          ";\n";
    for (const auto &[i, index] : k.loads)
      if (readsName(uses, "p" + std::to_string(i)))
        text += "      const auto p" + std::to_string(i) + " = tk_load(i" +
                std::to_string(i) + ", " + index + ");\n";
    return text;
  };
  // Each pass: a strided partial per thread, the warp butterfly, thread 0
  // over the warps in order (the same order on the GPU and the host).
  for (auto [s, pass] : llvm::enumerate(k.passes)) {
    b << "    TK_PHASE\n";
    statistics(s, pass.term);
    b << "    float tk_acc = " << pass.init << ";\n"
      << "    for (int64_t j = TK_THREAD; j < " << (k.reduced ? k.reduced : k.n)
      << "; j += TK_BLOCK_DIM) {\n"
      << loadsFor(pass.term) << "      tk_acc = " << pass.combine
      << "::apply(tk_acc, " << pass.term << ");\n"
      << "    }\n"
      << "    TK_AT(tk_v) = tk_acc;\n"
      << "    TK_END_PHASE\n"
      << "    TK_WARP_REDUCE(tk_v, " << pass.combine << ");\n"
      << "    TK_PHASE\n"
      << "    if (TK_THREAD % 32 == 0)\n"
      << "      tk_warps[TK_THREAD / 32] = TK_AT(tk_v);\n"
      << "    TK_END_PHASE\n"
      << "    TK_PHASE\n"
      << "    if (TK_THREAD == 0) {\n";
    statistics(s, pass.statistic);
    b << "      float tk_acc = tk_warps[0];\n"
      << "      for (int64_t w = 1; w < TK_BLOCK_DIM / 32; ++w)\n"
      << "        tk_acc = " << pass.combine
      << "::apply(tk_acc, tk_warps[w]);\n"
      << "      tk_stats[" << s << "] = " << pass.statistic << ";\n"
      << "    }\n"
      << "    TK_END_PHASE\n";
  }
  b << "    TK_PHASE\n";
  std::string uses = k.output;
  for (const auto &output : k.moreOutputs)
    uses += " " + output[2];
  statistics(k.passes.size(), uses);
  // Per row, the store rounds the one value.
  std::string value = k.perRow ? k.output : roundTo(k.output, k.outputType);
  std::string check;
  if (!k.checkOperand.empty())
    check = "      if (!(" + k.checkCondition +
            "))\n        tk_report(tk_c, row, " + k.checkValue + ");\n";
  std::string checked = k.checkCondition + " " + k.checkValue;
  if (k.perRow) {
    // The row's thread 0 checks its index and writes its value.
    b << "    if (TK_THREAD == 0) {\n"
      << loadsFor(uses + (check.empty() ? "" : " " + checked), true) << check
      << "      tk_store(o0, row, " << value << ");\n"
      << "    }\n";
  } else {
    if (!check.empty())
      b << "    if (TK_THREAD == 0) {\n"
        << loadsFor(checked, true) << check << "    }\n";
    std::string loads = loadsFor(uses, k.perRow);
    b << "    for (int64_t j = TK_THREAD; j < " << k.n
      << "; j += TK_BLOCK_DIM) {\n"
      << loads << "      tk_store(o0, row * " << k.n << " + j, " << value
      << ");\n";
    for (auto [i, output] : llvm::enumerate(k.moreOutputs))
      b << "      tk_store(o" << i + 1 << ", row * " << k.n << " + j, "
        << roundTo(output[2], output[0]) << ");\n";
    b << "    }\n";
  }
  b << "    TK_END_PHASE\n"
    << "  }\n}\n";
  std::string name = addKernel(text);
  if (k.rows == 0)
    return;
  std::vector<std::string> operands = {k.outputPointer};
  for (const auto &output : k.moreOutputs)
    operands.push_back(output[1]);
  for (const auto &input : k.inputs)
    operands.push_back(input.second);
  if (!k.checkOperand.empty())
    operands.push_back(k.checkOperand);
  launch(name, std::min<int64_t>(k.rows, kMaxBlocks), operands);
}

void FunctionEmitter::emitRowKernel(Operation *op,
                                    llvm::ArrayRef<RowPass> passes,
                                    const std::string &output, bool perRow,
                                    llvm::ArrayRef<std::string> moreOutputs) {
  Value input = op->getOperand(0), result = op->getResult(0);
  RowKernel k;
  k.title = op->getName().getStringRef().str();
  // Per element: rows of the last dimension. Per row (a reduction): rows of
  // the reduced trailing dimensions, one per result element.
  int64_t total = tensorOf(input).getNumElements();
  k.rows =
      perRow ? tensorOf(result).getNumElements()
             : total / std::max<int64_t>(1, tensorOf(input).getShape().back());
  k.n = k.rows == 0 ? 0 : total / k.rows;
  for (Value operand : op->getOperands())
    k.inputs.push_back({storageOf(operand).str(), pointers.lookup(operand)});
  // With a row prologue the kernel computes its rows from the add's
  // buffers (the first in input 0's place) and stores them where the add's
  // result goes when anything else reads them.
  auto prologue = rowPrologues.find(op);
  if (prologue != rowPrologues.end()) {
    auto [first, second] = prologue->second.inputs;
    std::string index = "row * " + std::to_string(k.n) + " + j";
    k.inputs[0] = {storageOf(first).str(), pointers.lookup(first)};
    k.inputs.push_back({storageOf(second).str(), pointers.lookup(second)});
    k.x = roundTo("(tk_load(i0, " + index + ") + tk_load(i" +
                      std::to_string(k.inputs.size() - 1) + ", " + index + "))",
                  storageOf(input));
    k.title = "nn.add + " + k.title;
  }
  // Further operands are per column (a norm's weight and bias), or per
  // element like the rows (a norm gradient's cotangent).
  for (unsigned i = 1; i < op->getNumOperands(); ++i)
    k.loads.push_back(
        {i, tensorOf(op->getOperand(i)).getShape() == tensorOf(input).getShape()
                ? "row * " + std::to_string(k.n) + " + j"
                : std::string("j")});
  // With a row epilogue the kernel writes dx + other where the add's
  // result goes, rounded once.
  Value written = result;
  auto epilogue = rowEpilogues.find(op);
  if (epilogue != rowEpilogues.end()) {
    Value other = epilogue->second.other;
    unsigned i = k.inputs.size();
    k.inputs.push_back({storageOf(other).str(), pointers.lookup(other)});
    k.loads.push_back({i, "row * " + std::to_string(k.n) + " + j"});
    written = epilogue->second.output;
    k.title +=
        " + " +
        epilogue->second.output.getDefiningOp()->getName().getStringRef().str();
  }
  k.outputType = storageOf(written).str();
  k.outputPointer = outputBuffer(written);
  for (auto [i, expression] : llvm::enumerate(moreOutputs)) {
    Value more = op->getResult(i + 1);
    k.moreOutputs.push_back(
        {storageOf(more).str(), outputBuffer(more), expression});
  }
  if (prologue != rowPrologues.end() && !input.hasOneUse())
    k.moreOutputs.push_back({storageOf(input).str(), outputBuffer(input), "x"});
  k.passes.assign(passes.begin(), passes.end());
  k.output = epilogue == rowEpilogues.end()
                 ? output
                 : "(" + output + ") + p" + std::to_string(k.inputs.size() - 1);
  k.perRow = perRow;
  emitRows(k);
}

void FunctionEmitter::emitCrossEntropy(Operation *op) {
  Value logits = op->getOperand(0), targets = op->getOperand(1);
  Value result = op->getResult(0);
  // Rows of `vocab` columns; the first `classes` are classes.
  int64_t vocab = tensorOf(logits).getShape().back();
  auto grad = dyn_cast<nn::CrossEntropyGradOp>(op);
  int64_t classes = grad ? grad.getClassCount()
                         : cast<nn::CrossEntropyOp>(op).getClassCount();
  int64_t positions = tensorOf(targets).getNumElements();
  std::string n = std::to_string(vocab);
  std::string c = std::to_string(classes);
  RowKernel k;
  k.title = op->getName().getStringRef().str();
  k.rows = positions;
  k.n = vocab;
  k.reduced = classes;
  k.inputs = {{storageOf(logits).str(), pointers.lookup(logits)},
              {storageOf(targets).str(), pointers.lookup(targets)}};
  k.passes = {kRowMax, kRowSumExp};
  k.loads = {{1, "row"}};
  k.checkCondition = "p1 >= 0 && p1 < " + c;
  k.checkValue = "p1";
  k.checkOperand = checkOperand(op);
  if (grad) {
    // The cotangent's share of each position, in f32; the padding's
    // gradient is 0.
    Value cotangent = op->getOperand(2);
    k.inputs.push_back(
        {storageOf(cotangent).str(), pointers.lookup(cotangent)});
    k.loads.push_back({2, "0"});
    k.outputType = storageOf(result).str();
    k.outputPointer = outputBuffer(result);
    k.output = "(tk_exp(x - s0) / s1 - (j == p1 ? 1.0f : 0.0f)) * (p2 / " +
               floatLiteral(static_cast<float>(positions)) + ")";
    if (classes < vocab)
      k.output = "j < " + c + " ? " + k.output + " : 0.0f";
    emitRows(k);
    return;
  }
  // Each position's loss into scratch (NaN for a target outside the
  // classes, reported, so the mean is NaN), then their mean: the
  // probabilities are never stored.
  k.perRow = true;
  k.outputType = "float";
  k.outputPointer = allocateTemporary(positions * 4);
  k.output = "p1 >= 0 && p1 < " + c +
             " ? s0 + tk_log(s1) - tk_load(i0, row * " + n + " + p1) : NAN";
  emitRows(k);
  RowKernel mean;
  mean.title = "the mean of the positions' losses";
  mean.rows = 1;
  mean.n = positions;
  mean.inputs = {{"float", k.outputPointer}};
  mean.passes = {{"tk_op_add", "0.0f", "x",
                  "tk_acc / " + floatLiteral(static_cast<float>(positions))}};
  mean.perRow = true;
  mean.output = "s0";
  mean.outputType = storageOf(result).str();
  mean.outputPointer = outputBuffer(result);
  emitRows(mean);
}

void FunctionEmitter::emitAttention(Operation *op) {
  auto query = tensorOf(op->getOperand(0)), key = tensorOf(op->getOperand(1));
  int64_t batch = query.getShape()[0], tq = query.getShape()[1];
  int64_t dim = query.getShape()[2], tk = key.getShape()[1];
  int64_t heads = op->getAttrOfType<IntegerAttr>("heads").getInt();
  bool causal = op->hasAttr("causal");
  auto forward = dyn_cast<nn::AttentionOp>(op);
  auto backward = dyn_cast<nn::AttentionGradOp>(op);
  double scale =
      forward ? forward.getEffectiveScale() : backward.getEffectiveScale();
  int64_t kvHeads =
      forward ? forward.getKeyValueHeads() : backward.getKeyValueHeads();
  std::string type = storageOf(op->getOperand(0)).str();
  int64_t hd = dim / heads;
  // The row tensors in the shape's order (tk_attention_layout): q, k, v, y,
  // then dy, dq, dk, dv. Each is its own buffer (rows of its width) or a
  // piece of a wider one, in place. The log-sum-exp is not among them.
  Value lse = forward ? forward.getLse() : backward.getLse();
  llvm::SmallVector<Value, 8> tensors;
  for (Value value : llvm::concat<Value>(op->getOperands(), op->getResults()))
    if (value != lse)
      tensors.push_back(value);
  std::string layouts;
  for (auto [index, value] : llvm::enumerate(tensors)) {
    bool keySide = index == 1 || index == 2 || index == 6 || index == 7;
    int64_t rows = keySide ? tk : tq, width = keySide ? kvHeads * hd : dim;
    AttentionView own{value, 0, rows * width, width};
    auto view = attentionViews.find(value);
    const AttentionView &at = view == attentionViews.end() ? own : view->second;
    layouts += std::string(index ? ", " : "") + "{" +
               std::to_string(at.offset) + ", " + std::to_string(at.batch) +
               ", " + std::to_string(at.row) + "}";
  }
  std::string initializer =
      "{" + std::to_string(batch) + ", " + std::to_string(heads) + ", " +
      std::to_string(kvHeads) + ", " + std::to_string(tq) + ", " +
      std::to_string(tk) + ", " + std::to_string(dim) + ", " +
      (causal ? "1" : "0") + ", " + floatLiteral(static_cast<float>(scale)) +
      ", {" + layouts + "}}";
  std::string shape = "TK_ATTENTION_SHAPE(" +
                      std::to_string(unit.attentionShapes.of(initializer)) +
                      ")";
  int64_t bytes = tensorOf(op->getOperand(0)).getElementTypeBitWidth() / 8;
  // An operand's buffer: its own, or the split's it is a piece of.
  auto operandBuffer = [&](Value operand) {
    auto view = attentionViews.find(operand);
    return pointers.lookup(view == attentionViews.end() ? operand
                                                        : view->second.whole);
  };
  // A result's buffer: its own, or the concat's it is a piece of (the
  // first piece written allocates it).
  auto resultBuffer = [&](Value result) {
    auto view = attentionViews.find(result);
    if (view == attentionViews.end())
      return outputBuffer(result);
    Value whole = view->second.whole;
    return pointers.count(whole) ? pointers.lookup(whole) : outputBuffer(whole);
  };
  // A parameter of a block function: its C type and the launch's argument
  // (std::nullopt: the kernel passes a null pointer instead).
  struct Param {
    std::string type;
    std::optional<std::string> argument;
  };
  std::string rows = "const " + type + " *";
  // One kernel calling the block function `function` (template arguments
  // HD, the tile rows, then `more`) on `params`, then its shared memory:
  // with `cache`, the row cache when the shape has one; two tiles; with
  // `tileStats`, the tiles' rows' lse and D. Then its launch: a block of
  // block.rows threads per block.rows of `rowCount` rows of each of
  // `rowHeads` heads.
  auto emit = [&](StringRef title, StringRef function, StringRef more,
                  ArrayRef<Param> params, bool cache, bool tileStats,
                  const AttentionBlock &block, int64_t rowHeads,
                  int64_t rowCount) {
    std::string text, call;
    llvm::raw_string_ostream b(text);
    // The launch's operands: the shape, then the parameters p0, p1, ...
    std::vector<std::string> operands = {shape};
    b << "(TK_KERNEL_ARGS tk_attention_shape s";
    for (const Param &param : params) {
      if (!param.argument) {
        call += ", (" + param.type + ")nullptr";
        continue;
      }
      std::string name = "p" + std::to_string(operands.size() - 1);
      b << ", " << param.type << "__restrict__ " << name;
      call += ", " + name;
      operands.push_back(*param.argument);
    }
    b << ") {\n  // " << title << ", tiles of " << block.tile << "\n";
    if (block.cached)
      b << "  TK_SHARED(" << type << ", tk_rows, "
        << block.cached * hd * block.rows << ");\n";
    llvm::SmallVector<int64_t, 4> tiles = block.tileElements;
    if (tiles.empty())
      tiles.assign(2, block.tile * hd);
    for (auto [t, elements] : llvm::enumerate(tiles))
      b << "  TK_SHARED(" << type << ", tk_tile" << t << ", " << elements
        << ");\n";
    if (tileStats)
      b << "  TK_SHARED(float, tk_tile_stats, "
        << kAttentionTileStats * block.tile << ");\n";
    b << "  " << function << "<" << hd << ", " << block.tile << more
      << ">(TK_LAUNCH_ARG s" << call;
    if (cache)
      b << ", " << (block.cached ? "tk_rows" : "(" + type + " *)nullptr");
    for (size_t t = 0; t < tiles.size(); ++t)
      b << ", tk_tile" << t;
    if (tileStats)
      b << ", tk_tile_stats";
    b << ");\n}\n";
    if (rowCount == 0)
      return;
    int64_t blocks =
        batch * rowHeads * ((rowCount + block.rows - 1) / block.rows);
    // TK_ATTENTION_KERNEL: blocks of at most 64 threads, registers enough
    // for one block a multiprocessor (AttentionPrelude.h); the tensor-core
    // kernel's, 128 (TensorCorePrelude.h).
    launch(addKernel(text, block.declaration), std::min(blocks, kMaxBlocks),
           operands, block.threads ? block.threads : block.rows);
  };
  // The tensor cores multiply bf16 and f16 in tiles of 16 columns.
  bool tensorCores = unit.options.tensorCoreAttention &&
                     (type == "tk_bf16" || type == "tk_f16") && hd % 16 == 0 &&
                     hd <= tandem::cuda::kMaxTensorCoreHeadDim;
  Param q{rows, operandBuffer(op->getOperand(0))},
      k{rows, operandBuffer(op->getOperand(1))},
      v{rows, operandBuffer(op->getOperand(2))};
  if (forward) {
    std::vector<Param> params = {
        q,
        k,
        v,
        {type + " *", resultBuffer(forward.getResult())},
        {"float *", lse ? std::optional(outputBuffer(lse)) : std::nullopt}};
    if (tensorCores) {
      emit("nn.attention: 16 query rows a warp, on the tensor cores",
           "tk_attention_forward_tc", "", params, /*cache=*/false,
           /*tileStats=*/false, tensorCoreAttentionBlock(hd, bytes, 1, 1, 0),
           heads, tq);
      return;
    }
    emit("nn.attention: a query row per thread", "tk_attention_forward", "",
         params, /*cache=*/false, /*tileStats=*/false,
         attentionBlock(hd, bytes, 0, 0), heads, tq);
    return;
  }
  Param lseIn{"const float *", pointers.lookup(lse)},
      dy{rows, operandBuffer(backward.getCotangent())};
  // Per query row D = dy·y, in f32: written by dq, read by dk and dv.
  std::string dots = allocateTemporary(
      static_cast<uint64_t>(batch * heads * tq) * sizeof(float));
  // dq's kernel (either path) takes q, k, v, y, the log-sum-exp (f32) and
  // dy, and writes dq and D.
  std::vector<Param> dqParams = {
      q,
      k,
      v,
      {rows, operandBuffer(backward.getOutput())},
      lseIn,
      dy,
      {type + " *", resultBuffer(backward.getDquery())},
      {"float *", dots}};
  if (tensorCores) {
    // dq (and D), then dk and dv in one kernel (TensorCorePrelude.h).
    emit("nn.attention_grad: dq, 16 query rows a warp, on the tensor cores",
         "tk_attention_grad_rows_tc", "", dqParams, /*cache=*/false,
         /*tileStats=*/false, tensorCoreAttentionBlock(hd, bytes, 2, 1, 0),
         heads, tq);
    emit("nn.attention_grad: dk and dv, 16 key rows a warp, on the tensor "
         "cores",
         "tk_attention_grad_keys_tc", "",
         {q,
          k,
          v,
          lseIn,
          dy,
          {type + " *", resultBuffer(op->getResult(1))},
          {type + " *", resultBuffer(op->getResult(2))},
          {"const float *", dots}},
         /*cache=*/false, /*tileStats=*/true,
         tensorCoreAttentionBlock(hd, bytes, 2, 2, kAttentionTileStats),
         kvHeads, tk);
    return;
  }
  // dq caches the q and dy rows and walks key and value tiles.
  emit("nn.attention_grad: dq, a query row per thread",
       "tk_attention_grad_rows", "", dqParams, /*cache=*/true,
       /*tileStats=*/false, attentionBlock(hd, bytes, 0, 2), heads, tq);
  // dk, then dv: a key row of a key and value head per thread, one
  // accumulator row each, walking the query and output-gradient tiles of
  // the head's group with their rows' lse and D (no atomics: a group's sum
  // is one thread's). dk caches the k and v rows, dv the k row.
  for (unsigned result : {1u, 2u}) {
    bool keys = result == 1;
    emit(keys ? "nn.attention_grad: dk, a key row per thread"
              : "nn.attention_grad: dv, a key row per thread",
         "tk_attention_grad_keys", keys ? ", true" : ", false",
         {q,
          k,
          v,
          lseIn,
          dy,
          {type + " *", resultBuffer(op->getResult(result))},
          {"const float *", dots}},
         /*cache=*/true, /*tileStats=*/true,
         attentionBlock(hd, bytes, kAttentionTileStats, keys ? 2 : 1), kvHeads,
         tk);
  }
}

void FunctionEmitter::emitEmbedding(Operation *op) {
  if (auto oneHot = dyn_cast<nn::OneHotOp>(op)) {
    Value ids = oneHot.getIds(), result = oneHot.getResult();
    int64_t classes = oneHot.getClasses();
    int64_t count = tensorOf(result).getNumElements();
    // An element per thread; an id outside the classes gives a row of NaN,
    // as nn.embedding's does, reported by the row's first element.
    std::string text;
    llvm::raw_string_ostream b(text);
    std::string inRange = "id >= 0 && id < " + std::to_string(classes);
    b << "(TK_KERNEL_ARGS " << storageOf(result) << " *__restrict__ o0, const "
      << storageOf(ids) << " *__restrict__ i0, const tk_check tk_c) {\n"
      << "  // nn.one_hot: rows of " << classes << " classes\n"
      << "  TK_PHASE\n"
      << gridStrideLoop("i", count) << "    const int64_t id = tk_load(i0, i / "
      << classes << ");\n"
      << reportOutside(inRange, "i", classes) << "    tk_store(o0, i, "
      << inRange << " ? (i % " << classes << " == id ? 1.0f : 0.0f) : NAN);\n"
      << "  }\n  TK_END_PHASE\n}\n";
    launchElements(
        addKernel(text), count,
        {outputBuffer(result), pointers.lookup(ids), checkOperand(op)});
    return;
  }
  if (auto embedding = dyn_cast<nn::EmbeddingOp>(op)) {
    Value table = embedding->getOperand(0), ids = embedding->getOperand(1);
    Value result = embedding->getResult(0);
    int64_t vocab = embedding.getRowCount();
    int64_t dim = tensorOf(table).getShape()[1];
    int64_t count = tensorOf(result).getNumElements();
    // A row per id; an id outside the vocabulary gives a row of NaN (the
    // loss turns NaN rather than reading outside the table), reported by
    // the row's first element.
    std::string text;
    llvm::raw_string_ostream b(text);
    std::string inRange = "id >= 0 && id < " + std::to_string(vocab);
    b << "(TK_KERNEL_ARGS " << storageOf(result) << " *__restrict__ o0, const "
      << storageOf(table) << " *__restrict__ i0, const " << storageOf(ids)
      << " *__restrict__ i1, const tk_check tk_c) {\n"
      << "  // nn.embedding: rows of " << dim << " from " << vocab << "\n"
      << "  TK_PHASE\n"
      << gridStrideLoop("i", count) << "    const int64_t id = tk_load(i1, i / "
      << dim << ");\n"
      << reportOutside(inRange, "i", dim) << "    tk_store(o0, i, " << inRange
      << " ? tk_load(i0, id * " << dim << " + i % " << dim << ") : NAN);\n"
      << "  }\n  TK_END_PHASE\n}\n";
    launchElements(addKernel(text), count,
                   {outputBuffer(result), pointers.lookup(table),
                    pointers.lookup(ids), checkOperand(op)});
    return;
  }
  // The gradient without float atomics: the positions of each id listed in
  // increasing order (a count, an exclusive scan and a fill, all
  // deterministic), then each output element sums its positions' rows in
  // that order, as the evaluator does. Ids outside the vocabulary add
  // nothing (the forward nn.embedding of the same ids reported them);
  // rows from `rows` on (a padded table's) list no positions.
  auto grad = cast<nn::EmbeddingGradOp>(op);
  Value cotangent = grad.getCotangent(), ids = grad.getIds();
  Value result = grad.getResult();
  int64_t vocab = tensorOf(result).getShape()[0];
  int64_t dim = tensorOf(result).getShape()[1];
  int64_t positions = tensorOf(ids).getNumElements();
  std::string scanned = std::to_string(positions);
  if (grad.getRowCount() < vocab)
    scanned = "(v < " + std::to_string(grad.getRowCount()) + " ? " + scanned +
              " : 0)";
  std::string idType = storageOf(ids).str();
  std::string counts = allocateTemporary(8 * (vocab + 1));
  std::string list = allocateTemporary(8 * std::max<int64_t>(positions, 1));
  std::string head = "(TK_KERNEL_ARGS int64_t *__restrict__ o0, const " +
                     idType + " *__restrict__ i0) {\n";
  std::string loop = "  TK_PHASE\n" + gridStrideLoop("v", vocab);
  std::string countText =
      head + "  // nn.embedding_grad: positions per id\n" + loop +
      "    int64_t c = 0;\n    for (int64_t p = 0; p < " + scanned +
      "; ++p)\n      c += tk_load(i0, p) == v;\n"
      "    o0[v + 1] = c;\n  }\n  TK_END_PHASE\n}\n";
  launchElements(addKernel(countText), vocab, {counts, pointers.lookup(ids)});
  // An exclusive scan of the counts by one block: each thread sums its
  // chunk of ids, thread 0 turns the chunks' sums into their starts, each
  // thread writes its chunk's running sums (integers: exact in any order).
  // One thread over the whole vocabulary would be a chain of dependent
  // memory round trips, about a millisecond at 50257 ids.
  int64_t chunk = (vocab + tandem::cuda::kBlockSize - 1) /
                  static_cast<int64_t>(tandem::cuda::kBlockSize);
  std::string next = "(TK_THREAD + 1) * " + std::to_string(chunk);
  std::string end = "(" + next + " < " + std::to_string(vocab) + " ? " + next +
                    " : " + std::to_string(vocab) + ")";
  std::string chunkLoop = "    for (int64_t v = TK_THREAD * " +
                          std::to_string(chunk) + "; v < " + end + "; ++v)\n";
  std::string scanText =
      "(TK_KERNEL_ARGS int64_t *__restrict__ o0) {\n"
      "  // nn.embedding_grad: where each id's positions start\n"
      "  TK_SHARED(int64_t, tk_sums, " +
      std::to_string(tandem::cuda::kBlockSize) +
      ");\n"
      "  TK_PHASE\n  {\n    int64_t tk_sum = 0;\n" +
      chunkLoop +
      "      tk_sum += o0[v + 1];\n    tk_sums[TK_THREAD] = tk_sum;\n  }\n"
      "  TK_END_PHASE\n"
      "  TK_PHASE\n  if (TK_THREAD == 0) {\n    int64_t tk_run = 0;\n"
      "    for (int64_t t = 0; t < TK_BLOCK_DIM; ++t) {\n"
      "      const int64_t tk_sum = tk_sums[t];\n      tk_sums[t] = tk_run;\n"
      "      tk_run += tk_sum;\n    }\n    o0[0] = 0;\n  }\n  TK_END_PHASE\n"
      "  TK_PHASE\n  {\n    int64_t tk_run = tk_sums[TK_THREAD];\n" +
      chunkLoop +
      "    {\n      tk_run += o0[v + 1];\n      o0[v + 1] = tk_run;\n"
      "    }\n  }\n  TK_END_PHASE\n}\n";
  launch(addKernel(scanText), 1, {counts});
  std::string fillText =
      "(TK_KERNEL_ARGS int64_t *__restrict__ o0, const int64_t *__restrict__ "
      "i0, const " +
      idType +
      " *__restrict__ i1) {\n  // nn.embedding_grad: positions in order\n" +
      loop + "    int64_t k = i0[v];\n    for (int64_t p = 0; p < " + scanned +
      "; ++p)\n      if (tk_load(i1, p) == v)\n        o0[k++] = p;\n  }\n"
      "  TK_END_PHASE\n}\n";
  launchElements(addKernel(fillText), vocab,
                 {list, counts, pointers.lookup(ids)});
  int64_t count = vocab * dim;
  // A gradient summed over microbatches adds each element to its sum
  // itself (summedInPlace): no V x C scratch and no accumulating launch,
  // the same bits.
  bool sums = summedInPlace.count(result);
  std::string sumText =
      "(TK_KERNEL_ARGS " + storageOf(result).str() +
      " *__restrict__ o0, const " + storageOf(cotangent).str() +
      " *__restrict__ i0, const int64_t *__restrict__ i1, const int64_t "
      "*__restrict__ i2" +
      (sums ? ", const tk_sum tk_s" : "") +
      ") {\n  // nn.embedding_grad: each id's rows summed" +
      (sums ? " into the gradient's sum" : "") + "\n  TK_PHASE\n" +
      gridStrideLoop("i", count) + "    const int64_t v = i / " +
      std::to_string(dim) + ", d = i % " + std::to_string(dim) +
      ";\n    float tk_acc = 0.0f;\n"
      "    for (int64_t k = i1[v]; k < i1[v + 1]; ++k)\n"
      "      tk_acc = tk_acc + tk_load(i0, i2[k] * " +
      std::to_string(dim) + " + d);\n    " +
      (sums ? "tk_store(o0, i, tk_summed(tk_s, o0 + i, tk_acc));"
            : "tk_store(o0, i, tk_acc);") +
      "\n  }\n  TK_END_PHASE\n}\n";
  llvm::SmallVector<std::string, 5> args = {
      outputBuffer(result), pointers.lookup(cotangent), counts, list};
  if (sums)
    args.push_back("TK_SUM");
  launchElements(addKernel(sumText), count, args);
}

void FunctionEmitter::emitAxisSoftmax(Operation *op, int64_t axis) {
  Value input = op->getOperand(0), result = op->getResult(0);
  llvm::ArrayRef<int64_t> shape = tensorOf(input).getShape();
  int64_t n = shape[axis], outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1, e = shape.size(); d < e; ++d)
    inner *= shape[d];
  std::string stride = std::to_string(inner), length = std::to_string(n);
  std::string at = "tk_base + j * " + stride;
  std::string text;
  llvm::raw_string_ostream b(text);
  b << "(TK_KERNEL_ARGS " << storageOf(result) << " *__restrict__ o0, const "
    << storageOf(input) << " *__restrict__ i0) {\n"
    << "  // " << op->getName() << " along axis " << axis << ": a column of "
    << n << " at stride " << inner << " per thread\n  TK_PHASE\n"
    << gridStrideLoop("c", outer * inner) << "    const int64_t tk_base = c / "
    << stride << " * " << n * inner << " + c % " << stride << ";\n"
    << "    float s0 = -INFINITY, s1 = 0.0f;\n"
    << "    for (int64_t j = 0; j < " << length
    << "; ++j)\n      s0 = tk_op_max::apply(s0, tk_load(i0, " << at << "));\n"
    << "    for (int64_t j = 0; j < " << length
    << "; ++j)\n      s1 += tk_exp(tk_load(i0, " << at << ") - s0);\n"
    << "    for (int64_t j = 0; j < " << length << "; ++j) {\n"
    << "      const float x = tk_load(i0, " << at << ");\n"
    << "      tk_store(o0, " << at << ", "
    << (isa<nn::SoftmaxOp>(op) ? "tk_exp(x - s0) / s1"
                               : "(x - s0) - tk_log(s1)")
    << ");\n    }\n  }\n  TK_END_PHASE\n}\n";
  launchElements(addKernel(text), outer * inner,
                 {outputBuffer(result), pointers.lookup(input)});
}

void FunctionEmitter::emitRowOp(Operation *op) {
  int64_t n = tensorOf(op->getOperand(0)).getShape().back();
  std::string count = floatLiteral(static_cast<float>(n));
  if (isa<nn::SoftmaxOp, nn::LogSoftmaxOp>(op)) {
    int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    if (axis != tensorOf(op->getOperand(0)).getRank() - 1) {
      emitAxisSoftmax(op, axis);
      return;
    }
  }
  if (isa<nn::SoftmaxOp>(op)) {
    emitRowKernel(op, {kRowMax, kRowSumExp}, "tk_exp(x - s0) / s1");
    return;
  }
  if (isa<nn::LogSoftmaxOp>(op)) {
    emitRowKernel(op, {kRowMax, kRowSumExp}, "(x - s0) - tk_log(s1)");
    return;
  }
  auto epsilonOf = [](llvm::APFloat epsilon) {
    return floatLiteral(static_cast<float>(epsilon.convertToDouble()));
  };
  if (auto rms = dyn_cast<nn::RMSNormOp>(op)) {
    RowPass squares{"tk_op_add", "0.0f", "x * x",
                    "1.0f / tk_sqrt(tk_acc / " + count + " + " +
                        epsilonOf(rms.getEpsilon()) + ")"};
    emitRowKernel(op, {squares}, "x * s0 * p1");
    return;
  }
  // The gradients: r as the forward op computes it, then the sums of
  // ĝ = dy·w (layer norm only) and of ĝ·x̂; dx and dy·x̂ per element.
  if (auto grad = dyn_cast<nn::RMSNormGradOp>(op)) {
    RowPass squares{"tk_op_add", "0.0f", "x * x",
                    "1.0f / tk_sqrt(tk_acc / " + count + " + " +
                        epsilonOf(grad.getEpsilon()) + ")"};
    RowPass gx{"tk_op_add", "0.0f", "(p2 * p1) * (x * s0)",
               "tk_acc / " + count};
    emitRowKernel(op, {squares, gx}, "s0 * (p2 * p1 - (x * s0) * s1)",
                  /*perRow=*/false, {"p2 * (x * s0)"});
    return;
  }
  RowPass mean{"tk_op_add", "0.0f", "x", "tk_acc / " + count};
  if (auto grad = dyn_cast<nn::LayerNormGradOp>(op)) {
    RowPass variance{"tk_op_add", "0.0f", "(x - s0) * (x - s0)",
                     "1.0f / tk_sqrt(tk_acc / " + count + " + " +
                         epsilonOf(grad.getEpsilon()) + ")"};
    RowPass g{"tk_op_add", "0.0f", "p2 * p1", "tk_acc / " + count};
    RowPass gx{"tk_op_add", "0.0f", "(p2 * p1) * ((x - s0) * s1)",
               "tk_acc / " + count};
    emitRowKernel(op, {mean, variance, g, gx},
                  "s1 * ((p2 * p1 - s2) - ((x - s0) * s1) * s3)",
                  /*perRow=*/false, {"p2 * ((x - s0) * s1)"});
    return;
  }
  auto layer = cast<nn::LayerNormOp>(op);
  RowPass variance{"tk_op_add", "0.0f", "(x - s0) * (x - s0)",
                   "1.0f / tk_sqrt(tk_acc / " + count + " + " +
                       epsilonOf(layer.getEpsilon()) + ")"};
  emitRowKernel(op, {mean, variance}, "(x - s0) * s1 * p1 + p2");
}

void FunctionEmitter::emitCopy(Value src, Value dst,
                               llvm::ArrayRef<int64_t> shape,
                               llvm::ArrayRef<int64_t> srcStrides,
                               int64_t srcBase,
                               llvm::ArrayRef<int64_t> dstStrides,
                               int64_t dstBase) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  std::string text;
  llvm::raw_string_ostream b(text);
  b << "(TK_KERNEL_ARGS " << storageOf(dst) << " *__restrict__ o0, const "
    << storageOf(src) << " *__restrict__ i0) {\n"
    << "  // copy of " << count << " elements\n"
    << "  TK_PHASE\n"
    << gridStrideLoop("i", count) << "    int64_t tk_r = i;\n";
  writeDigits(b, shape);
  if (shape.empty())
    b << "    (void)tk_r;\n";
  b << "    o0[" << tandem::lowering::offsetExpr(dstStrides, dstBase)
    << "] = i0[" << tandem::lowering::offsetExpr(srcStrides, srcBase) << "];\n"
    << "  }\n  TK_END_PHASE\n}\n";
  launchElements(addKernel(text), count,
                 {pointers.lookup(dst), pointers.lookup(src)});
}

void FunctionEmitter::emitDataMovement(Operation *op) {
  using tandem::lowering::rowMajorStrides;
  if (auto transpose = dyn_cast<nn::TransposeOp>(op)) {
    llvm::SmallVector<int64_t> in =
        rowMajorStrides(tensorOf(transpose.getInput()).getShape());
    llvm::SmallVector<int64_t> strides;
    for (int64_t p : transpose.getPermutation())
      strides.push_back(in[p]);
    llvm::ArrayRef<int64_t> shape = tensorOf(transpose.getResult()).getShape();
    outputBuffer(transpose.getResult());
    emitCopy(transpose.getInput(), transpose.getResult(), shape, strides, 0,
             rowMajorStrides(shape), 0);
    return;
  }
  if (auto slice = dyn_cast<nn::SliceOp>(op)) {
    llvm::SmallVector<int64_t> in =
        rowMajorStrides(tensorOf(slice.getInput()).getShape());
    llvm::SmallVector<int64_t> strides;
    int64_t base = 0;
    for (auto [d, start, step] :
         llvm::enumerate(slice.getStarts(), slice.getStrides())) {
      base += start * in[d];
      strides.push_back(step * in[d]);
    }
    llvm::ArrayRef<int64_t> shape = tensorOf(slice.getResult()).getShape();
    outputBuffer(slice.getResult());
    emitCopy(slice.getInput(), slice.getResult(), shape, strides, base,
             rowMajorStrides(shape), 0);
    return;
  }
  // concat and split: each piece is a block of the whole along the axis.
  bool concat = isa<nn::ConcatOp>(op);
  Value whole = concat ? op->getResult(0) : op->getOperand(0);
  llvm::ArrayRef<int64_t> shape = tensorOf(whole).getShape();
  int64_t axis = concat ? cast<nn::ConcatOp>(op).getAxis()
                        : cast<nn::SplitOp>(op).getAxis();
  if (axis < 0)
    axis += static_cast<int64_t>(shape.size());
  llvm::SmallVector<int64_t> wholeStrides = rowMajorStrides(shape);
  // An attention result written in place allocated a concat's buffer.
  if (concat && !pointers.count(whole))
    outputBuffer(whole);
  int64_t start = 0;
  ValueRange pieces =
      concat ? ValueRange(op->getOperands()) : ValueRange(op->getResults());
  for (Value piece : pieces) {
    llvm::ArrayRef<int64_t> pieceShape = tensorOf(piece).getShape();
    int64_t offset = start * wholeStrides[axis];
    // Read or written in place by attention: nothing to copy.
    if (attentionViews.count(piece)) {
      start += pieceShape[axis];
      continue;
    }
    if (concat) {
      emitCopy(piece, whole, pieceShape, rowMajorStrides(pieceShape), 0,
               wholeStrides, offset);
    } else {
      outputBuffer(piece);
      emitCopy(whole, piece, pieceShape, wholeStrides, offset,
               rowMajorStrides(pieceShape), 0);
    }
    start += pieceShape[axis];
  }
}

void FunctionEmitter::emitCodec(Operation *op) {
  auto quantize = dyn_cast<nn::QuantizeOp>(op);
  auto dequantize = dyn_cast<nn::DequantizeOp>(op);
  Value payload = quantize ? quantize.getPayload() : dequantize.getPayload();
  int64_t block = quantize ? quantize.getBlock() : dequantize.getBlock();
  int64_t width = tensorOf(payload).getShape().back();
  int64_t count = tensorOf(payload).getNumElements();
  int64_t rows = width ? count / width : 0;
  int64_t blocks = tandem_codec::blockCount(width, block);
  int64_t last = width - (blocks - 1) * block;
  Type payloadType = tensorOf(payload).getElementType();
  int code = nn::payloadCode(payloadType);
  std::string codeText = "(tandem_codec::Code)" + std::to_string(code);
  std::string typeName;
  llvm::raw_string_ostream(typeName) << payloadType;
  std::string text;
  llvm::raw_string_ostream b(text);
  if (quantize) {
    Value input = quantize.getInput();
    outputBuffer(quantize.getPayload());
    outputBuffer(quantize.getScales());
    // Each thread reduces its block's magnitudes in order, so the scale
    // does not depend on the launch (and a NaN wins, foldMagnitude).
    b << "(TK_KERNEL_ARGS uint8_t *__restrict__ o0, float *__restrict__ o1, "
      << "const " << storageOf(input) << " *__restrict__ i0) {\n"
      << "  // nn.quantize to " << typeName << ": " << rows << " row(s) of "
      << width << " in blocks of " << block
      << ", a thread per block\n  TK_PHASE\n"
      << gridStrideLoop("k", rows * blocks) << "    const int64_t b = k % "
      << blocks << ";\n"
      << "    const int64_t begin = (k / " << blocks << ") * " << width
      << " + b * " << block << ";\n"
      << "    const int64_t end = begin + (b == " << blocks - 1 << " ? " << last
      << " : " << block << ");\n"
      << "    double amax = 0.0;\n"
      << "    for (int64_t i = begin; i < end; ++i)\n"
      << "      amax = tandem_codec::foldMagnitude(amax, tk_codec_load(i0, "
         "i));\n"
      << "    const float s = tandem_codec::blockScale(amax, " << codeText
      << ");\n"
      << "    o1[k] = s;\n"
      << "    for (int64_t i = begin; i < end; ++i)\n"
      << "      o0[i] = tandem_codec::codeByte(tandem_codec::encode("
         "tk_codec_load(i0, i), s, "
      << codeText << "), " << codeText << ");\n"
      << "  }\n  TK_END_PHASE\n}\n";
    if (rows && width)
      launchElements(addKernel(text), rows * blocks,
                     {pointers.lookup(quantize.getPayload()),
                      pointers.lookup(quantize.getScales()),
                      pointers.lookup(input)});
    return;
  }
  Value result = dequantize.getResult();
  outputBuffer(result);
  b << "(TK_KERNEL_ARGS " << storageOf(result)
    << " *__restrict__ o0, const uint8_t *__restrict__ i0, const float "
       "*__restrict__ i1) {\n"
    << "  // nn.dequantize from " << typeName << ": " << rows << " row(s) of "
    << width << " in blocks of " << block << ", a thread per element\n"
    << "  TK_PHASE\n"
    << gridStrideLoop("i", count) << "    const int64_t j = i % " << width
    << ";\n"
    << "    tk_codec_store(o0, i, tandem_codec::decode("
    << "tandem_codec::codeOfByte(i0[i], " << codeText << "), i1[(i / " << width
    << ") * " << blocks << " + j / " << block << "]));\n"
    << "  }\n  TK_END_PHASE\n}\n";
  if (count)
    launchElements(addKernel(text), count,
                   {pointers.lookup(result), pointers.lookup(payload),
                    pointers.lookup(dequantize.getScales())});
}

/// The GEMM element type of `value` (tk_gemm_type in GemmPrelude.h).
StringRef gemmType(Value value) {
  Type type = tensorOf(value).getElementType();
  return type.isBF16()  ? "TK_GEMM_BF16"
         : type.isF16() ? "TK_GEMM_F16"
                        : "TK_GEMM_F32";
}

void FunctionEmitter::emitGemm(nn::MatmulOp op, const GemmEpilogue *epilogue) {
  llvm::ArrayRef<int64_t> lhs = tensorOf(op.getLhs()).getShape(),
                          rhs = tensorOf(op.getRhs()).getShape();
  bool transA = op.getTransposeLhs(), transB = op.getTransposeRhs();
  size_t lr = lhs.size(), rr = rhs.size();
  int64_t m = transA ? lhs[lr - 1] : lhs[lr - 2];
  int64_t k = transA ? lhs[lr - 2] : lhs[lr - 1];
  int64_t n = transB ? rhs[rr - 2] : rhs[rr - 1];
  int64_t batches = 1;
  for (int64_t size : lhs.drop_back(2))
    batches *= size;
  bool sharedRhs = rr == 2;
  std::string out = outputBuffer(epilogue ? epilogue->output : op.getResult());
  if (m == 0 || n == 0 || batches == 0 || k == 0) {
    // No product to form: a sum of no terms, or nothing.
    if (bytesOf(op.getResult()))
      addStep("TK_OP_ZERO, " + out + ", " +
              std::to_string(bytesOf(op.getResult())) + ",");
    return;
  }
  // A weight shared by every batch of an untransposed lhs: the batches are
  // the rows of one tall matrix, one call.
  if (sharedRhs && !transA) {
    m *= batches;
    batches = 1;
  }
  int64_t lda = transA ? m : k, ldb = transB ? k : n;
  int64_t strideA = m * k, strideB = sharedRhs ? 0 : k * n, strideC = m * n;
  std::string shape;
  llvm::raw_string_ostream b(shape);
  b << "{" << transA << ", " << transB << ", " << gemmType(op.getLhs()) << ", "
    << gemmType(epilogue ? epilogue->output : op.getResult()) << ", " << m
    << ", " << n << ", " << k << ", " << lda << ", " << ldb << ", " << n << ", "
    << batches << ", " << strideA << ", " << strideB << ", " << strideC
    << ", 1.0f, " << (epilogue && epilogue->residual ? "1.0f" : "0.0f") << "}";
  std::string title = op->getName().getStringRef().str();
  if (epilogue && epilogue->widened)
    title += " to f32";
  std::string kind = "TK_EPILOGUE_NONE", bias = "TK_NONE", residual = "TK_NONE",
              aux = "TK_NONE";
  if (epilogue && epilogue->dgelu) {
    title += " * gelu_grad";
    kind = "TK_EPILOGUE_DGELU";
    aux = pointers.lookup(epilogue->dgelu);
  } else if (epilogue && epilogue->bias) {
    title += epilogue->gelu       ? " + bias, gelu"
             : epilogue->residual ? " + bias, residual"
                                  : " + bias";
    kind = epilogue->gelu ? "TK_EPILOGUE_GELU" : "TK_EPILOGUE_BIAS";
    bias = pointers.lookup(epilogue->bias);
    if (epilogue->residual)
      residual = pointers.lookup(epilogue->residual);
    if (epilogue->aux)
      aux = outputBuffer(epilogue->biased);
  }
  // Only a plain product, or one widened to f32, adds into its buffer.
  bool plain = !epilogue || (!epilogue->bias && !epilogue->dgelu);
  if (plain &&
      gemmAccumulated.count(epilogue ? epilogue->output : op.getResult())) {
    addStep("TK_OP_GEMM_ACCUMULATE, " +
            std::to_string(unit.gemmShapes.of(shape)) + ", " +
            pointers.lookup(op.getLhs()) + ", " + pointers.lookup(op.getRhs()) +
            ", " + out + ", // " + title + ", accumulated");
    return;
  }
  addStep("TK_OP_GEMM, " + std::to_string(unit.gemmShapes.of(shape)) + ", " +
          kind + ", " + pointers.lookup(op.getLhs()) + ", " +
          pointers.lookup(op.getRhs()) + ", " + out + ", " + bias + ", " +
          residual + ", " + aux + ", // " + title);
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
  // The kernel of the plan each op is a member of.
  llvm::DenseMap<Operation *, int> kernelOf;
  // Matmuls whose epilogue cuBLASLt runs: emitted with their kernel.
  llvm::DenseMap<Operation *, GemmEpilogue> epilogues;
  for (auto [index, kernel] : llvm::enumerate(plan.kernels)) {
    if (kernel.members.empty())
      continue;
    for (Operation *member : kernel.members)
      kernelOf[member] = index;
    if (kernel.reduction && kernel.members.size() > 1 &&
        !(kernel.members.size() == 2 &&
          kernel.members.front() == kernel.reduction &&
          isReductionCast(kernel.reduction, kernel.members.back())))
      return kernel.reduction->emitError(
          "the cuda target fuses only a cast of a column reduction's result "
          "into the reduction (docs/cuda-backend.md)");
    if (kernel.gemm) {
      std::optional<GemmEpilogue> epilogue =
          gemmEpilogueOf(kernel.gemm, kernel);
      if (!epilogue)
        return kernel.gemm->emitError(
            "the cuda target fuses only cuBLASLt's epilogues into a GEMM: "
            "'+ bias', then 'gelu' or '+ residual'; or 'gelu_grad' "
            "(docs/cuda-backend.md)");
      epilogues[kernel.gemm] = *epilogue;
    }
    if (kernel.rowInput) {
      std::optional<RowPrologue> prologue =
          rowPrologueOf(kernel.rowInput, kernel);
      if (!prologue)
        return kernel.rowInput->emitError(
            "the cuda target computes only a residual add ('a + b' or "
            "'a + cast(b)') into a norm's row kernel (docs/cuda-backend.md)");
      rowPrologues[kernel.rowInput] = *prologue;
      // Launched with the row op, not at its last member.
      continue;
    }
    if (kernel.row) {
      std::optional<RowEpilogue> epilogue = rowEpilogueOf(kernel.row, kernel);
      if (!epilogue)
        return kernel.row->emitError(
            "the cuda target fuses only '+ residual' into a norm gradient's "
            "row kernel (docs/cuda-backend.md)");
      rowEpilogues[kernel.row] = *epilogue;
      // Launched with the row op, not at its last member.
      continue;
    }
    lastOf[kernel.members.back()] = index;
  }

  for (BlockArgument arg : body->getArguments())
    pointers[arg] = "TK_ARG(" + std::to_string(arg.getArgNumber()) + ")";
  // Parameters read with nn.param: slots after the arguments, one per
  // parameter in the order of first read (as the CPU target numbers them).
  llvm::StringMap<std::string> parameterPointers;
  for (auto param : body->getOps<nn::ParamOp>()) {
    std::string &ref = parameterPointers[param.getName()];
    if (ref.empty())
      ref = "TK_ARG(" +
            std::to_string(body->getNumArguments() + parameterPointers.size() -
                           1) +
            ")";
    pointers[param.getResult()] = ref;
  }
  Operation *terminator = body->getTerminator();
  for (auto [k, value] : llvm::enumerate(terminator->getOperands())) {
    Operation *def = value.getDefiningOp();
    // Every op but constants and views writes a buffer of its own.
    if (def &&
        !isa<nn::ConstantOp, nn::ReshapeOp, nn::StageEndOp, nn::ParamOp>(def) &&
        !resultSlot.count(value))
      resultSlot[value] = k;
  }
  // A result accumulated across microbatches: a GEMM whose output is the
  // result, read nowhere else, and holds the product alone (widened to f32
  // or not) adds into it itself (beta = 1); anything else is
  // computed into scratch and added at the end (TK_OP_ACCUMULATE), unless
  // its kernel writes each of its elements once and can add it to the sum
  // itself (summedInPlace): an output of an elementwise kernel, of a
  // reduction over columns (a thread per output, or the pass over the
  // partials that finishes each output), or an embedding's gradient (a
  // thread per element sums its id's rows).
  auto writesOnce = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (isa_and_nonnull<nn::EmbeddingGradOp>(def))
      return true;
    auto member = def ? kernelOf.find(def) : kernelOf.end();
    if (member == kernelOf.end())
      return false;
    const tandem::lowering::Kernel &kernel = plan.kernels[member->second];
    if (kernel.gemm || kernel.row || kernel.rowInput)
      return false;
    if (kernel.reduction)
      return def == kernel.members.back() && !reducesRows(kernel.reduction);
    return def->hasTrait<nn::ElementwiseKernel>() &&
           loweringOf(def) == Lowering::Kernel && !attentionViews.count(value);
  };
  attentionViews = planAttentionViews(*body);
  FailureOr<llvm::SmallVector<int64_t>> accumulated =
      tandem::lowering::readAccumulated(function);
  if (failed(accumulated))
    return failure();
  for (int64_t k : *accumulated) {
    Value value = terminator->getOperand(k);
    if (!tensorOf(value).getElementType().isF32())
      return terminator->emitError("the cuda target accumulates f32 results "
                                   "only, result ")
             << k << " is " << tensorOf(value).getElementType();
    accumulatedResults.insert(k);
    auto slot = resultSlot.find(value);
    bool owned = slot != resultSlot.end() && slot->second == k;
    if (owned && value.hasOneUse() && isPlainGemmResult(value, epilogues))
      gemmAccumulated.insert(value);
    else if (owned && value.hasOneUse() && writesOnce(value))
      summedInPlace.insert(value);
    else if (owned)
      resultSlot.erase(slot);
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
    // Anything but an elementwise kernel launches after the waiting ones.
    Lowering lowering = loweringOf(&op);
    if (lowering != Lowering::Kernel && lowering != Lowering::Parameter)
      flushPending();
    // Kernels other than elementwise ones read their operands from
    // buffers: a constant one is written into scratch first.
    if (!op.hasTrait<nn::ElementwiseKernel>() &&
        lowering != Lowering::Structure)
      for (auto [index, operand] : llvm::enumerate(op.getOperands())) {
        if (pointers.count(operand) || attentionViews.count(operand) ||
            (index == 0 && rowPrologues.count(&op)))
          continue;
        if (!splats.count(operand) && !arrays.count(operand))
          return op.emitError("the cuda target finds no buffer for operand ")
                 << index << " of '" << op.getName() << "'";
        materialize(operand);
      }
    switch (lowering) {
    case Lowering::Row:
      emitRowOp(&op);
      continue;
    case Lowering::CrossEntropy:
      emitCrossEntropy(&op);
      continue;
    case Lowering::Embedding:
      emitEmbedding(&op);
      continue;
    case Lowering::Copy:
      emitDataMovement(&op);
      continue;
    case Lowering::Gemm:
      if (!epilogues.count(&op))
        emitGemm(cast<nn::MatmulOp>(op));
      continue;
    case Lowering::Attention:
      emitAttention(&op);
      continue;
    case Lowering::Codec:
      emitCodec(&op);
      continue;
    case Lowering::Parameter:
      continue;
    default:
      break;
    }
    auto last = lastOf.find(&op);
    if (last == lastOf.end())
      continue;
    const tandem::lowering::Kernel &kernel = plan.kernels[last->second];
    if (kernel.reduction) {
      flushPending();
      emitReduction(kernel);
    } else if (kernel.gemm) {
      flushPending();
      emitGemm(cast<nn::MatmulOp>(kernel.gemm),
               &epilogues.find(kernel.gemm)->second);
    } else {
      emitKernel(kernel);
    }
  }
  flushPending();

  // The results added to their sums (after the loop: one launch for all).
  std::vector<Sum> sums;
  for (auto [k, value] : llvm::enumerate(terminator->getOperands())) {
    if (gemmAccumulated.count(value))
      continue;
    auto slot = resultSlot.find(value);
    if (slot != resultSlot.end() && slot->second == k)
      continue;
    if (!pointers.count(value))
      return terminator->emitError("the cuda target does not return a "
                                   "constant yet (result ")
             << k << ")";
    if (accumulatedResults.count(k)) {
      int64_t count = tensorOf(value).getNumElements();
      if (count == 0)
        continue;
      sums.push_back(
          {{"TK_RESULT(" + std::to_string(k) + ")", pointers.lookup(value)},
           count});
      continue;
    }
    if (bytesOf(value))
      addStep("TK_OP_COPY, TK_RESULT(" + std::to_string(k) + "), " +
              pointers.lookup(value) + ", " + std::to_string(bytesOf(value)) +
              ",");
  }
  emitSums(sums);
  uint64_t scratchBytes = scratch.place({&code});
  // A reference holds a scratch offset in 56 bits (ProgramPrelude.h).
  if (scratchBytes >= (uint64_t{1} << 56))
    return function->emitError("the cuda target's scratch of ")
           << scratchBytes << " bytes exceeds 2^56";
  info.scratchBytes = scratchBytes;

  os << "// " << info.name << ": " << body->getNumArguments()
     << " argument(s), " << terminator->getNumOperands() << " result(s), "
     << scratchBytes << " scratch bytes\n";
  os << "extern \"C\" uint64_t " << info.symbol
     << "_scratch_bytes(void) { return " << scratchBytes << "; }\n";
  os << "static const int64_t " << info.symbol << "_program[] = {\n"
     << code << "    TK_OP_END};\n";
  os << "extern \"C\" int " << info.symbol
     << "(const tandem_fragment_context *context, const void *const "
        "*args, void *const *results, void *scratch) {\n"
     << "  return tk_run(tk_this_unit, " << info.symbol
     << "_program, context, args, results, scratch);\n}\n\n";
  return info;
}

} // namespace

tandem::lowering::FusionPolicy tandem::cuda::fusionPolicy() {
  tandem::lowering::FusionPolicy policy;
  // Reductions come with their kernels; until then a reduction stands
  // alone but for a cast of its result. A GEMM takes the epilogues
  // cuBLASLt runs.
  policy.fuseReductions = false;
  policy.acceptsReductionEpilogue = [](const tandem::lowering::Kernel &kernel,
                                       Operation *op) {
    return kernel.members.size() == 1 && isReductionCast(kernel.reduction, op);
  };
  policy.acceptsGemmEpilogue = [](Operation *matmul,
                                  const tandem::lowering::Kernel &kernel) {
    return gemmEpilogueOf(matmul, kernel).has_value();
  };
  policy.acceptsRowEpilogue = [](Operation *row,
                                 const tandem::lowering::Kernel &kernel) {
    return rowEpilogueOf(row, kernel).has_value();
  };
  policy.acceptsRowPrologue = [](Operation *row,
                                 const tandem::lowering::Kernel &kernel) {
    return rowPrologueOf(row, kernel).has_value();
  };
  return policy;
}

FailureOr<EmittedSource>
tandem::cuda::emitCuda(llvm::ArrayRef<Operation *> functions,
                       const EmitOptions &options) {
  Unit unit;
  unit.options = options;
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
  // The tables the programs index (ProgramPrelude.h); an empty one is
  // a null pointer (C++ has no empty arrays).
  std::string tables;
  llvm::raw_string_ostream t(tables);
  t << "enum : int64_t {\n";
  for (auto [id, name] : llvm::enumerate(unit.kernelNames))
    t << "  " << name << "_id = " << id << ",\n";
  t << "};\n";
  auto array = [&](llvm::StringRef type, llvm::StringRef name, auto &&entries) {
    if (entries.empty()) {
      t << "const " << type << " *const " << name << " = nullptr;\n";
      return;
    }
    t << "const " << type << " " << name << "[] = {\n";
    for (const auto &entry : entries)
      t << "    " << entry << ",\n";
    t << "};\n";
  };
  std::vector<std::string> launchers;
  for (const std::string &name : unit.kernelNames)
    launchers.push_back("TK_LAUNCHER(" + name + ")");
  array("tk_launcher", "tk_launchers", launchers);
  array("tk_gemm_shape", "tk_gemm_shapes", unit.gemmShapes.entries);
  array("tk_attention_shape", "tk_attention_shapes",
        unit.attentionShapes.entries);
  t << "const tk_unit tk_this_unit = {tk_launchers, tk_gemm_shapes, "
       "tk_attention_shapes};\n";
  source.text = std::string(kPreludeSource) + "\nnamespace {\n" +
                unit.constants + unit.kernels + tables + "} // namespace\n\n" +
                entries;
  source.indexChecks = unit.indexChecks.entries();
  return source;
}

std::vector<std::string> tandem::cuda::supportedOps() {
  return {"nn.add",
          "nn.attention",
          "nn.attention_grad",
          "nn.broadcast_to",
          "nn.cast",
          "nn.concat",
          "nn.constant",
          "nn.cos",
          "nn.cross_entropy",
          "nn.cross_entropy_grad",
          "nn.dequantize",
          "nn.div",
          "nn.embedding",
          "nn.embedding_grad",
          "nn.erf",
          "nn.erfc",
          "nn.exp",
          "nn.gelu",
          "nn.gelu_grad",
          "nn.layer_norm",
          "nn.layer_norm_grad",
          "nn.log_softmax",
          "nn.greater_equal",
          "nn.log",
          "nn.matmul",
          "nn.maximum",
          "nn.minimum",
          "nn.mul",
          "nn.neg",
          "nn.one_hot",
          "nn.param",
          "nn.pow",
          "nn.quantize",
          "nn.reduce_max",
          "nn.reduce_mean",
          "nn.reduce_sum",
          "nn.relu",
          "nn.rms_norm",
          "nn.rms_norm_grad",
          "nn.reshape",
          "nn.rsqrt",
          "nn.select",
          "nn.slice",
          "nn.silu",
          "nn.sin",
          "nn.softmax",
          "nn.split",
          "nn.sqrt",
          "nn.stage_end",
          "nn.stop_gradient",
          "nn.sub",
          "nn.tanh",
          "nn.transpose"};
}

std::vector<std::pair<std::string, std::string>>
tandem::cuda::opsNotLoweredYet() {
  return {
      {"nn.parameter", "a module-level declaration: fragments read "
                       "parameters as arguments"},
  };
}
