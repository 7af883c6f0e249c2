//===- CompressTransfers.cpp - mpmd-compress-transfers --------------------===//
//
// Blockwise codecs on stage edges (docs/compression.md): a selected
// transfer's producer yields nn.quantize of the value as two more results,
// the transfer carries the payload and a new transfer the scales, and the
// consumer's argument becomes the payload, with the scales appended as a
// new argument and an nn.dequantize at the top of its body standing for
// the old argument. Arguments and results are only appended or retyped in
// place, so no other transfer's index moves. The wire dtypes are then the
// payload's and f32, visible in the program for mpmd-lower-transfers,
// mpmd-verify, mpmd-memory and mpmd-simulate, which need nothing new.
// The plain casts (bf16, f16) are the same rewrite with nn.cast on both
// sides and no scales: the wire carries the narrower type, and every
// transfer's wire type is its value's.
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"
#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDCOMPRESSTRANSFERS
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

using namespace mlir;
using namespace tandem::mpmd;
namespace nn = tandem::nn;

namespace {

/// The payload element type a policy names for one direction, null for
/// none, or failure for a name that is no policy.
FailureOr<Type> payloadOf(MLIRContext *context, StringRef policy,
                          bool gradients) {
  if (policy == "none")
    return Type();
  if (policy == "int8")
    return Type(IntegerType::get(context, 8));
  if (policy == "fp8e4m3" || (policy == "fp8" && !gradients))
    return Type(Float8E4M3FNType::get(context));
  if (policy == "fp8e5m2" || policy == "fp8")
    return Type(Float8E5M2Type::get(context));
  if (policy == "bf16")
    return Type(BFloat16Type::get(context));
  if (policy == "f16")
    return Type(Float16Type::get(context));
  return failure();
}

/// Whether a payload type is a plain cast (no scales).
bool isPlainCast(Type payload) {
  return isa<BFloat16Type, Float16Type>(payload);
}

struct Compressor {
  ProgramOp program;
  Type activations, gradients;
  int64_t block;
  /// Producer-consumer stage pairs to compress; empty: all.
  std::set<std::pair<int64_t, int64_t>> edges;

  llvm::StringMap<FragmentOp> fragments;
  /// (producer, result, payload type) -> the payload's result index; the
  /// scales are the next result.
  std::map<std::tuple<std::string, int64_t, const void *>, int64_t> encoded;

  /// The payload type for a transfer from `src` to `dst`, or null when it
  /// stays as it is.
  Type policyFor(FragmentOp src, FragmentOp dst, Type valueType) {
    if (src.getStage() == dst.getStage() || !src.isPerMicrobatch() ||
        !dst.isPerMicrobatch())
      return Type();
    if (!edges.empty() && !edges.count({src.getStage(), dst.getStage()}))
      return Type();
    auto tensor = dyn_cast<RankedTensorType>(valueType);
    if (!tensor || tensor.getRank() < 1 ||
        !isa<FloatType>(tensor.getElementType()) ||
        nn::payloadCode(tensor.getElementType()) >= 0)
      return Type();
    Type payload;
    switch (src.getKind()) {
    case FragmentKind::Fwd:
      payload = activations;
      break;
    case FragmentKind::Bwd:
    case FragmentKind::BwdInput:
      payload = gradients;
      break;
    default:
      return Type();
    }
    if (!payload)
      return Type();
    // A plain cast only where it halves the bytes: to the same width
    // (bf16 <-> f16, or the type itself) it would save nothing and lose
    // bits or range.
    if (isPlainCast(payload) &&
        payload.getIntOrFloatBitWidth() >=
            tensor.getElementType().getIntOrFloatBitWidth())
      return Type();
    return payload;
  }

  /// The payload result of `src[result]` encoded as `payload`, added to the
  /// producer (with the scales after it) on first use.
  int64_t encode(FragmentOp src, int64_t result, RankedTensorType payload,
                 RankedTensorType scales) {
    auto id = std::make_tuple(src.getSymName().str(), result,
                              payload.getElementType().getAsOpaquePointer());
    if (auto it = encoded.find(id); it != encoded.end())
      return it->second;
    Operation *yield = src.getBody().front().getTerminator();
    Value value = yield->getOperand(result);
    OpBuilder b(yield);
    Operation *codec =
        isPlainCast(payload.getElementType())
            ? nn::CastOp::create(b, value.getLoc(), payload, value, BoolAttr())
                  .getOperation()
            : b.create<nn::QuantizeOp>(value.getLoc(), payload, scales, value,
                                       b.getI64IntegerAttr(block))
                  .getOperation();
    int64_t index = src.getNumResults();
    for (Value v : codec->getResults()) {
      (void)src.insertResult(src.getNumResults(), v.getType(),
                             DictionaryAttr());
      yield->insertOperands(yield->getNumOperands(), v);
    }
    encoded[id] = index;
    return index;
  }

