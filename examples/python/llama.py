"""A Llama-style decoder written in plain JAX, the way JAX users write one:
RMSNorm, rotary position embeddings, grouped-query causal attention,
a SwiGLU MLP and an untied LM head, with `tandem.stage_end` after each
block. Nothing here knows about Tandem's IR: `tandem.from_jax` imports it.

    python examples/python/llama.py --data data/corpus.txt --stages 4

trains it as a 4-stage pipeline and writes the loss curve beside it.
"""

import argparse
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

import tandem


@dataclasses.dataclass(frozen=True)
class Config:
    vocab: int = 256
    dim: int = 32
    layers: int = 4
    heads: int = 4
    kv_heads: int = 2
    hidden: int = 64
    seq: int = 16
    batch: int = 4
    eps: float = 1e-5
    rope_base: float = 10000.0
    # Attention through jax.nn.dot_product_attention (grouped-query
    # attention natively: fewer key and value heads), which from_jax imports
    # as one fused nn.attention with kv_heads; else written out with
    # jnp.repeat, einsum and softmax, which import op by op.
    dot_product_attention: bool = False


def init(key, c):
    def normal(key, shape, scale):
        return jax.random.normal(key, shape, jnp.float32) * scale

    head_dim = c.dim // c.heads
    keys = iter(jax.random.split(key, 2 + 7 * c.layers))
    blocks = []
    for _ in range(c.layers):
        blocks.append(
            {
                "attn_norm": jnp.ones(c.dim),
                "wq": normal(next(keys), (c.dim, c.heads * head_dim), c.dim**-0.5),
                "wk": normal(next(keys), (c.dim, c.kv_heads * head_dim), c.dim**-0.5),
                "wv": normal(next(keys), (c.dim, c.kv_heads * head_dim), c.dim**-0.5),
                "wo": normal(next(keys), (c.heads * head_dim, c.dim), (2 * c.layers * c.dim) ** -0.5),
                "mlp_norm": jnp.ones(c.dim),
                "w_gate": normal(next(keys), (c.dim, c.hidden), c.dim**-0.5),
                "w_up": normal(next(keys), (c.dim, c.hidden), c.dim**-0.5),
                "w_down": normal(next(keys), (c.hidden, c.dim), (2 * c.layers * c.hidden) ** -0.5),
            }
        )
    return {
        "embed": normal(next(keys), (c.vocab, c.dim), 1.0),
        "blocks": blocks,
        "norm": jnp.ones(c.dim),
        "head": normal(next(keys), (c.dim, c.vocab), c.dim**-0.5),
    }


def rms_norm(x, weight, eps):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def rope(x, base):
    """Rotates pairs (i, i + d/2) of each head by position-dependent angles."""
    seq, head_dim = x.shape[1], x.shape[-1]
    inverse = 1.0 / (base ** (np.arange(0, head_dim, 2, dtype=np.float32) / head_dim))
    angles = np.arange(seq, dtype=np.float32)[:, None] * inverse[None, :]  # T x d/2
    cos = jnp.asarray(np.cos(angles))[None, :, None, :]
    sin = jnp.asarray(np.sin(angles))[None, :, None, :]
    x1, x2 = x[..., : head_dim // 2], x[..., head_dim // 2 :]
    return jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)


def attention(x, p, c):
    batch, seq, _ = x.shape
    head_dim = c.dim // c.heads
    q = (x @ p["wq"]).reshape(batch, seq, c.heads, head_dim)
    k = (x @ p["wk"]).reshape(batch, seq, c.kv_heads, head_dim)
    v = (x @ p["wv"]).reshape(batch, seq, c.kv_heads, head_dim)
    q, k = rope(q, c.rope_base), rope(k, c.rope_base)
    if c.dot_product_attention:
        out = jax.nn.dot_product_attention(q, k, v, is_causal=True)
        return out.reshape(batch, seq, c.heads * head_dim) @ p["wo"]
    k = jnp.repeat(k, c.heads // c.kv_heads, axis=2)
    v = jnp.repeat(v, c.heads // c.kv_heads, axis=2)
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(head_dim).astype(np.float32)
    causal = jnp.tril(jnp.ones((seq, seq), dtype=bool))
    scores = jnp.where(causal, scores, -jnp.inf)
    weights = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(batch, seq, c.heads * head_dim)
    return out @ p["wo"]


def mlp(x, p):
    return (jax.nn.silu(x @ p["w_gate"]) * (x @ p["w_up"])) @ p["w_down"]


def loss_fn(params, tokens, targets, c=Config()):
    x = params["embed"][tokens]
    for block in params["blocks"]:
        x = x + attention(rms_norm(x, block["attn_norm"], c.eps), block, c)
        x = x + mlp(rms_norm(x, block["mlp_norm"], c.eps), block)
        x = tandem.stage_end(x)
    logits = rms_norm(x, params["norm"], c.eps) @ params["head"]
    logp = jax.nn.log_softmax(logits, axis=-1)
    return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))


def example_batch(c=Config()):
    tokens = jnp.zeros((c.batch, c.seq), jnp.int32)
    return tokens, tokens


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True)
    parser.add_argument("--stages", type=int, default=4)
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--plot", default="llama-loss.png")
    args = parser.parse_args()
    config = Config()
    params = init(jax.random.PRNGKey(0), config)
    model = tandem.from_jax(loss_fn, params, *example_batch(config))
    pipeline = tandem.compile(
        model, stages=args.stages, microbatches=args.microbatches, schedule="1f1b",
        optimizer="optimizer=adamw lr=0.003",
    )
    print(f"compiled into {pipeline.directory}; predicted peak bytes per rank {pipeline.memory}; "
          f"simulated step {pipeline.simulated_step:.3g} s")
    history = pipeline.train(data=args.data, steps=args.steps, eval_every=max(args.steps // 4, 1))
    first, last = history[0], history[-1]
    print(f"loss {first['loss']:.4f} at step {first['step']} -> {last['loss']:.4f} at step {last['step']}")
    pipeline.plot(args.plot, title="Llama-style decoder, from JAX")
    trained = pipeline.parameters()
    print("trained embedding norm:", float(jnp.linalg.norm(trained["embed"])))


if __name__ == "__main__":
    main()
