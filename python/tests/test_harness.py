"""Tests of the harness and of the JAX reference itself."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import harness
import reference
import tandem_ref
import tolerance
from tandem_ref import adamw, gpt


def test_float32_on_cpu():
    assert not jax.config.jax_enable_x64
    assert jax.default_backend() == "cpu"
    assert jnp.ones(3).dtype == jnp.float32


@pytest.mark.parametrize("model", ["tiny-gpt.mlir", "tiny-mlp.mlir"])
def test_saved_params_match_declarations(model, tmp_path):
    """tandem-eval --save-params writes every declared parameter as F32 with
    its declared shape; the safetensors package and a by-hand decoder of the
    format read the same bytes."""
    path = harness.EXAMPLES / model
    saved = tmp_path / "p.safetensors"
    harness.run("tandem-eval", path, "--seed", 5, "--save-params", saved)
    declared = harness.parameter_declarations(path.read_text())
    assert declared, "no nn.parameter found in the model"
    header, _ = tandem_ref.safetensors_io.read_header(saved)
    assert sorted(header) == sorted(n for n, _ in declared)
    for name, shape in declared:
        assert header[name]["dtype"] == "F32"
        assert tuple(header[name]["shape"]) == shape
    by_package = tandem_ref.load_params(saved)
    by_hand = tandem_ref.safetensors_io.read_by_hand(saved)
    for name in by_package:
        np.testing.assert_array_equal(by_package[name], by_hand[name])
    # Initializers: the normal(0.02) wte of the GPT / uniform weights of the
    # MLP are not all zero; the bias initializers are zeros.
    for name, value in by_package.items():
        if name.endswith(".bias"):
            assert not np.any(value), name


def test_safetensors_round_trip(tmp_path):
    values = {"a.weight": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.float32([-1.5])}
    path = tmp_path / "x.safetensors"
    tandem_ref.save_params(values, path)
    for reader in (tandem_ref.load_params, tandem_ref.safetensors_io.read_by_hand):
        back = reader(path)
        assert sorted(back) == sorted(values)
        for k in values:
            np.testing.assert_array_equal(back[k], values[k])


def zero_params(declared):
    return {name: jnp.zeros(shape, jnp.float32) for name, shape in declared}


def test_gpt_uniform_logits_give_log_vocab(gpt_mlir, corpus, tmp_path):
    """All-zero parameters make every logit 0: the loss is log V, in JAX and
    in tandem-eval (loading the zeros JAX saved)."""
    text = gpt_mlir.read_text()
    declared = harness.parameter_declarations(text)
    vocab = dict(declared)["wte"][0]
    params = zero_params(declared)
    tokens = jnp.arange(8 * 16, dtype=jnp.int32).reshape(8, 16) % vocab
    loss = float(reference.loss_function(text)(params, tokens, (tokens + 1) % vocab))
    # JAX: each token's loss is logsumexp(0, ..., 0) - 0 = log(sum of V ones)
    # (the sum is exact), within XLA's f32 log (counted as 4 roundings: XLA's
    # log is a polynomial, not correctly rounded); the mean of the 128 equal
    # terms adds gamma(127) = 7.6e-6 in any summation order (tolerance.py).
    tokens_per_batch = tokens.size
    jax_bound = tolerance.mean_of_equal_terms_bound(tokens_per_batch, 4)
    assert abs(loss - math.log(vocab)) <= jax_bound * math.log(vocab), (loss, jax_bound)
    zeros = tmp_path / "zeros.safetensors"
    tandem_ref.save_params({k: np.asarray(v) for k, v in params.items()}, zeros)
    done = harness.run("tandem-eval", gpt_mlir, "--params", zeros, "--data", corpus)
    # tandem-eval computes in double and rounds each op's result to f32: the
    # log, the mean and the printed value round once each.
    assert abs(harness.parse_loss(done.stdout) - math.log(vocab)) <= tolerance.gamma(3) * math.log(vocab)


def test_mlp_uniform_logits_give_log_classes(mlp_mlir):
    text = mlp_mlir.read_text()
    declared = harness.parameter_declarations(text)
    params = zero_params(declared)
    classes = dict(declared)["head.bias"][0]
    x = jax.random.normal(jax.random.PRNGKey(0), (16, 32), jnp.float32)
    labels = jnp.arange(16, dtype=jnp.int32) % classes
    loss = float(tandem_ref.mlp_loss(params, x, labels))
    # As for the GPT: log(classes) per row, then the mean of 16 equal terms.
    bound = tolerance.mean_of_equal_terms_bound(labels.size, 4)
    assert abs(loss - math.log(classes)) <= bound * math.log(classes), (loss, bound)


def test_cross_entropy_gradient_is_softmax_minus_one_hot():
    logits = jax.random.normal(jax.random.PRNGKey(1), (4, 7), jnp.float32) * 3
    targets = jnp.array([0, 6, 3, 3], jnp.int32)
    grad = jax.grad(tandem_ref.cross_entropy)(logits, targets)
    expected = (jax.nn.softmax(logits, axis=-1) - jax.nn.one_hot(targets, 7)) / 4
    np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-7)


def test_gpt_attention_is_causal(gpt_mlir, tmp_path):
    """Changing the last token changes only the last position's logits."""
    text = gpt_mlir.read_text()
    _, arrays, _, _ = reference.evaluate(gpt_mlir, ["--seed", 0], tmp_path)
    params = reference.model_params(arrays, text)
    config = gpt.GPTConfig(heads=harness.attention_heads(text))
    tokens = jnp.arange(2 * 16, dtype=jnp.int32).reshape(2, 16)
    changed = tokens.at[:, -1].set(200)
    a = gpt.gpt_logits(params, tokens, config)
    b = gpt.gpt_logits(params, changed, config)
    np.testing.assert_array_equal(a[:, :-1], b[:, :-1])
    assert float(jnp.max(jnp.abs(a[:, -1] - b[:, -1]))) > 0


