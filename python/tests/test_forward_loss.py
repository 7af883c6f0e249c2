"""tandem-eval's loss equals the hand-written JAX model's loss on the same
parameters (saved by tandem-eval) and the same inputs."""

import numpy as np
import pytest

import harness
import reference
import tandem_ref
import tolerance


def check_loss(model_path, eval_args, tmp_path, key):
    text = model_path.read_text()
    tandem_loss, arrays, inputs, how = reference.evaluate(model_path, eval_args, tmp_path)
    params = reference.model_params(arrays, text)
    jax_loss = float(reference.loss_function(text)(params, *inputs))
    error = abs(tandem_loss - jax_loss) / abs(jax_loss)
    # XLA computes every op of @forward in f32, in its own order; the bound
    # sums the model's reductions along its longest path (tolerance.py).
    bound = tolerance.chain_bound(text, "forward", "jax")
    harness.record(
        key,
        f"loss rel error {error:.3e} (bound {bound:.2e}; tandem {tandem_loss:.9g}, "
        f"jax {jax_loss:.9g}; inputs {how})",
    )
    assert error <= bound, (
        f"tandem-eval loss {tandem_loss} vs JAX {jax_loss}: relative error {error:.3e} > {bound:.3e}"
    )


@pytest.mark.parametrize("batch_index", [0, 7])
def test_gpt_loss_on_text(gpt_mlir, corpus, tmp_path, batch_index):
    args = ["--seed", 0, "--data", corpus, "--batch-index", batch_index]
    check_loss(gpt_mlir, args, tmp_path, f"tiny-gpt forward (batch {batch_index})")


def test_gpt_loss_held_out(gpt_mlir, corpus, tmp_path):
    args = ["--seed", 3, "--data", corpus, "--split", "held-out", "--batch-index", 1]
    check_loss(gpt_mlir, args, tmp_path, "tiny-gpt forward (held-out)")


@pytest.mark.parametrize("seed", [0, 11])
def test_mlp_loss(mlp_mlir, tmp_path, seed):
    check_loss(mlp_mlir, ["--seed", seed], tmp_path, f"tiny-mlp forward (seed {seed})")


@pytest.mark.parametrize("model", ["tiny-gpt.mlir", "tiny-mlp.mlir"])
def test_loss_with_params_written_by_jax(model, corpus, tmp_path):
    """The other direction: parameters saved from Python (perturbed, so the
    whole model matters; see reference.perturbed_params_file) are loaded by
    tandem-eval --params and give JAX's loss."""
    model_path = harness.EXAMPLES / model
    params_file, changed = reference.perturbed_params_file(model_path, tmp_path)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    args = ["--params", params_file, "--seed", 4]
    if model == "tiny-gpt.mlir":
        args += ["--data", corpus, "--batch-index", 2]
    check_loss(model_path, args, run_dir, f"{model[:-5]} forward (perturbed params)")
    loaded = tandem_ref.load_params(run_dir / "params.safetensors")
    for name in changed:
        np.testing.assert_array_equal(loaded[name], changed[name])
