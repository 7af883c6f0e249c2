"""Every gradient of @forward_grad (nn-autodiff, evaluated by tandem-eval)
equals jax.grad of the hand-written JAX model, tensor by tensor:
||tandem - jax|| / ||jax|| within the bound tolerance.py derives from
@forward_grad's arithmetic (its reductions along the longest path, forward
and backward)."""

import numpy as np
import pytest

import harness
import reference
import tandem_ref
import tolerance
import upstream


def check_gradients(model_path, eval_args, tmp_path, key):
    grad_module = upstream.autodiff(model_path, tmp_path / "grad.mlir")
    upstream.require_eval_flags("save-outputs", "save-inputs")
    assert "func.func @forward_grad" in grad_module

    outputs_file = tmp_path / "outputs.safetensors"
    params_file = tmp_path / "params.safetensors"
    inputs_file = tmp_path / "inputs.safetensors"
    harness.run(
        "tandem-eval", tmp_path / "grad.mlir", *eval_args, "--function", "forward_grad",
        "--save-outputs", outputs_file, "--save-params", params_file,
        "--save-inputs", inputs_file,
    )
    outputs = tandem_ref.load_params(outputs_file)
    text = model_path.read_text()
    params = reference.model_params(tandem_ref.load_params(params_file), text)
    inputs = reference.inputs_from_file(tandem_ref.load_params(inputs_file))
    jax_loss, jax_grads = reference.jax_loss_and_grads(text, params, inputs)

    # @forward_grad returns the loss and one gradient per parameter it reads,
    # named by nn.gradients; every parameter of these models is read.
    listed = harness.function_result_names(grad_module, "nn.gradients", "forward_grad")
    assert listed == list(params), f"nn.gradients {listed} is not the parameter order {list(params)}"
    assert "loss" in outputs, f"no 'loss' in --save-outputs ({sorted(outputs)[:6]} ...)"
    loss_error = abs(float(outputs["loss"]) - jax_loss) / abs(jax_loss)

    errors = {}
    for name in params:
        assert f"grad.{name}" in outputs, f"no grad.{name} in --save-outputs"
        errors[name] = harness.relative_error(outputs[f"grad.{name}"], np.asarray(jax_grads[name]))
    worst = max(errors, key=errors.get)
    bound = tolerance.chain_bound(grad_module, "forward_grad", "jax")
    loss_bound = tolerance.chain_bound(text, "forward", "jax")
    harness.record(
        key,
        f"max gradient rel error {errors[worst]:.3e} ({worst}; bound {bound:.2e}); "
        f"loss rel error {loss_error:.3e} (bound {loss_bound:.2e}); {len(errors)} gradients",
    )
    bad = {n: e for n, e in errors.items() if not e <= bound}
    assert loss_error <= loss_bound, f"loss {float(outputs['loss'])} vs JAX {jax_loss}"
    assert not bad, f"gradients off by more than {bound:.2e} (relative): " + ", ".join(
        f"{n} {e:.3e}" for n, e in sorted(bad.items(), key=lambda kv: -kv[1])
    )


@pytest.mark.parametrize("params", ["initial", "perturbed"])
def test_mlp_gradients(mlp_mlir, tmp_path, params):
    args = ["--seed", 0]
    if params == "perturbed":
        args += ["--params", reference.perturbed_params_file(mlp_mlir, tmp_path)[0]]
    check_gradients(mlp_mlir, args, tmp_path, f"tiny-mlp gradients ({params} params)")


@pytest.mark.parametrize("params", ["initial", "perturbed"])
def test_gpt_gradients(gpt_mlir, corpus, tmp_path, params):
    args = ["--seed", 0, "--data", corpus, "--batch-index", 0]
    if params == "perturbed":
        args += ["--params", reference.perturbed_params_file(gpt_mlir, tmp_path)[0]]
    check_gradients(gpt_mlir, args, tmp_path, f"tiny-gpt gradients ({params} params)")


@pytest.mark.parametrize("model", ["tiny-gpt.mlir", "tiny-mlp.mlir"])
def test_jax_gradient_matches_tandem_finite_difference(model, corpus, tmp_path):
    """Runs today, before nn-autodiff: jax.grad of the hand-written model
    against a central difference of tandem-eval's own loss (--f64) along a
    random direction: (L(p + h d) - L(p - h d)) vs <grad, 2 h d>."""
    model_path = harness.EXAMPLES / model
    text = model_path.read_text()
    base_file, base = reference.perturbed_params_file(model_path, tmp_path, scale=0.1)
    rng = np.random.default_rng(7)
    h = 2e-4
    plus, minus = {}, {}
    for name, a in base.items():
        d = rng.standard_normal(a.shape)
        plus[name] = (a + h * d).astype(np.float32)
        minus[name] = (a - h * d).astype(np.float32)
    data = ["--data", corpus, "--batch-index", 1] if "gpt" in model else []
    losses = []
    for label, values in (("plus", plus), ("minus", minus)):
        path = tmp_path / f"{label}.safetensors"
        tandem_ref.save_params(values, path)
        done = harness.run("tandem-eval", model_path, "--params", path, "--f64", "--seed", 2, *data)
        losses.append(harness.parse_loss(done.stdout))
    _, arrays, inputs, _ = reference.evaluate(model_path, ["--params", base_file, "--seed", 2, *data], tmp_path)
    _, grads = reference.jax_loss_and_grads(text, reference.model_params(arrays, text), inputs)
    # The actual step between the two f32 parameter sets, in f64.
    predicted = sum(
        float(np.sum(np.asarray(grads[n], np.float64) * (plus[n].astype(np.float64) - minus[n])))
        for n in base
    )
    measured = losses[0] - losses[1]
    error = abs(measured - predicted) / abs(predicted)
    # The f64 losses are exact to ~1e-16 and the central difference's
    # truncation error is O(h^2) = 4e-8 relative, so what differs is jax.grad's
    # f32 error dg, with ||dg|| <= d ||g|| (d: the bound on the gradient
    # function's arithmetic). Projected on the step: |<dg, step>| <=
    # d ||g|| ||step|| (Cauchy-Schwarz), relative to |<g, step>|.
    grad_text = upstream.autodiff(model_path, tmp_path / "grad.mlir")
    step_norm = np.sqrt(sum(float(np.sum((plus[n].astype(np.float64) - minus[n]) ** 2)) for n in base))
    grad_norm = np.sqrt(sum(float(np.sum(np.asarray(grads[n], np.float64) ** 2)) for n in base))
    bound = (tolerance.chain_bound(grad_text, "forward_grad", "jax") * grad_norm * step_norm
             / abs(predicted) + h * h)
    print(f"{model}: finite difference {measured:.9g}, <jax grad, step> {predicted:.9g}, "
          f"rel {error:.2e} (bound {bound:.2e})")
    assert error <= bound, f"finite difference {measured} vs jax.grad {predicted}: {error:.2e} > {bound:.2e}"