def test_forward_comparison_can_fail(gpt_mlir, corpus, tmp_path):
    """The loss comparison on perturbed parameters is sharp enough to see a
    wrong model: one attention head instead of the declared two, or a
    different layer-norm epsilon, misses tandem-eval's loss by more than the
    tolerance test_forward_loss allows."""
    text = gpt_mlir.read_text()
    params_file, _ = reference.perturbed_params_file(gpt_mlir, tmp_path)
    tandem_loss, arrays, inputs, _ = reference.evaluate(
        gpt_mlir, ["--params", params_file, "--data", corpus], tmp_path
    )
    params = reference.model_params(arrays, text)
    right = gpt.GPTConfig(heads=harness.attention_heads(text))
    bound = tolerance.chain_bound(text, "forward", "jax")
    assert abs(float(gpt.gpt_loss(params, *inputs, right)) - tandem_loss) <= bound * tandem_loss
    for wrong in (gpt.GPTConfig(heads=1), gpt.GPTConfig(heads=right.heads, layer_norm_eps=1e-2)):
        loss = float(gpt.gpt_loss(params, *inputs, wrong))
        print(f"{wrong}: rel {abs(loss - tandem_loss) / tandem_loss:.3e} (bound {bound:.2e})")
        assert abs(loss - tandem_loss) > bound * tandem_loss, wrong


def test_echo_module_rewrites_signature_and_return():
    text = (
        "module {\n"
        "  func.func @forward(%arg0: tensor<4x8xf32>, %arg1: tensor<4xi32>) -> tensor<f32> {\n"
        "    %0 = nn.cross_entropy %arg0, %arg1 : tensor<4x8xf32>, tensor<4xi32> -> tensor<f32>\n"
        "    return %0 : tensor<f32>\n"
        "  }\n"
        "}\n"
    )
    echo = harness.echo_inputs_module(text)
    assert (
        "func.func @forward(%arg0: tensor<4x8xf32>, %arg1: tensor<4xi32>) -> "
        "(tensor<f32>, tensor<4x8xf32>, tensor<4xi32>) {" in echo
    )
    assert "return %0, %arg0, %arg1 : tensor<f32>, tensor<4x8xf32>, tensor<4xi32>" in echo


def test_echoed_mlp_inputs(mlp_mlir, tmp_path):
    """The echoed inputs have the declared shapes, labels lie in [0, classes)
    and the float inputs look like N(0, 1) draws."""
    loss, inputs = reference.echoed_inputs(mlp_mlir, ["--seed", 0], tmp_path)
    x, labels = inputs
    assert x.shape == (16, 32) and x.dtype == jnp.float32
    assert labels.shape == (16,) and labels.dtype == jnp.int32
    assert int(labels.min()) >= 0 and int(labels.max()) < 10
    assert abs(float(x.mean())) < 0.2 and 0.8 < float(x.std()) < 1.2
    assert math.isfinite(loss)


def test_relative_error():
    b = np.array([3.0, 4.0])
    assert harness.relative_error(b, b) == 0.0
    assert abs(harness.relative_error(b + np.array([0.0, 0.5]), b) - 0.1) < 1e-12


# --- AdamW -----------------------------------------------------------------


def test_adamw_constant_gradient_moves_by_lr():
    """With a constant gradient g, the bias-corrected moments are exactly g
    and g^2, so each step moves p by lr * g / (|g| + eps) (+ decay)."""
    config = tandem_ref.AdamWConfig(lr=0.01, weight_decay=0.0)
    params = {"w": jnp.full((2, 2), 1.0), "b": jnp.zeros((2,))}
    grads = {"w": jnp.array([[0.5, -2.0], [1e-3, 3.0]]), "b": jnp.array([4.0, -4.0])}
    state = tandem_ref.adamw_init(params)
    for _ in range(5):
        params, state = tandem_ref.adamw_step(params, grads, state, config)
    assert float(state["opt.step"]) == 5.0
    expected_w = 1.0 - 5 * 0.01 * np.sign(np.asarray(grads["w"]))
    np.testing.assert_allclose(params["w"], expected_w, rtol=1e-5)
    np.testing.assert_allclose(params["b"], [-0.05, 0.05], rtol=1e-5)


