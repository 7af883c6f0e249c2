"""tandem.from_jax, primitive by primitive: functions built from the JAX
primitives the importer maps (each written the way JAX users write it) are
imported, and tandem-eval's loss and every gradient (nn-autodiff) are
compared with JAX's on the same parameters and inputs, within
tolerance.chain_bound's bound for the imported module. Then the
diagnostics: everything unsupported fails at the user's source line."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import harness
import tandem
import tandem_ref
import tolerance


def _params(shapes, seed=0):
    keys = jax.random.split(jax.random.PRNGKey(seed), len(shapes))
    return {name: jax.random.normal(k, shape, jnp.float32) * 0.5 for k, (name, shape) in zip(keys, shapes.items())}


def _compare(tmp_path, loss_fn, params, *batch):
    """Imports loss_fn, evaluates the loss and its gradients with Tandem on
    the model's initial values, and compares with JAX."""
    model = tandem.from_jax(loss_fn, params, *batch)
    source, init = model.save(tmp_path)
    grad = tmp_path / "grad.mlir"
    harness.run("tandem-opt", source, "--nn-autodiff", "-o", grad)
    outputs, inputs = tmp_path / "outputs.safetensors", tmp_path / "inputs.safetensors"
    harness.run(
        "tandem-eval", grad, "--function", "forward_grad", "--params", init,
        "--save-outputs", outputs, "--save-inputs", inputs,
    )
    got = tandem_ref.load_params(outputs)
    fed = tandem_ref.load_params(inputs)
    args = []
    for i, example in enumerate(batch):
        value = fed[f"input.{i}"]
        assert value.shape == example.shape
        args.append(jnp.asarray(value, example.dtype))
    loss, grads = jax.value_and_grad(lambda p: loss_fn(p, *args))(params)
    bound = tolerance.chain_bound(model.text, "forward", "jax")
    grad_bound = tolerance.chain_bound(grad.read_text(), "forward_grad", "jax")
    assert abs(float(got["loss"]) - float(loss)) <= bound * abs(float(loss)), (got["loss"], loss, bound)
    for name in model.parameter_names:
        leaf = grads
        for key in name.split("/"):
            leaf = leaf[key] if isinstance(leaf, dict) else leaf[int(key)]
        error = harness.relative_error(got[f"grad.{name}"], np.asarray(leaf))
        assert error <= grad_bound, (name, error, grad_bound)
    return model


def test_elementwise_and_reductions(tmp_path):
    def loss(p, x):
        h = x @ p["w"]
        a = jax.nn.relu(h) + jax.nn.sigmoid(h) * jnp.tanh(h) - jnp.abs(h) * 0.1
        b = jax.nn.gelu(h, approximate=False) + jax.nn.gelu(h) + jax.nn.silu(h)
        c = jnp.exp(-jnp.square(h)) + jnp.sqrt(jnp.abs(h) + 1.0) + jax.lax.rsqrt(h * h + 1.0)
        d = jnp.sin(h) * jnp.cos(h) + jnp.log(h**2 + 1.0) + h**3 * 0.01 + jnp.maximum(h, 0.5) + jnp.minimum(h, -0.5)
        e = jnp.where(h > 0.2, h, -h) + jnp.clip(h, -1.0, 1.0) + jax.lax.erf(h)
        s = a + b + c + d + e
        return jnp.mean(s) + jnp.max(s) * 0.01 + jnp.min(s) * 0.01 + jnp.sum(jax.nn.logsumexp(s, axis=-1)) * 0.1

    _compare(tmp_path, loss, _params({"w": (8, 6)}), jnp.ones((4, 8)))


def test_shapes_einsum_and_softmax(tmp_path):
    def loss(p, x):
        q = jnp.einsum("btd,dhe->bhte", x, p["wq"])
        k = jnp.einsum("btd,dhe->bhte", x, p["wk"])
        s = jnp.einsum("bhqe,bhke->bhqk", q, k)
        mask = jnp.tril(jnp.ones((x.shape[1], x.shape[1]), bool))
        w = jax.nn.softmax(jnp.where(mask, s, -jnp.inf), axis=-1)
        o = jnp.einsum("bhqk,bhke->bqhe", w, q).reshape(x.shape[0], x.shape[1], -1)
        o = jnp.concatenate([o[:, :, :3], o[:, :, 3:]], axis=-1).transpose(0, 2, 1)
        left, right = jnp.split(o, 2, axis=1)
        v = jnp.dot(p["v"], p["m"])  # vector @ matrix
        return jnp.sum(left * right) + jnp.sum(v) + jnp.mean(o[:, ::2, 1:3])

    _compare(tmp_path, loss, _params({"wq": (6, 2, 3), "wk": (6, 2, 3), "v": (5,), "m": (5, 4)}), jnp.ones((2, 4, 6)))


