"""Attention through both importers: jax.nn.dot_product_attention and ONNX's
Attention operator (opsets 23 to 25) become one fused nn.attention per call,
grouped-query attention as its kv_heads, and what the op cannot express
falls back (JAX: the call's own equations) or is refused (ONNX).

Losses and gradients are compared as in test_jax_primitives.py and
test_onnx_import.py: tandem-eval on the imported module against JAX's
value_and_grad or onnxruntime on the same parameters and inputs, within
tolerance.chain_bound's bound for the imported module (its nn.attention
counted as the op's three reductions: scores over the head size, the
softmax's sum and the weighted sum of values over the keys). The weights are
small (0.2 standard deviations), so that the logits stay far below 1, as
that bound's unit condition numbers assume."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from onnx import TensorProto, helper

import tandem
from tandem import jax_attention
from test_jax_primitives import _compare
from test_onnx_import import _check_loss, _graph, _refused, _rng

B, T, D, CLASSES = 2, 6, 8, 8


def _weights(shapes, seed=0):
    keys = jax.random.split(jax.random.PRNGKey(seed), len(shapes))
    return {n: jax.random.normal(k, s, jnp.float32) * 0.2 for k, (n, s) in zip(keys, shapes.items())}


def _cross_entropy(y, wo, targets):
    logp = jax.nn.log_softmax(y @ wo)
    return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))


def _attention_loss(heads, kv_heads, head_dim, **options):
    """Two stacked layers (lax.scan, as a Llama stacks its blocks) of
    projections and dot_product_attention, then a cross-entropy head."""

    def loss(p, x, targets):
        b, t, _ = x.shape

        def layer(h, w):
            q = (h @ w["wq"]).reshape(b, t, heads, head_dim)
            k = (h @ w["wk"]).reshape(b, t, kv_heads, head_dim)
            v = (h @ w["wv"]).reshape(b, t, kv_heads, head_dim)
            y = jax.nn.dot_product_attention(q, k, v, **options)
            return h + y.reshape(b, t, heads * head_dim) @ w["wo"], None

        h, _ = jax.lax.scan(layer, x, p["layers"])
        return _cross_entropy(h, p["head"], targets)

    width = heads * head_dim
    params = {
        "layers": _weights({"wq": (2, D, width), "wk": (2, D, kv_heads * head_dim),
                            "wv": (2, D, kv_heads * head_dim), "wo": (2, width, D)}),
        "head": _weights({"w": (D, CLASSES)}, seed=1)["w"],
    }
    return loss, params


BATCH = (jnp.zeros((B, T, D), jnp.float32), jnp.zeros((B, T), jnp.int32))


@pytest.mark.parametrize("kv_heads", [4, 2, 1], ids=["mha", "gqa", "mqa"])
def test_jax_causal_grouped_query_attention_is_fused(tmp_path, kv_heads):
    loss, params = _attention_loss(4, kv_heads, 4, is_causal=True)
    model = _compare(tmp_path, loss, params, *BATCH)
    attention = [line for line in model.text.splitlines() if "nn.attention" in line]
    assert len(attention) == 2, model.text  # one per layer
    for line in attention:
        assert "{causal, heads = 4 : i64" in line and "scale" not in line, line
        assert ("kv_heads" not in line) if kv_heads == 4 else (f"kv_heads = {kv_heads} : i64" in line), line
    # Nothing else remains of the calls: the one exp is the head's log_softmax.
    assert model.text.count("nn.exp") == 1, model.text


@pytest.mark.parametrize("options, attrs", [
    ({}, "{heads = 2 : i64}"),
    ({"scale": 0.3, "is_causal": True}, "{causal, heads = 2 : i64, scale = 0.3 : f64}"),
], ids=["full", "scaled"])
def test_jax_attention_without_a_mask_and_with_a_scale(tmp_path, options, attrs):
    loss, params = _attention_loss(2, 2, 4, **options)
    model = _compare(tmp_path, loss, params, *BATCH)
    assert model.text.count("nn.attention") == 2 and model.text.count(attrs) == 2, model.text


def test_jax_cross_attention_over_other_keys(tmp_path):
    """Queries of T positions over S != T keys (not causal): fused, and the
    3-D call (one sequence) JAX batches itself."""

    def loss(p, x, memory, targets):
        q = (x @ p["wq"]).reshape(B, T, 4, 2)
        k = (memory @ p["wk"]).reshape(B, 3, 2, 2)
        v = (memory @ p["wv"]).reshape(B, 3, 2, 2)
        y = jax.nn.dot_product_attention(q, k, v).reshape(B, T, 8)
        one = jax.nn.dot_product_attention(q[0], k[0], v[0]).reshape(T, 8)
        return _cross_entropy(y + one, p["wo"], targets)

    params = _weights({"wq": (D, 8), "wk": (D, 4), "wv": (D, 4), "wo": (8, CLASSES)})
    batch = (BATCH[0], jnp.zeros((B, 3, D), jnp.float32), BATCH[1])
    model = _compare(tmp_path, loss, params, *batch)
    assert model.text.count("nn.attention") == 2, model.text
    assert "tensor<2x6x8xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32> -> tensor<2x6x8xf32>" in model.text
    assert "tensor<1x6x8xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32> -> tensor<1x6x8xf32>" in model.text


def _window(t, s):
    return np.abs(np.arange(t)[:, None] - np.arange(s)[None, :]) <= 2


@pytest.mark.parametrize("options, keys", [
    ({"bias": np.linspace(-0.5, 0.5, T * T, dtype=np.float32).reshape(1, 1, T, T)}, T),
    ({"mask": _window(T, T)[None, None]}, T),
    ({"is_causal": True, "local_window_size": (2, 0)}, T),
    ({"is_causal": True}, 3),  # JAX's tril(T, S): causal needs T == S in nn
], ids=["bias", "mask", "window", "causal-rectangular"])
def test_jax_attention_outside_the_op_falls_back(tmp_path, options, keys):
    """What nn.attention cannot express imports as the call's equations
    (the masks are constants, evaluated at import), still correct."""

    def loss(p, x, targets):
        q = (x @ p["wq"]).reshape(B, T, 2, 4)
        k = (x[:, :keys] @ p["wk"]).reshape(B, keys, 2, 4)
        v = (x[:, :keys] @ p["wv"]).reshape(B, keys, 2, 4)
        y = jax.nn.dot_product_attention(q, k, v, **options).reshape(B, T, 8)
        return _cross_entropy(y, p["wo"], targets)

    params = _weights({"wq": (D, 8), "wk": (D, 8), "wv": (D, 8), "wo": (8, CLASSES)})
    model = _compare(tmp_path, loss, params, *BATCH)
    # The call's own softmax beside the head's log_softmax.
    assert "nn.attention" not in model.text and model.text.count("nn.exp") == 2, model.text


def test_jax_marking_is_undone_after_import():
    """from_jax routes the calls through a named jit only while it traces."""
    loss, params = _attention_loss(2, 1, 4, is_causal=True)
    tandem.from_jax(loss, params, *BATCH)
    q = jnp.zeros((1, 4, 2, 2))
    k = jnp.zeros((1, 4, 1, 2))
    jaxpr = jax.make_jaxpr(lambda q, k: jax.nn.dot_product_attention(q, k, k))(q, k)
    assert "tandem_dot_product_attention" not in str(jaxpr)


def test_jax_marked_jits_of_a_gradient_are_not_attention():
    """jax.grad keeps the marked jit's name on its linearized and transposed
    bodies (more results, residuals and cotangents): those are not the
    call's forward computation, and only the forward one is fused."""

    def f(q):
        return jnp.sum(jax.nn.dot_product_attention(q, q, q, is_causal=True))

    q = jnp.ones((2, 4, 2, 4))
    with jax_attention.marking():
        traced = jax.make_jaxpr(jax.value_and_grad(f))(q).jaxpr, jax.make_jaxpr(f)(q).jaxpr
    found = []
    for jaxpr in traced:
        for eqn in jaxpr.eqns:
            marked = jax_attention.parse(eqn.params.get("name", ""))
            if marked is not None:
                found.append(jax_attention.is_forward(eqn.params["jaxpr"], *marked))
    assert found == [False, False, True], found


