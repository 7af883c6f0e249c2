//===- GPT.cpp - GPT-2-style decoder builder ------------------------------===//
//
// Mirrors GPT-2 (and nanoGPT's GPT class): parameter names and shapes follow
// the Hugging Face checkpoint (Conv1D weights are in x out, so every linear
// layer is `x · W + b`), initializers follow GPT-2's _init_weights.
//
//===----------------------------------------------------------------------===//

#include "tandem/Models/GPT.h"

#include "ModelBuilder.h"

#include <cmath>

using namespace mlir;
using namespace tandem;
using namespace tandem::models;
using tandem::models::detail::ModelBuilder;

/// GPT-2's layer-norm epsilon.
static constexpr double kLayerNormEpsilon = 1e-5;
/// GPT-2's initializer range.
static constexpr double kInitStd = 0.02;

namespace {
/// Emits the decoder into a ModelBuilder, one GPT-2 module at a time.
class GPTEmitter {
public:
  GPTEmitter(ModelBuilder &mb, const GPTConfig &config)
      : mb(mb), b(mb.builder()), config(config), d(config.dim),
        // GPT-2 scales the residual projections by 1/sqrt(2·layers): two
        // residual additions per block.
        residualStd(kInitStd / std::sqrt(2.0 * config.layers)) {}

  Value embed(Value tokens) {
    Value wte = mb.param("wte", {config.vocab, d}, mb.normal(kInitStd));
    Value tok = nn::EmbeddingOp::create(b, mb.loc("wte"), wte, tokens,
                                        /*rows=*/nullptr);
    // wpe has exactly `seq` rows, one per position, so it is added whole,
    // broadcasting over the batch.
    Value wpe = mb.param("wpe", {config.seq, d}, mb.normal(kInitStd));
    return nn::AddOp::create(b, mb.loc("embed"), tok, wpe);
  }

  Value block(Value x, int64_t layer) {
    std::string h = "h." + std::to_string(layer);
    Value a = layerNorm(x, h + ".ln_1");
    a = attention(a, h + ".attn");
    x = nn::AddOp::create(b, mb.loc(h + ".attn.residual"), x, a);
    Value m = layerNorm(x, h + ".ln_2");
    m = linear(m, h + ".mlp.c_fc", 4 * d, kInitStd);
    m = nn::GeluOp::create(b, mb.loc(h + ".mlp.gelu"), m);
    m = linear(m, h + ".mlp.c_proj", d, residualStd);
    return nn::AddOp::create(b, mb.loc(h + ".mlp.residual"), x, m);
  }

  Value stageEnd(Value x, int64_t layer) {
    auto op = nn::StageEndOp::create(
        b, mb.loc("stage_end.after.h." + std::to_string(layer)), x);
    return op.getResult(0);
  }

  Value head(Value x, Value targets) {
    x = layerNorm(x, "ln_f");
    Value logits;
    if (config.tied) {
      // The LM head reuses the token embedding (vocab x dim), transposed.
      Value wte = mb.read("wte");
      logits = nn::MatmulOp::create(b, mb.loc("lm_head"), x, wte,
                                    /*transpose_lhs=*/false,
                                    /*transpose_rhs=*/true);
    } else {
      Value w =
          mb.param("lm_head.weight", {d, config.vocab}, mb.normal(kInitStd));
      logits = nn::MatmulOp::create(b, mb.loc("lm_head"), x, w);
    }
    return nn::CrossEntropyOp::create(b, mb.loc("loss"), logits, targets,
                                      /*classes=*/nullptr);
  }

private:
  Value layerNorm(Value x, const std::string &name) {
    Value w = mb.param(name + ".weight", {d}, mb.ones());
    Value bias = mb.param(name + ".bias", {d}, mb.zeros());
    return nn::LayerNormOp::create(b, mb.loc(name), x, w, bias,
                                   b.getF64FloatAttr(kLayerNormEpsilon));
  }

  /// `x · weight + bias` with GPT-2's Conv1D layout (in x out).
  Value linear(Value x, const std::string &name, int64_t out, double std) {
    int64_t in = cast<RankedTensorType>(x.getType()).getShape().back();
    Value w = mb.param(name + ".weight", {in, out}, mb.normal(std));
    Value y = nn::MatmulOp::create(b, mb.loc(name), x, w);
    Value bias = mb.param(name + ".bias", {out}, mb.zeros());
    return nn::AddOp::create(b, mb.loc(name), y, bias);
  }

  Value attention(Value x, const std::string &name) {
    Value qkv = linear(x, name + ".c_attn", 3 * d, kInitStd);
    auto split = nn::SplitOp::create(b, mb.loc(name + ".split"), qkv,
                                     /*axis=*/2, ArrayRef<int64_t>{d, d, d});
    Value y = nn::AttentionOp::create(b, mb.loc(name), split.getResult(0),
                                      split.getResult(1), split.getResult(2),
                                      static_cast<uint64_t>(config.heads),
                                      /*causal=*/true, /*scale=*/FloatAttr(),
                                      /*kv_heads=*/IntegerAttr())
                  .getResult();
    return linear(y, name + ".c_proj", d, residualStd);
  }

  ModelBuilder &mb;
  OpBuilder &b;
  const GPTConfig &config;
  int64_t d;
  double residualStd;
};
} // namespace

llvm::Expected<OwningOpRef<ModuleOp>>
tandem::models::buildGPT(MLIRContext &context, const GPTConfig &config) {
  if (llvm::Error err = config.validate())
    return std::move(err);
  auto ids = RankedTensorType::get({config.batch, config.seq},
                                   IntegerType::get(&context, 32));
  std::string text = "gpt";
  if (!config.name.empty())
    text += " " + config.name;
  ModelBuilder mb(context, text + ": " + config.describe(), {ids, ids});
  GPTEmitter emitter(mb, config);

  Value x = emitter.embed(mb.argument(0));
  std::vector<int64_t> markers = config.stages.layersWithMarker(config.layers);
  auto nextMarker = markers.begin();
  for (int64_t layer = 0; layer < config.layers; ++layer) {
    x = emitter.block(x, layer);
    if (nextMarker != markers.end() && *nextMarker == layer) {
      x = emitter.stageEnd(x, layer);
      ++nextMarker;
    }
  }
  return mb.finish(emitter.head(x, mb.argument(1)));
}

int64_t tandem::models::gptParameterCount(const GPTConfig &config) {
  int64_t v = config.vocab, d = config.dim, t = config.seq, l = config.layers;
  // Per block: two layer norms (4·D), c_attn (3·D² + 3·D), attn.c_proj
  // (D² + D), mlp.c_fc (4·D² + 4·D), mlp.c_proj (4·D² + D).
  int64_t block = 12 * d * d + 13 * d;
  int64_t count = v * d + t * d + l * block + 2 * d;
  if (!config.tied)
    count += v * d;
  return count;
}