def test_embedding_positions_and_tied_head(tmp_path):
    def loss(p, tokens, targets):
        x = p["embed"][tokens] + p["pos"][jnp.arange(tokens.shape[1])]
        x = x + jnp.tanh(x @ p["a"])
        logp = jax.nn.log_softmax(x @ p["embed"].T)  # tied head
        picked = -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))
        # The other way JAX users write it: one-hot targets.
        smoothed = -jnp.mean(jnp.sum(jax.nn.one_hot(targets, 16) * logp, axis=-1))
        return picked + 0.5 * smoothed

    tokens = jnp.zeros((2, 5), jnp.int32)
    model = _compare(tmp_path, loss, _params({"embed": (16, 8), "pos": (5, 8), "a": (8, 8)}), tokens, tokens)
    assert "nn.embedding" in model.text and model.text.count("nn.one_hot") == 2


def test_scan_splits_stacked_layers(tmp_path):
    layers = 3

    def loss(p, tokens, targets):
        x = p["embed"][tokens]

        def block(h, w):
            return tandem.stage_end(h + jnp.tanh(h @ w["a"]) @ w["b"]), None

        x, _ = jax.lax.scan(block, x, p["layers"])
        logp = jax.nn.log_softmax(x @ p["embed"].T)
        return -jnp.mean(jnp.take_along_axis(logp, targets[..., None], axis=-1))

    params = _params({"embed": (16, 8)})
    params["layers"] = _params({"a": (layers, 8, 8), "b": (layers, 8, 8)}, seed=1)
    tokens = jnp.zeros((2, 5), jnp.int32)
    model = _compare(tmp_path, loss, params, tokens, tokens)
    assert [n for n in model.parameter_names if n.startswith("layers/a")] == [f"layers/a/{i}" for i in range(layers)]
    assert model.text.count("nn.stage_end") == layers
    rebuilt = model.structured(model.initial)
    np.testing.assert_array_equal(np.asarray(rebuilt["layers"]["b"]), np.asarray(params["layers"]["b"]))


# --- diagnostics -----------------------------------------------------------


def _refused(loss_fn, params, *batch):
    with pytest.raises(tandem.UnsupportedError) as error:
        tandem.from_jax(loss_fn, params, *batch)
    return str(error.value)


P = {"w": jnp.ones((4, 4))}
X = jnp.ones((2, 4))


def test_unsupported_primitive_names_it_and_the_line():
    message = _refused(lambda p, x: jnp.sum(jnp.cumsum(x @ p["w"], axis=0)), P, X)
    assert "'cumsum'" in message and "test_jax_primitives.py:" in message, message


def test_custom_vjp_is_refused():
    @jax.custom_vjp
    def f(x):
        return x * 2

    f.defvjp(lambda x: (x * 2, None), lambda _, g: (g,))
    message = _refused(lambda p, x: jnp.sum(f(x @ p["w"])), P, X)
    assert "custom_vjp" in message, message


def test_loss_must_be_a_scalar():
    message = _refused(lambda p, x: jnp.sum(x @ p["w"], axis=0), P, X)
    assert "one scalar floating-point loss" in message and "float32[4]" in message, message


def test_mismatched_example_shapes():
    message = _refused(lambda p, x, y: jnp.sum((x @ p["w"] - y) ** 2), P, X, jnp.ones((3, 4)))
    assert "tracing" in message and "example batch" in message, message


def test_integer_arithmetic_on_inputs_is_refused():
    tokens = jnp.zeros((2, 3), jnp.int32)
    message = _refused(lambda p, t: jnp.sum(p["w"][t * 2]), P, tokens)
    assert "integers" in message and "test_jax_primitives.py:" in message, message


def test_mixed_precision_dot_is_refused():
    params = {"w": jnp.ones((4, 4), jnp.bfloat16)}
    message = _refused(
        lambda p, x: jnp.sum(jnp.dot(x.astype(jnp.bfloat16), p["w"], preferred_element_type=jnp.float32)),
        params,
        X,
    )
    assert "dot_general" in message and "precision" in message, message


def test_checkpoint_marks_its_region_without_a_warning():
    # The policies, compilation and training: test_jax_checkpoint.py.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = tandem.from_jax(lambda p, x: jnp.sum(jax.checkpoint(jnp.tanh)(x @ p["w"])), P, X)
    assert not any("jax.checkpoint" in str(w.message) for w in caught)
    assert "nn.tanh %v" in model.text and model.text.count("nn.recompute") == 1


def test_stage_end_still_trains_in_jax():
    def loss(p, x):
        return jnp.sum(jnp.sin(tandem.stage_end(x @ p["w"])) ** 2)

    plain = jax.grad(lambda p, x: jnp.sum(jnp.sin(x @ p["w"]) ** 2))(P, X)
    marked = jax.jit(jax.grad(loss))(P, X)
    np.testing.assert_allclose(marked["w"], plain["w"], rtol=1e-6)
    assert "nn.stage_end" in tandem.from_jax(loss, P, X).text
