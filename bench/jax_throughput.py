"""jax_throughput.py CONFIG STEPS [--corpus FILE]: one-rank training
throughput of the hand-written JAX reference (python/tandem_ref), the
comparison bench/throughput.sh prints next to Tandem's generated CPU code.

The model is the GPT of `tandemc models gpt --config CONFIG --batch 4
--seq 64` (sizes from lib/Models/Config.cpp; tied head, layer-norm epsilon
1e-5), trained with AdamW at Tandem's defaults (docs/training.md: lr 1e-3,
betas 0.9/0.999, eps 1e-8, weight decay 0.01 on matrices, no clipping,
constant schedule). One jitted step = loss, gradients (jax.value_and_grad)
and the AdamW update, float32 on the CPU backend. Batches are byte tokens
of the corpus (fixed windows; any batch costs the same).

The first step compiles (warm-up, not timed); then STEPS steps are timed one
by one with block_until_ready. Prints, last, one parseable line:

  jax CONFIG params P step_median S tokens/s R threads N
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np

# tandem_ref lives in python/; importing it selects the CPU platform and
# float32 (see python/tandem_ref/__init__.py).
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import tandem_ref  # noqa: E402
from gpt_configs import CONFIGS  # noqa: E402

# The sequence length and batch are the benchmark's (64 and 4) for every
# configuration.
BATCH, SEQ = 4, 64


def make_params(layers, dim, vocab, seq, seed=0):
    """Parameters in tandemc's names and shapes (declaration order): matrices
    and embeddings N(0, 0.02^2), biases zero, layer-norm weights one. The
    values do not matter for timing, only the shapes."""
    rng = np.random.default_rng(seed)
    normal = lambda *shape: rng.normal(0.0, 0.02, shape).astype(np.float32)  # noqa: E731
    zeros = lambda *shape: np.zeros(shape, np.float32)  # noqa: E731
    ones = lambda *shape: np.ones(shape, np.float32)  # noqa: E731
    params = {"wte": normal(vocab, dim), "wpe": normal(seq, dim)}
    for i in range(layers):
        h = f"h.{i}."
        params[h + "ln_1.weight"], params[h + "ln_1.bias"] = ones(dim), zeros(dim)
        params[h + "attn.c_attn.weight"] = normal(dim, 3 * dim)
        params[h + "attn.c_attn.bias"] = zeros(3 * dim)
        params[h + "attn.c_proj.weight"] = normal(dim, dim)
        params[h + "attn.c_proj.bias"] = zeros(dim)
        params[h + "ln_2.weight"], params[h + "ln_2.bias"] = ones(dim), zeros(dim)
        params[h + "mlp.c_fc.weight"] = normal(dim, 4 * dim)
        params[h + "mlp.c_fc.bias"] = zeros(4 * dim)
        params[h + "mlp.c_proj.weight"] = normal(4 * dim, dim)
        params[h + "mlp.c_proj.bias"] = zeros(dim)
    params["ln_f.weight"], params["ln_f.bias"] = ones(dim), zeros(dim)
    # Tied head: the logits use wte^T, so there is no lm_head.weight.
    return {name: jnp.asarray(value) for name, value in params.items()}


def corpus_batches(path, count):
    """`count` (tokens, targets) pairs of [BATCH, SEQ] byte tokens: fixed,
    consecutive windows of the corpus, targets shifted by one."""
    data = np.frombuffer(open(path, "rb").read(), dtype=np.uint8).astype(np.int32)
    span = BATCH * SEQ + 1
    batches = []
    for k in range(count):
        start = (k * BATCH * SEQ) % (len(data) - span)
        window = data[start : start + span]
        tokens = np.stack([window[b * SEQ : (b + 1) * SEQ] for b in range(BATCH)])
        targets = np.stack([window[b * SEQ + 1 : (b + 1) * SEQ + 1] for b in range(BATCH)])
        batches.append((jnp.asarray(tokens), jnp.asarray(targets)))
    return batches


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", choices=sorted(CONFIGS))
    parser.add_argument("steps", type=int)
    parser.add_argument("--corpus", default=os.path.join(ROOT, "data", "corpus.txt"))
    args = parser.parse_args()

    layers, dim, heads, vocab = CONFIGS[args.config]
    model = tandem_ref.GPTConfig(heads=heads, layer_norm_eps=1e-5)
    optimizer = tandem_ref.AdamWConfig()  # Tandem's adamw defaults
    params = make_params(layers, dim, vocab, SEQ)
    order = list(params)
    state = tandem_ref.adamw_init(params)
    # adamw_step reads the step counter as a Python number (int(...)), so it
    # cannot be traced: the jitted step keeps it out of the traced state and
    # passes step 0's counter as a constant. That only folds the two scalar
    # bias corrections; the per-element work is that of every step.
    counter = np.float32(0.0)
    del state["opt.step"]

    loss_and_grads = jax.value_and_grad(
        lambda p, tokens, targets: tandem_ref.gpt_loss(p, tokens, targets, model))

    def train_step(params, state, tokens, targets):
        loss, grads = loss_and_grads(params, tokens, targets)
        params, state = tandem_ref.adamw_step(
            params, grads, {**state, "opt.step": counter}, optimizer, order)
        del state["opt.step"]
        return params, state, loss

    # Donate params and optimizer state: updated in place, like Tandem's
    # runtime does with its parameter buffers.
    step = jax.jit(train_step, donate_argnums=(0, 1))

    batches = corpus_batches(args.corpus, args.steps + 1)
    count = sum(int(np.prod(p.shape)) for p in params.values())
    # XLA's CPU backend runs its ops on a thread pool of all cores unless
    # XLA_FLAGS restricts it (throughput.sh does when OMP_NUM_THREADS=1).
    single = "intra_op_parallelism_threads=1" in os.environ.get("XLA_FLAGS", "")
    threads = 1 if single else os.cpu_count()

    # Warm-up: compiles, then runs once.
    start = time.perf_counter()
    params, state, loss = step(params, state, *batches[0])
    loss.block_until_ready()
    print(f"jax {args.config}: compile + first step {time.perf_counter() - start:.2f} s, "
          f"loss {float(loss):.4f}", file=sys.stderr)

    times = []
    for k in range(args.steps):
        start = time.perf_counter()
        params, state, loss = step(params, state, *batches[k + 1])
        jax.block_until_ready((params, state, loss))
        times.append(time.perf_counter() - start)
        print(f"jax step {k} loss {float(loss):.4f} time {times[-1]:.4f} s", file=sys.stderr)

    median = statistics.median(times)
    print(f"jax {args.config} params {count} step_median {median:.6f} "
          f"tokens/s {BATCH * SEQ / median:.1f} threads {threads}")


if __name__ == "__main__":
    main()
