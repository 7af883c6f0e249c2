"""Tests of tolerance.py's bound on what narrow (bf16, f16) roundings do to
a loss (`narrow_loss_bound`, `logits_norm_bound`; the module docstring)."""

import math

import numpy as np
import pytest

import harness
import tolerance

# A token's embedding normalized, rounded to bf16 and multiplied by the
# (rounded) embedding: two narrow results depend on the inputs (the norm's
# cast and the product); the cast of the parameter does not.
SMALL = """module {
  func.func @forward(%arg0: tensor<4x3xi32>, %arg1: tensor<4x3xi32>) -> tensor<f32> {
    %0 = nn.param @wte : tensor<16x8xf32>
    %1 = nn.embedding %0, %arg0 : tensor<16x8xf32>, tensor<4x3xi32> -> tensor<4x3x8xf32>
    %2 = nn.param @ln.weight : tensor<8xf32>
    %3 = nn.param @ln.bias : tensor<8xf32>
    %4 = nn.layer_norm %1, %2, %3 {epsilon = 1.000000e-05 : f64} : tensor<4x3x8xf32>, tensor<8xf32>, tensor<8xf32>
    %5 = nn.cast %4 : tensor<4x3x8xf32> to tensor<4x3x8xbf16>
    %6 = nn.cast %0 : tensor<16x8xf32> to tensor<16x8xbf16>
    %7 = nn.matmul %5, %6 {transpose_rhs} : tensor<4x3x8xbf16>, tensor<16x8xbf16> -> tensor<4x3x16xbf16>
    %8 = nn.cast %7 : tensor<4x3x16xbf16> to tensor<4x3x16xf32>
    %9 = nn.cross_entropy %8, %arg1 : tensor<4x3x16xf32>, tensor<4x3xi32> -> tensor<f32>
    return %9 : tensor<f32>
  }
}
"""


def bf16(array):
    return np.vectorize(lambda x: tolerance.round_narrow(float(x), 8))(array)


def test_narrow_loss_bound_counts_the_inputs_results():
    s, lam, n, m, r = 2.0**-7, tolerance.LAMBDA, 2, 12, 1.5
    expected = lam * s * r * math.sqrt(n / (2 * m)) + lam**2 * math.sqrt(2) * s * r / (3 * m)
    assert tolerance.narrow_loss_bound(SMALL, "forward", m, r) == pytest.approx(expected, rel=1e-12)
    f32 = SMALL.replace("xbf16", "xf32")
    assert tolerance.narrow_loss_bound(f32, "forward", m, r) == 0.0
    # Without its narrow roundings an f32 function's bound is the same.
    assert tolerance.chain_bound(f32, "forward", "cuda", narrow=False) == tolerance.chain_bound(f32, "forward", "cuda")
    without = tolerance.chain_bound(SMALL, "forward", "cuda", narrow=False)
    assert without < 1e-5 < tolerance.chain_bound(SMALL, "forward", "cuda")


@pytest.mark.parametrize("change", [
    ("{transpose_rhs}", "{transpose_lhs}"),  # sums over the sequences
    ("return %9 : tensor<f32>", "return %4 : tensor<4x3x8xf32>"),  # not the loss
    ("%6 = nn.cast %0", "%6 = nn.neg %0"),  # from parameters alone
    ("%8 = nn.cast %7", "%8 = nn.softmax %7 {axis = 0 : i64}"),  # along the sequences
])
def test_narrow_loss_bound_refuses_what_it_does_not_model(change):
    with pytest.raises(ValueError):
        tolerance.narrow_loss_bound(SMALL.replace(*change), "forward", 12, 1.0)


