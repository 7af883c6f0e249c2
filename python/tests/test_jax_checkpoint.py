"""jax.checkpoint (jax.remat) in tandem.from_jax: the ops of a checkpointed
region that its policy does not save carry `nn.recompute`, and
`tandem.compile` then defaults to `--remat annotated`, which recomputes
exactly those ops in the backward pass.

- every op family the importer writes parses with the mark (tandem-opt),
  and a module differs from the one without jax.checkpoint only by marks;
- per policy (None, nothing_saveable, everything_saveable, dots_saveable,
  dots_with_no_batch_dims_saveable, nested, unknown) exactly the region's
  ops are marked, never a constant, a parameter read or a stage marker;
- a scanned two-layer model compiled for 2 stages: less stash and more
  recomputation than remat="none", no higher predicted peak, and 3
  training steps bitwise equal to remat="none"'s.

The tests that compile with `--remat annotated` need a tandemc that has it;
they fail (not skip) without it."""

import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import harness
import tandem
from tandem import _ir

MARK = "nn.recompute"
POLICIES = jax.checkpoint_policies


def _ops(text):
    """[(op name, marked)] of the function body's ops, in order."""
    ops = []
    for line in text.splitlines():
        match = re.match(r"\s*%[\w, %]+ = (nn\.\w+)(.*)$", line)
        if match:
            body = re.sub(r' loc\(.*\)$', "", match.group(2))
            ops.append((match.group(1), MARK in body))
    return ops


def _unmarked(text):
    return text.replace(f", {MARK}}}", "}").replace(f" {{{MARK}}}", "")


def _parses(tmp_path, text, name="model.mlir"):
    path = tmp_path / name
    path.write_text(text)
    harness.run("tandem-opt", path, "-o", tmp_path / f"{name}.out")
    return path


def _import(loss, params, *batch):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a mapped policy warns of nothing
        return tandem.from_jax(loss, params, *batch)


def _params(shapes, seed=0):
    keys = jax.random.split(jax.random.PRNGKey(seed), len(shapes))
    return {n: jax.random.normal(k, s, jnp.float32) * 0.3 for k, (n, s) in zip(keys, shapes.items())}


def _annotated_available():
    return "annotated" in harness.run("tandemc", "--help").stdout


# --- every op family, marked ------------------------------------------------


def _everything(p, tokens, targets):
    """A function whose every equation the importer maps to a different op
    family: elementwise, compositions, masks and select, casts, shape ops,
    reductions, matmuls (weight and batched einsum), softmax / log_softmax
    (stop_gradient), erf, attention (fused), embedding, one_hot both ways,
    a scan."""
    x = p["embed"][tokens] + p["pos"][jnp.arange(tokens.shape[1])]  # embedding, const ids
    h = x @ p["w"]  # matmul
    h = jnp.tanh(h) + jax.nn.sigmoid(h) * jnp.abs(h) - jnp.square(h) * 0.1 + jnp.sign(h) * 0.01
    h = h + jnp.exp(-h) * jnp.log(h * h + 1.0) + jnp.sqrt(jnp.abs(h) + 1.0) + jax.lax.rsqrt(h * h + 1.0)
    h = h + jnp.sin(h) * jnp.cos(h) + jax.lax.erf(h) + jax.lax.erfc(h) + h**3 * 0.01 + jnp.abs(h) ** 1.5
    h = jnp.maximum(h, -2.0) / (jnp.minimum(h, 2.0) + 3.0) + jnp.clip(h, -1.0, 1.0)
    h = jnp.where(h > 0.1, h, -h) + jnp.where(jnp.isfinite(h), h, 0.0)
    h = h.astype(jnp.float16).astype(jnp.float32)  # cast
    b, t, d = h.shape
    q = h.reshape(b, t, 2, d // 2).transpose(0, 2, 1, 3)  # reshape, transpose
    s = jnp.einsum("bhqe,bhke->bhqk", q, q)  # batched matmul
    mask = jnp.tril(jnp.ones((t, t), bool))
    w = jax.nn.softmax(jnp.where(mask, s, -jnp.inf), axis=-1)  # stop_gradient, reduce_max
    o = jnp.einsum("bhqk,bhke->bqhe", w, q).reshape(b, t, d)
    o = o + jax.nn.dot_product_attention(
        o.reshape(b, t, 2, d // 2), o.reshape(b, t, 2, d // 2), o.reshape(b, t, 2, d // 2), is_causal=True
    ).reshape(b, t, d)  # nn.attention
    left, right = jnp.split(o, 2, axis=-1)  # split
    o = jnp.concatenate([right, left], axis=-1)[:, ::1, :] + jnp.broadcast_to(o[:, :1, :], o.shape)  # slice, concat
    o = o + jax.lax.dynamic_slice(o, (0, 0, 0), (b, t, d)) * jnp.max(o) - jnp.min(o)

    def step(c, wl):
        return c + jnp.tanh(c @ wl), jnp.sum(c)

    o, ys = jax.lax.scan(step, o, p["layers"])  # scan: slices, concat
    logp = jax.nn.log_softmax(o @ p["embed"].T)
    picked = -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))  # one_hot, reduce_sum
    smooth = -jnp.mean(jnp.sum(jax.nn.one_hot(targets, 16) * logp, axis=-1))  # one_hot
    return picked + 0.5 * smooth + 0.01 * jnp.sum(ys)