  /// Turns argument `arg` of `dst` into the payload, appends the scales
  /// argument, and decodes at the top of the body; returns the scales'
  /// argument index.
  int64_t decode(FragmentOp dst, unsigned arg, RankedTensorType payload,
                 RankedTensorType scales) {
    BlockArgument value = dst.getArgument(arg);
    Type valueType = value.getType();
    bool plain = isPlainCast(payload.getElementType());
    unsigned scalesIndex = dst.getNumArguments();
    if (!plain)
      (void)dst.insertArgument(scalesIndex, scales, DictionaryAttr(),
                               dst.getLoc());
    SmallVector<Type> inputs(dst.getArgumentTypes());
    inputs[arg] = payload;
    dst.setFunctionTypeAttr(TypeAttr::get(
        FunctionType::get(dst.getContext(), inputs, dst.getResultTypes())));
    value.setType(payload);
    OpBuilder b = OpBuilder::atBlockBegin(&dst.getBody().front());
    Operation *codec =
        plain ? nn::CastOp::create(b, value.getLoc(), valueType, value,
                                   BoolAttr())
                    .getOperation()
              : b.create<nn::DequantizeOp>(value.getLoc(), valueType, value,
                                           dst.getArgument(scalesIndex),
                                           b.getI64IntegerAttr(block))
                    .getOperation();
    value.replaceAllUsesExcept(codec->getResult(0), codec);
    return scalesIndex;
  }

  LogicalResult run() {
    Block &body = program.getBodyBlock();
    for (FragmentOp fragment : body.getOps<FragmentOp>())
      fragments[fragment.getSymName()] = fragment;
    for (RankOp rank : body.getOps<RankOp>())
      for (Operation &action : rank.getBodyBlock())
        if (isa<SendOp, RecvOp>(action))
          return action.emitError()
                 << "mpmd-compress-transfers: the program already has "
                    "send/recv actions; run it before mpmd-lower-transfers";
    SmallVector<TransferOp> transfers(body.getOps<TransferOp>());
    for (TransferOp transfer : transfers) {
      FragmentOp src = fragments.lookup(transfer.getSrc());
      FragmentOp dst = fragments.lookup(transfer.getDst());
      if (!src || !dst)
        continue; // The verifier reports unknown symbols.
      Type payload = policyFor(src, dst, transfer.getType());
      if (!payload)
        continue;
      if (src.isExternal() || dst.isExternal())
        return transfer.emitError()
               << "mpmd-compress-transfers: cannot put a codec on a "
                  "transfer of a fragment declaration (run it before "
                  "mpmd-split-programs)";
      auto type = cast<RankedTensorType>(transfer.getType());
      auto payloadType = type.clone(payload);
      auto scalesType =
          RankedTensorType::get(nn::blockScalesShape(type.getShape(), block),
                                Float32Type::get(program.getContext()));
      int64_t result =
          encode(src, transfer.getResult(), payloadType, scalesType);
      int64_t scalesArg =
          decode(dst, transfer.getArg(), payloadType, scalesType);
      transfer.setResult(result);
      transfer.setType(payloadType);
      if (isPlainCast(payload))
        continue;
      OpBuilder b(transfer);
      b.setInsertionPointAfter(transfer);
      b.create<TransferOp>(
          transfer.getLoc(), transfer.getSrcAttr(),
          b.getI64IntegerAttr(result + 1), transfer.getDstAttr(),
          b.getI64IntegerAttr(scalesArg), TypeAttr::get(scalesType));
    }
    return success();
  }
};

struct MPMDCompressTransfersPass
    : tandem::mpmd::impl::MPMDCompressTransfersBase<MPMDCompressTransfersPass> {
  using MPMDCompressTransfersBase::MPMDCompressTransfersBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    FailureOr<Type> acts = payloadOf(context, activations, false);
    FailureOr<Type> grads = payloadOf(context, gradients, true);
    for (auto [name, value, parsed] :
         {std::tuple<StringRef, std::string, bool>{"activations", activations,
                                                   succeeded(acts)},
          {"gradients", gradients, succeeded(grads)}})
      if (!parsed) {
        module.emitError() << "mpmd-compress-transfers: " << name
                           << " must be none, int8, fp8, fp8e4m3, fp8e5m2, "
                              "bf16 or f16, found '"
                           << value << "'";
        return signalPassFailure();
      }
    if (block < 1) {
      module.emitError() << "mpmd-compress-transfers: block must be at least "
                            "1, found "
                         << static_cast<int64_t>(block);
      return signalPassFailure();
    }
    std::set<std::pair<int64_t, int64_t>> pairs;
    for (const std::string &edge : edges) {
      auto [from, to] = StringRef(edge).split('-');
      int64_t a, b;
      if (from.getAsInteger(10, a) || to.getAsInteger(10, b) || a < 0 ||
          b < 0) {
        module.emitError() << "mpmd-compress-transfers: edges are stage "
                              "pairs a-b, found '"
                           << edge << "'";
        return signalPassFailure();
      }
      pairs.insert({a, b});
    }
    if (!*acts && !*grads)
      return;
    for (ProgramOp program : module.getOps<ProgramOp>()) {
      Compressor compressor{program, *acts, *grads, block, pairs, {}, {}};
      if (failed(compressor.run()))
        return signalPassFailure();
    }
  }
};

} // namespace