@pytest.mark.parametrize("heads, dtype, expected", [
    (2, "bf16", True),  # heads of 32
    (4, "f16", True),  # heads of 16
    (8, "bf16", False),  # heads of 8: the CUDA-core kernel
    (1, "bf16", False),  # one head of 144, wider than 128
    (2, "f32", False),  # f32 never runs on the tensor cores
])
def test_tensor_core_attention_is_the_cuda_targets_choice(heads, dtype, expected):
    width = 64 if heads != 1 else 144
    t = "tensor<2x5x%dx%s>" % (width, dtype)
    shapes = [(2, 5, width)] * 3
    assert tolerance._tensor_core_attention(
        "attention", "{causal, heads = %d : i64}" % heads, shapes, "%s, %s, %s" % (t, t, t)) == expected
    assert tolerance._tensor_core_attention(
        "attention_grad", "{heads = %d : i64}" % heads, shapes, "%s, %s, %s" % (t, t, t)) == expected
    assert not tolerance._tensor_core_attention(
        "softmax", "{heads = %d : i64}" % heads, shapes, "%s, %s, %s" % (t, t, t))


def test_sigma_max_bound_is_above_and_near_the_largest_singular_value():
    rng = np.random.default_rng(3)
    for rows, cols in ((256, 32), (32, 256), (7, 5), (20, 20)):
        a = rng.standard_normal((rows, cols)) * rng.uniform(0.01, 3)
        sigma = np.linalg.svd(a, compute_uv=False)[0]
        bound = tolerance.sigma_max_bound(list(a.ravel()), rows, cols)
        assert sigma <= bound <= sigma * 32 ** (1 / 256)


def test_logits_norm_bound_holds_for_any_input():
    """Every position's logits, computed as the function computes them
    (bf16 where it rounds), are within R; the worst input direction nearly
    reaches it."""
    rng = np.random.default_rng(5)
    wte = rng.standard_normal((16, 8)) * 0.3
    gamma, beta = rng.uniform(-2, 2, 8), rng.standard_normal(8) * 0.2
    params = {"wte": ((16, 8), list(wte.ravel())), "ln.weight": ((8,), list(gamma)), "ln.bias": ((8,), list(beta))}
    bound = tolerance.logits_norm_bound(SMALL, "forward", params)
    w = bf16(wte)
    x = rng.standard_normal((1000, 8)) * rng.uniform(0.1, 10, (1000, 1))
    x_hat = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    z = bf16(bf16(x_hat * gamma + beta) @ w.T)
    assert np.linalg.norm(z, axis=1).max() <= bound
    top = np.linalg.svd(w, compute_uv=False)[0]
    assert bound <= 1.02 * top * (abs(gamma).max() * math.sqrt(8) + np.linalg.norm(beta))


def test_tiny_gpt_in_bf16(tmp_path):
    """106 bf16 results of the tiny GPT's @forward depend on its tokens; its
    initial logits are within 2.45 (docs/cuda-backend.md, "Training in
    emulation")."""
    harness.run("tandemc", harness.EXAMPLES / "tiny-gpt.mlir", "--precision", "bf16",
                "--emit=precision", "-o", tmp_path / "bf16.mlir")
    harness.run("tandem-eval", harness.EXAMPLES / "tiny-gpt.mlir", "--seed", 3, "--save-params", tmp_path / "p.st")
    text = (tmp_path / "bf16.mlir").read_text()
    n, bits, _ = tolerance._narrow_sites(tolerance.function_text(text, "forward"))
    assert (n, bits) == (106, 8)
    # Against the CUDA target: its tensor-core attention (heads of 16 in
    # bf16) also rounds each attention's probabilities.
    body = tolerance.function_text(text, "forward")
    attentions = body.count("nn.attention ")
    assert attentions > 0
    assert tolerance._narrow_sites(body, tensor_cores=True)[0] == 106 + attentions
    r = tolerance.logits_norm_bound(text, "forward", tolerance.read_params(tmp_path / "p.st"))
    assert 2.43 < r < 2.46
    assert tolerance.narrow_loss_bound(text, "forward", 64, r) == pytest.approx(0.0534, rel=1e-2)
