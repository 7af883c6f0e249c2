"""The GPT-2-style decoder of `tandemc models gpt`, by hand.

Parameter names follow the Hugging Face GPT-2 checkpoint (Conv1D weights
are [in, out], so every linear layer is x @ W + b):

  wte [V, D], wpe [T, D]
  h.<i>.ln_1.{weight,bias} [D]
  h.<i>.attn.c_attn.{weight [D, 3D], bias [3D]}   -> q, k, v (in that order)
  h.<i>.attn.c_proj.{weight [D, D], bias [D]}
  h.<i>.ln_2.{weight,bias} [D]
  h.<i>.mlp.c_fc.{weight [D, 4D], bias [4D]}
  h.<i>.mlp.c_proj.{weight [4D, D], bias [D]}
  ln_f.{weight,bias} [D]
  lm_head.weight [D, V] only when the head is not tied to wte

Pre-LN blocks: x += attn(ln_1(x)); x += mlp(ln_2(x)). Attention is causal
with `heads` heads, each over a contiguous slice of D/heads channels,
scaled by 1/sqrt(D/heads). The head computes ln_f(x) @ wte^T (tied) and
the loss is the mean cross-entropy over all B x T positions.
"""

import dataclasses
import math

import jax.numpy as jnp

from .losses import cross_entropy, gelu_tanh


@dataclasses.dataclass(frozen=True)
class GPTConfig:
    heads: int
    layer_norm_eps: float = 1e-5


def num_layers(params):
    count = 0
    while f"h.{count}.ln_1.weight" in params:
        count += 1
    return count


def layer_norm(x, weight, bias, eps):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    centered = x - mean
    variance = jnp.mean(centered * centered, axis=-1, keepdims=True)
    return centered / jnp.sqrt(variance + eps) * weight + bias


def softmax(scores, axis=-1):
    shifted = scores - jnp.max(scores, axis=axis, keepdims=True)
    e = jnp.exp(shifted)
    return e / jnp.sum(e, axis=axis, keepdims=True)


def causal_self_attention(q, k, v, heads):
    """q, k, v: [B, T, D] -> [B, T, D]."""
    batch, seq, dim = q.shape
    head_dim = dim // heads

    def split_heads(t):  # [B, T, D] -> [B, H, T, hd]
        return t.reshape(batch, seq, heads, head_dim).transpose(0, 2, 1, 3)

    qh, kh, vh = split_heads(q), split_heads(k), split_heads(v)
    scores = jnp.einsum("bhqd,bhkd->bhqk", qh, kh) * (1.0 / math.sqrt(head_dim))
    visible = jnp.tril(jnp.ones((seq, seq), dtype=bool))
    scores = jnp.where(visible, scores, -jnp.inf)
    weights = softmax(scores, axis=-1)
    out = jnp.einsum("bhqk,bhkd->bhqd", weights, vh)
    return out.transpose(0, 2, 1, 3).reshape(batch, seq, dim)


def block(params, prefix, x, config):
    p = lambda name: params[f"{prefix}.{name}"]  # noqa: E731
    dim = x.shape[-1]
    h = layer_norm(x, p("ln_1.weight"), p("ln_1.bias"), config.layer_norm_eps)
    qkv = h @ p("attn.c_attn.weight") + p("attn.c_attn.bias")
    q, k, v = qkv[..., :dim], qkv[..., dim : 2 * dim], qkv[..., 2 * dim :]
    a = causal_self_attention(q, k, v, config.heads)
    x = x + (a @ p("attn.c_proj.weight") + p("attn.c_proj.bias"))
    h = layer_norm(x, p("ln_2.weight"), p("ln_2.bias"), config.layer_norm_eps)
    h = gelu_tanh(h @ p("mlp.c_fc.weight") + p("mlp.c_fc.bias"))
    return x + (h @ p("mlp.c_proj.weight") + p("mlp.c_proj.bias"))


def gpt_logits(params, tokens, config):
    """tokens: [B, T] int -> logits [B, T, V]."""
    seq = tokens.shape[1]
    x = params["wte"][tokens] + params["wpe"][:seq]
    for i in range(num_layers(params)):
        x = block(params, f"h.{i}", x, config)
    x = layer_norm(x, params["ln_f.weight"], params["ln_f.bias"], config.layer_norm_eps)
    if "lm_head.weight" in params:
        return x @ params["lm_head.weight"]
    return x @ params["wte"].T


def gpt_loss(params, tokens, targets, config):
    return cross_entropy(gpt_logits(params, tokens, config), targets)