def _everything_params():
    p = _params({"embed": (16, 8), "pos": (5, 8), "w": (8, 8)})
    p["layers"] = jax.random.normal(jax.random.PRNGKey(3), (2, 8, 8)) * 0.3
    return p


TOKENS = jnp.zeros((2, 5), jnp.int32)


def test_every_op_family_parses_marked(tmp_path):
    params = _everything_params()
    plain = _import(_everything, params, TOKENS, TOKENS)
    marked = _import(jax.checkpoint(_everything), params, TOKENS, TOKENS)
    assert MARK not in plain.text
    # The same module but for the marks.
    assert _unmarked(marked.text) == plain.text
    ops = _ops(marked.text)
    kinds = {name for name, _ in ops}
    for family in (
        "nn.embedding", "nn.matmul", "nn.tanh", "nn.exp", "nn.log", "nn.sqrt", "nn.rsqrt", "nn.sin", "nn.cos",
        "nn.erf", "nn.erfc", "nn.pow", "nn.maximum", "nn.minimum", "nn.div", "nn.greater_equal", "nn.select",
        "nn.cast", "nn.reshape", "nn.transpose", "nn.broadcast_to", "nn.slice", "nn.concat", "nn.split",
        "nn.reduce_sum", "nn.reduce_max", "nn.stop_gradient", "nn.attention", "nn.one_hot", "nn.neg",
    ):
        assert family in kinds, family
    # The whole loss is the region: every op but constants and parameter
    # reads is marked.
    for name, is_marked in ops:
        assert is_marked == (name not in ("nn.constant", "nn.param")), (name, is_marked)
    _parses(tmp_path, marked.text)
    # Model keeps the text as imported, and saves it so.
    source, _ = marked.save(tmp_path / "saved")
    assert source.read_text() == marked.text


def test_attribute_joins_the_attribute_dictionary():
    cases = {
        "nn.matmul %a, %b {transpose_rhs} : T, U -> V": "nn.matmul %a, %b {transpose_rhs, nn.recompute} : T, U -> V",
        "nn.split %x {axis = 2 : i64, sizes = array<i64: 1, 2>} : T -> U, V":
            "nn.split %x {axis = 2 : i64, sizes = array<i64: 1, 2>, nn.recompute} : T -> U, V",
        "nn.reshape %x : tensor<2xf32> to tensor<2x1xf32>": "nn.reshape %x {nn.recompute} : tensor<2xf32> to tensor<2x1xf32>",
        "nn.reduce_sum %x [0, 1] keepdims : T -> U": "nn.reduce_sum %x [0, 1] keepdims {nn.recompute} : T -> U",
        "nn.transpose %x, [0, 2, 1, 3] : T -> U": "nn.transpose %x, [0, 2, 1, 3] {nn.recompute} : T -> U",
        "nn.attention %q, %k, %v {causal, heads = 4 : i64} : Q, K, V -> Q":
            "nn.attention %q, %k, %v {causal, heads = 4 : i64, nn.recompute} : Q, K, V -> Q",
        "nn.concat %a, %b {axis = 0 : i64} : (T, T) -> U": "nn.concat %a, %b {axis = 0 : i64, nn.recompute} : (T, T) -> U",
        'nn.x %a {s = "} : {"} : T': 'nn.x %a {s = "} : {", nn.recompute} : T',
        "nn.tanh %a {nn.recompute} : T": "nn.tanh %a {nn.recompute} : T",
    }
    for text, expected in cases.items():
        assert _ir.with_unit_attribute(text, MARK) == expected


# --- policies on a scanned model ----------------------------------------------

LAYERS = 2
D = 8