# --- ONNX ------------------------------------------------------------------


def _onnx_model(rank, heads, kv_heads, head, keys=T, opset=23, outputs=("y",), **attributes):
    """x (B×T×D) and memory (B×keys×D) projected to Q, K and V, attention,
    an output projection and SoftmaxCrossEntropyLoss. The 4-D form splits
    the heads with Reshape and Transpose, as exporters write it."""
    width, kv_width = heads * head, kv_heads * head
    init = {"wq": _rng((D, width), 0, 0.2), "wk": _rng((D, kv_width), 1, 0.2), "wv": _rng((D, kv_width), 2, 0.2),
            "wo": _rng((width, CLASSES), 3, 0.2)}
    nodes = [helper.make_node("MatMul", ["x", "wq"], ["q3"]),
             helper.make_node("MatMul", ["memory", "wk"], ["k3"]),
             helper.make_node("MatMul", ["memory", "wv"], ["v3"])]
    if rank == 3:
        attributes.update(q_num_heads=heads, kv_num_heads=kv_heads)
        names = ["q3", "k3", "v3"]
    else:
        init["flat"] = np.asarray([B, T, width], np.int64)
        for name, n, s in (("q", heads, T), ("k", kv_heads, keys), ("v", kv_heads, keys)):
            init[f"{name}_shape"] = np.asarray([B, s, n, head], np.int64)
            nodes += [helper.make_node("Reshape", [f"{name}3", f"{name}_shape"], [f"{name}s"]),
                      helper.make_node("Transpose", [f"{name}s"], [name], perm=[0, 2, 1, 3])]
        names = ["q", "k", "v"]
    nodes.append(helper.make_node("Attention", names, list(outputs), name="attention", **attributes))
    if rank == 4:
        nodes += [helper.make_node("Transpose", ["y"], ["yt"], perm=[0, 2, 1, 3]),
                  helper.make_node("Reshape", ["yt", "flat"], ["y3"])]
    nodes += [helper.make_node("MatMul", ["y3" if rank == 4 else "y", "wo"], ["scores"]),
              helper.make_node("Transpose", ["scores"], ["scores_ct"], perm=[0, 2, 1]),
              helper.make_node("SoftmaxCrossEntropyLoss", ["scores_ct", "targets"], ["loss"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, T, D]),
              helper.make_tensor_value_info("memory", TensorProto.FLOAT, [B, keys, D]),
              helper.make_tensor_value_info("targets", TensorProto.INT64, [B, T])]
    return _graph(nodes, inputs, init, opset=opset)