def test_adamw_decays_only_matrices_by_default():
    config = tandem_ref.AdamWConfig(lr=0.1, weight_decay=0.5)
    params = {"w": jnp.ones((3, 2)), "ln.weight": jnp.ones((2,)), "b": jnp.ones((2,))}
    zero = {k: jnp.zeros_like(v) for k, v in params.items()}
    new, _ = tandem_ref.adamw_step(params, zero, tandem_ref.adamw_init(params), config)
    np.testing.assert_allclose(new["w"], 1 - 0.1 * 0.5)
    np.testing.assert_array_equal(new["ln.weight"], 1.0)
    np.testing.assert_array_equal(new["b"], 1.0)
    assert adamw.decays("w", (3, 2), tandem_ref.AdamWConfig(no_decay=("w",))) is False
    assert adamw.decays("b", (2,), tandem_ref.AdamWConfig(decay="all")) is True
    assert adamw.decays("w", (3, 2), tandem_ref.AdamWConfig(decay="none")) is False


def test_adamw_clipping_and_schedule():
    config = tandem_ref.AdamWConfig(
        clip_norm=1.0, schedule="warmup-cosine", warmup_steps=2, total_steps=6, min_lr=0.1, lr=1.0
    )
    assert [round(adamw.learning_rate(t, config), 6) for t in range(8)] == [
        0.5, 1.0, 1.0, round(0.1 + 0.9 * (1 + math.cos(math.pi / 4)) / 2, 6),
        0.55, round(0.1 + 0.9 * (1 + math.cos(3 * math.pi / 4)) / 2, 6), 0.1, 0.1,
    ]
    # Clipping scales gradients by clip / (norm + 1e-6): with norm 5 the
    # first moment holds (1 - b1) * g / 5.
    params = {"a": jnp.zeros((1, 1)), "b": jnp.zeros((1,))}
    grads = {"a": jnp.array([[3.0]]), "b": jnp.array([4.0])}
    _, state = tandem_ref.adamw_step(params, grads, tandem_ref.adamw_init(params), config)
    np.testing.assert_allclose(state["opt.m.a"], [[0.1 * 3.0 / (5.0 + 1e-6)]], rtol=1e-6)


CHAIN = """module {
  func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %v: tensor<16x3xf32>) -> (tensor<4x3xf32>, tensor<4x16xf32>) {
    %h = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %g = nn.gelu %h : tensor<4x16xf32>
    %y = nn.matmul %g, %v : tensor<4x16xf32>, tensor<16x3xf32> -> tensor<4x3xf32>
    %t = nn.matmul %x, %x {transpose_lhs} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
    %s = nn.reduce_sum %t [0, 1] : tensor<8x8xf32> -> tensor<f32>
    return %y, %h : tensor<4x3xf32>, tensor<4x16xf32>
  }
}
"""


def test_chain_bound_follows_the_longest_path():
    """GEMMs of K = 8 then 16 along the path to %y (the transposed GEMM, K =
    4, and the unused sum are off it); "jax" adds the gelu's rounding."""
    u, lam = tolerance.U32, tolerance.LAMBDA
    gemms = lam * u * (math.sqrt(9) + math.sqrt(17))
    assert tolerance.chain_bound(CHAIN, "f", "native") == pytest.approx(gemms, rel=1e-12)
    assert tolerance.chain_bound(CHAIN, "f", "jax") == pytest.approx(gemms + lam * u, rel=1e-12)
    with_sum = CHAIN.replace("return %y, %h", "return %s, %h").replace(
        "-> (tensor<4x3xf32>", "-> (tensor<f32>").replace(": tensor<4x3xf32>, tensor<4x16xf32>\n  }", ": tensor<f32>, tensor<4x16xf32>\n  }")
    # The transposed GEMM sums over the 4 rows; the sum over 64 elements.
    expected = lam * u * (math.sqrt(5) + math.sqrt(65))
    assert tolerance.chain_bound(with_sum, "f", "jax") == pytest.approx(expected, rel=1e-12)


def test_worst_case_bounds():
    u = tolerance.U32
    assert tolerance.gamma(127) == pytest.approx(127 * u / (1 - 127 * u))
    assert 7.5e-6 < tolerance.gamma(127) < 7.6e-6
    assert tolerance.mean_of_equal_terms_bound(128, 4) == pytest.approx(
        tolerance.gamma(4) + tolerance.gamma(127) + u)
    assert tolerance.from_spec("2.5e-6") == 2.5e-6