def _block(h, w):
    """An attention and an MLP block (the einsums have batch dimensions, the
    weight products none)."""
    b, t, d = h.shape
    q = (h @ w["wq"]).reshape(b, t, 2, d // 2)
    k = (h @ w["wk"]).reshape(b, t, 2, d // 2)
    s = jnp.einsum("bqhe,bkhe->bhqk", q, k) / np.sqrt(d // 2)
    mask = jnp.tril(jnp.ones((t, t), bool))
    a = jax.nn.softmax(jnp.where(mask, s, -1e9), axis=-1)
    h = h + jnp.einsum("bhqk,bkhe->bqhe", a, q).reshape(b, t, d) @ w["wo"]
    return h + jnp.tanh(h @ w["w1"]) @ w["w2"]


def _scanned(checkpoint):
    """embed -> scan of 2 (checkpointed) blocks, each followed by a stage
    marker -> head and cross-entropy. `checkpoint(f)` wraps the block."""

    def loss(p, tokens, targets):
        x = p["embed"][tokens]

        def layer(h, w):
            return tandem.stage_end(checkpoint(_block)(h, w)), None

        x, _ = jax.lax.scan(layer, x, p["blocks"])
        logp = jax.nn.log_softmax(x @ p["head"])
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

    return loss


def _scanned_params():
    p = _params({"embed": (256, D), "head": (D, 256)})
    p["blocks"] = _params({n: (LAYERS, D, D) for n in ("wq", "wk", "wo", "w1", "w2")}, seed=1)
    return p


BATCH = (jnp.zeros((2, 8), jnp.int32), jnp.zeros((2, 8), jnp.int32))


def _region_ops(text):
    """The ops of each layer's checkpointed region, as [(name, marked)] per
    layer: the ops between a layer's parameter reads (the first wq read)
    and its stage marker, without constants and parameter reads."""
    regions, current = [], None
    for line in text.splitlines():
        match = re.match(r"\s*%[\w, %]+ = (nn\.\w+)(.*)$", line)
        if not match:
            continue
        name = match.group(1)
        if name == "nn.param" and "blocks/wq/" in line and current is None:
            current = []
        if current is None:
            continue
        if name == "nn.stage_end":
            regions.append(current)
            current = None
        elif name not in ("nn.constant", "nn.param"):
            current.append((name, MARK in re.sub(r" loc\(.*\)$", "", match.group(2))))
    return regions


def test_policies_mark_the_region(tmp_path):
    params = _scanned_params()
    plain = _import(_scanned(lambda f: f), params, *BATCH)
    plain_ops = _ops(plain.text)
    regions = _region_ops(plain.text)
    assert len(regions) == LAYERS and all(regions)
    region_size = sum(len(r) for r in regions)
    matmuls = sum(1 for r in regions for n, _ in r if n == "nn.matmul")
    assert matmuls == LAYERS * 7  # 5 weight products, 2 batched einsums
    counts = {}
    for label, policy in (
        ("default", None),
        ("nothing_saveable", POLICIES.nothing_saveable),
        ("everything_saveable", POLICIES.everything_saveable),
        ("dots_saveable", POLICIES.dots_saveable),
        ("checkpoint_dots", POLICIES.checkpoint_dots),
        ("dots_with_no_batch_dims_saveable", POLICIES.dots_with_no_batch_dims_saveable),
    ):
        wrap = (lambda f: jax.checkpoint(f)) if policy is None else (lambda f, p=policy: jax.checkpoint(f, policy=p))
        model = _import(_scanned(wrap), params, *BATCH)
        assert _unmarked(model.text) == plain.text, label
        ops = _ops(model.text)
        assert [n for n, _ in ops] == [n for n, _ in plain_ops]
        marked_regions = _region_ops(model.text)
        # Nothing outside the regions, no constant, parameter read or stage
        # marker is marked.
        outside = sum(m for _, m in ops) - sum(m for r in marked_regions for _, m in r)
        assert outside == 0, label
        marked = sum(m for r in marked_regions for _, m in r)
        counts[label] = marked
        for region in marked_regions:
            for name, is_marked in region:
                if label in ("default", "nothing_saveable"):
                    assert is_marked, (label, name)
                elif label == "everything_saveable":
                    assert not is_marked, (label, name)
        _parses(tmp_path, model.text, f"{label}.mlir")
        if label in ("default", "nothing_saveable", "everything_saveable"):
            assert tandem.compiler.default_remat(model) == ("none" if label == "everything_saveable" else "annotated")
    print(f"\nregion ops {region_size} (matmuls {matmuls}); marked per policy: {counts}")
    assert counts["default"] == counts["nothing_saveable"] == region_size
    assert counts["everything_saveable"] == 0
    # dots_saveable keeps what each dot_general writes: its nn.matmul, and
    # for the einsums their operand layout and result reshapes.
    assert counts["dots_saveable"] == counts["checkpoint_dots"] < region_size - matmuls
    # ... and the products without batch dimensions only: the einsums' ops
    # are marked again.
    assert counts["dots_saveable"] < counts["dots_with_no_batch_dims_saveable"] < region_size
    dots = _region_ops(_import(_scanned(lambda f: jax.checkpoint(f, policy=POLICIES.dots_saveable)), params, *BATCH).text)
    no_batch = _region_ops(
        _import(_scanned(lambda f: jax.checkpoint(f, policy=POLICIES.dots_with_no_batch_dims_saveable)), params, *BATCH).text
    )
    for region in dots:
        assert [m for n, m in region if n == "nn.matmul"] == [False] * 7
        assert all(m for n, m in region if n in ("nn.tanh", "nn.exp", "nn.div", "nn.select", "nn.reduce_max"))
    for region in no_batch:
        # The 5 weight products kept, the 2 batched einsums recomputed.
        assert sorted(m for n, m in region if n == "nn.matmul") == [False] * 5 + [True] * 2


def test_nested_checkpoint_uses_the_inner_policy(tmp_path):
    def loss(p, x):
        def inner(h):
            return jnp.tanh(h @ p["b"])

        def outer(h):
            h = jnp.sin(h @ p["a"])
            h = jax.checkpoint(inner, policy=POLICIES.everything_saveable)(h)
            return jnp.cos(h @ p["c"])

        return jnp.sum(jax.checkpoint(outer, policy=POLICIES.dots_saveable)(x) ** 2)

    params = _params({"a": (4, 4), "b": (4, 4), "c": (4, 4)})
    model = _import(loss, params, jnp.ones((3, 4)))
    ops = [(n, m) for n, m in _ops(model.text) if n not in ("nn.param", "nn.constant")]
    assert ops == [
        ("nn.matmul", False),  # dots_saveable
        ("nn.sin", True),
        ("nn.matmul", False),  # inner: everything_saveable
        ("nn.tanh", False),
        ("nn.matmul", False),  # dots_saveable
        ("nn.cos", True),
        ("nn.mul", False),  # outside
        ("nn.reduce_sum", False),
    ], ops
    _parses(tmp_path, model.text)


def test_unknown_policy_warns_once_and_marks_all(tmp_path):
    from jax.ad_checkpoint import checkpoint_name

    policy = POLICIES.save_only_these_names("hidden")

    def loss(p, tokens, targets):
        x = p["embed"][tokens]

        def block(h, w):
            return h + jnp.tanh(checkpoint_name(h @ w["w1"], "hidden")) @ w["w2"]

        def layer(h, w):
            return tandem.stage_end(jax.checkpoint(block, policy=policy)(h, w)), None

        x, _ = jax.lax.scan(layer, x, p["blocks"])
        return jnp.mean(x @ p["head"])

    params = _params({"embed": (256, D), "head": (D, 4)})
    params["blocks"] = _params({"w1": (LAYERS, D, D), "w2": (LAYERS, D, D)}, seed=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = tandem.from_jax(loss, params, *BATCH)
    messages = [str(w.message) for w in caught if "jax.checkpoint" in str(w.message)]
    # One checkpoint equation (the scan body's), unrolled twice: one warning.
    assert len(messages) == 1, messages
    assert "SaveOnlyTheseNames" in messages[0] and "test_jax_checkpoint.py:" in messages[0], messages[0]
    ops = [(n, m) for n, m in _ops(model.text) if n not in ("nn.param", "nn.constant")]
    # Per layer: matmul, tanh, matmul, add marked; then the stage marker.
    per_layer = [("nn.matmul", True), ("nn.tanh", True), ("nn.matmul", True), ("nn.add", True), ("nn.stage_end", False)]
    start = ops.index(("nn.embedding", False)) + 1
    assert not any(m for _, m in ops[:start]), ops
    assert ops[start:] == per_layer * LAYERS + [("nn.matmul", False), ("nn.reduce_sum", False), ("nn.div", False)], ops
    _parses(tmp_path, model.text)


def test_checkpoint_is_jax_sanity():
    """jax.checkpoint changes nothing JAX computes, for each policy used."""
    params = _scanned_params()
    tokens = jax.random.randint(jax.random.PRNGKey(5), (2, 8), 0, 256)
    targets = jax.random.randint(jax.random.PRNGKey(6), (2, 8), 0, 256)
    plain_loss, plain_grad = jax.value_and_grad(_scanned(lambda f: f))(params, tokens, targets)
    for policy in (None, POLICIES.dots_saveable, POLICIES.dots_with_no_batch_dims_saveable):
        loss, grad = jax.value_and_grad(_scanned(lambda f: jax.checkpoint(f, policy=policy)))(params, tokens, targets)
        np.testing.assert_allclose(float(loss), float(plain_loss), rtol=1e-6)
        for a, b in zip(jax.tree_util.tree_leaves(grad), jax.tree_util.tree_leaves(plain_grad)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-7)


# --- compiled and trained -------------------------------------------------------

_REMAT = re.compile(
    r"mpmd-remat policy=(\S+): stash (\d+) bytes per microbatch \(was (\d+)\)[^;]*; recompute (\d+) FLOPs"
)
_MEMORY = re.compile(r"remark: rank (\d+): peak (\d+) bytes;.* stash \d+ \(\d+ x (\d+) in flight\)")


def _remat_remarks(compiled):
    """mpmd-remat's remarks, one per stage position: [(policy, stash bytes
    per microbatch, the bytes before, recomputed FLOPs per microbatch)]
    (none with remat="none": the pass does not run)."""
    return [(p, int(s), int(b), int(f)) for p, s, b, f in _REMAT.findall(compiled.remarks)]


def _stash_per_microbatch(compiled):
    """{rank: stash bytes per microbatch} from mpmd-memory's remarks."""
    return {int(r): int(s) for r, _, s in _MEMORY.findall(compiled.remarks)}


@pytest.fixture(scope="module")
def checkpointed_pipelines(tmp_path_factory):
    """The scanned model with jax.checkpoint (default policy) compiled for 2
    stages twice: remat by default (annotated) and remat="none"."""
    assert _annotated_available(), (
        "tandemc has no --remat annotated yet (the C++ side of nn.recompute): these tests pass once it does"
    )
    model = _import(_scanned(jax.checkpoint), _scanned_params(), *BATCH)
    base = tmp_path_factory.mktemp("checkpoint")
    options = dict(stages=2, microbatches=2, optimizer="optimizer=adamw lr=0.01")
    annotated = tandem.compile(model, out=base / "annotated", **options)
    plain = tandem.compile(model, remat="none", out=base / "none", **options)
    return model, annotated, plain


def test_compile_defaults_to_annotated_and_recomputes(checkpointed_pipelines):
    model, annotated, plain = checkpointed_pipelines
    remarks = _remat_remarks(annotated)
    assert remarks and {p for p, *_ in remarks} == {"annotated"}, annotated.remarks
    stash = sum(s for _, s, _, _ in remarks)
    before = sum(b for _, _, b, _ in remarks)
    flops = sum(f for *_, f in remarks)
    # remat="none" (explicit, over the marks) runs no mpmd-remat: it keeps
    # everything and recomputes nothing.
    assert _remat_remarks(plain) == [], plain.remarks
    kept, kept_plain = _stash_per_microbatch(annotated), _stash_per_microbatch(plain)
    print(
        f"\nannotated: mpmd-remat stash {stash} bytes per microbatch (was {before}), recompute {flops} FLOPs "
        f"per microbatch; mpmd-memory stash per microbatch {kept}, peak {annotated.memory}"
        f"\nnone: mpmd-memory stash per microbatch {kept_plain}, peak {plain.memory}"
    )
    assert stash < before and flops > 0
    assert set(kept) == set(kept_plain) == set(annotated.memory) == set(plain.memory) == {0, 1}
    for rank in plain.memory:
        assert kept[rank] <= kept_plain[rank], (rank, kept, kept_plain)
        assert annotated.memory[rank] <= plain.memory[rank], (rank, annotated.memory, plain.memory)
    assert sum(kept.values()) < sum(kept_plain.values())


def test_training_is_bitwise_that_of_no_remat(checkpointed_pipelines, corpus):
    _, annotated, plain = checkpointed_pipelines
    a = annotated.train(data=corpus, steps=3, progress=False)
    b = plain.train(data=corpus, steps=3, progress=False)
    print(f"\nlosses annotated {[r['loss'] for r in a]} none {[r['loss'] for r in b]}")
    assert [r["loss"] for r in a] == [r["loss"] for r in b]
    pa, pb = annotated.parameters(named=True), plain.parameters(named=True)
    assert set(pa) == set(pb)
    for name in pa:
        np.testing.assert_array_equal(pa[name], pb[name], err_msg=name)