@pytest.mark.parametrize("rank, heads, kv_heads, causal, opset", [
    (3, 4, 2, 1, 23),
    (3, 4, 4, 0, 24),
    (4, 4, 1, 1, 25),
    (4, 2, 2, 0, 23),
], ids=["3d-gqa-causal", "3d-mha", "4d-mqa-causal", "4d-mha"])
def test_onnx_attention_matches_onnxruntime(tmp_path, rank, heads, kv_heads, causal, opset):
    # Y's companions, named but read by nothing, do not matter.
    proto = _onnx_model(rank, heads, kv_heads, 2, opset=opset, is_causal=causal,
                        outputs=("y", "present_key", "present_value"))
    model = tandem.from_onnx(proto, trainable=["wq", "wk", "wv", "wo"])
    (line,) = [line for line in model.text.splitlines() if "nn.attention" in line]
    assert ("{causal, " in line) == bool(causal), line
    assert ("kv_heads" in line) == (kv_heads != heads), line
    # The exporter's transposes around the 4-D form cancel the importer's:
    # what is left moves the loss's class axis.
    assert not re.search(r"nn\.transpose .*tensor<\d+x\d+x\d+x\d+x", model.text), model.text
    _check_loss(tmp_path, model, proto)


def test_onnx_cross_attention_with_a_scale(tmp_path):
    proto = _onnx_model(3, 4, 2, 2, keys=3, scale=0.375)
    model = tandem.from_onnx(proto, trainable=["wq", "wk", "wv", "wo"])
    assert "{heads = 4 : i64, kv_heads = 2 : i64, scale = 0.375 : f64}" in model.text
    _check_loss(tmp_path, model, proto)


def _refused_attention(**changes):
    """An Attention graph with one thing nn.attention cannot express."""
    changes = dict(changes)
    opset = changes.pop("opset", 23)
    extra_inputs = changes.pop("inputs", [])
    outputs = changes.pop("outputs", ["y"])
    read = changes.pop("read", "y")
    shapes = changes.pop("shapes", {"q": [B, T, 4], "k": [B, T, 4], "v": [B, T, 4]})
    constants = changes.pop("constants", {})
    attributes = {"q_num_heads": 2, "kv_num_heads": 2, **changes}
    names = ["q", "k", "v"] + [name for name, _, _ in extra_inputs]
    nodes = [helper.make_node("Attention", names, outputs, name="my_attention", **attributes),
             helper.make_node("ReduceSum", [read], ["loss"], keepdims=0)]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in shapes.items()]
    inputs += [helper.make_tensor_value_info(n, t, s) for n, t, s in extra_inputs if n and n not in constants]
    proto = _graph(nodes, inputs, constants, opset=opset)
    return _refused(proto, trainable=[])


@pytest.mark.parametrize("changes, expected", [
    ({"inputs": [("mask", TensorProto.BOOL, [T, T])], "constants": {"mask": np.tril(np.ones((T, T), bool))}},
     "attn_mask"),
    ({"inputs": [("", 0, []), ("past_k", TensorProto.FLOAT, [B, 2, 3, 2]), ("past_v", TensorProto.FLOAT, [B, 2, 3, 2])]},
     "past_key"),
    ({"opset": 24, "inputs": [("", 0, []), ("", 0, []), ("", 0, []), ("lengths", TensorProto.INT64, [B])]},
     "nonpad_kv_seqlen"),
    ({"softcap": 30.0}, "softcap 30.0"),
    ({"outputs": ["y", "present_k", "present_v"], "read": "present_k"}, "present_key is used"),
    ({"outputs": ["y", "", "", "qk"], "read": "qk", "qk_matmul_output_mode": 3}, "qk_matmul_output is used"),
    ({"opset": 25, "left_window_size": 2}, "local window"),
    ({"shapes": {"q": [B, T, 4], "k": [B, T, 4], "v": [B, T, 6]}}, "value head size (3)"),
    ({"is_causal": 1, "shapes": {"q": [B, T, 4], "k": [B, 3, 4], "v": [B, 3, 4]}}, "6 queries over 3 keys"),
    ({"softmax_precision": TensorProto.DOUBLE}, "softmax_precision"),
], ids=["mask", "kv-cache", "nonpad", "softcap", "present", "qk", "window", "value-head", "causal-cross", "precision"])
def test_onnx_attention_refuses_what_nn_attention_cannot_express(changes, expected):
    message = _refused_attention(**changes)
    assert "node 'my_attention' (Attention)" in message and expected in message, message
