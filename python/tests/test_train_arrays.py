"""Compiled.train on arrays: a regression model from JAX whose inputs are
float features and float targets (no token stream) trains as a 2-stage
pipeline on arrays given as a list, an .npz file and a safetensors file.
The first step's loss is JAX's on the first step batch within the
forward bound; step k reads batch k mod n, so a run of n + 1 steps sees
batch 0 again; the loss falls; and malformed arrays are refused before
anything runs."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from safetensors.numpy import save_file

import tandem
import tolerance

ROWS, FEATURES, HIDDEN = 8, 6, 16
MICROBATCHES = 2
STEP_ROWS = ROWS * MICROBATCHES


def loss_fn(p, x, y):
    h = tandem.stage_end(jnp.tanh(x @ p["w1"] + p["b1"]))
    return jnp.mean(jnp.square(h @ p["w2"] - y))


def _data(batches, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batches * STEP_ROWS, FEATURES)).astype(np.float32)
    y = np.sin(x[:, :2] @ np.array([[1.0], [-0.5]], np.float32)).astype(np.float32)
    return x, y


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    params = {
        "w1": jax.random.normal(keys[0], (FEATURES, HIDDEN)) * 0.5,
        "b1": jnp.zeros((HIDDEN,)),
        "w2": jax.random.normal(keys[1], (HIDDEN, 1)) * 0.25,
    }
    example = (jnp.zeros((ROWS, FEATURES)), jnp.zeros((ROWS, 1)))
    model = tandem.from_jax(loss_fn, params, *example)
    out = tmp_path_factory.mktemp("arrays")
    return params, model, tandem.compile(model, stages=2, microbatches=MICROBATCHES,
                                         optimizer="optimizer=adamw lr=0.01", out=out / "out")


def test_trains_on_arrays_and_cycles_through_them(compiled, tmp_path):
    params, model, pipeline = compiled
    batches = 4
    x, y = _data(batches)
    history = pipeline.train(data=[x, y], steps=40, progress=False)
    losses = [row["loss"] for row in history]
    # Step 0 is batch 0 at the initial parameters: JAX's loss there (the
    # microbatch means averaged: the mean over the step batch).
    expected = float(loss_fn(params, x[:STEP_ROWS], y[:STEP_ROWS]))
    bound = tolerance.chain_bound(model.text, "forward", "jax") + tolerance.chain_bound(model.text, "forward", "native")
    assert abs(losses[0] - expected) <= bound * expected, (losses[0], expected, bound)
    assert np.mean(losses[-4:]) < 0.5 * np.mean(losses[:4]), losses

    # The same run from an .npz and from a safetensors file: the same losses.
    npz = tmp_path / "data.npz"
    np.savez(npz, x, y)
    assert [row["loss"] for row in pipeline.train(data=npz, steps=40, progress=False)] == losses
    st = tmp_path / "data.safetensors"
    save_file({"input.0": x, "input.1": y}, str(st))
    assert [row["loss"] for row in pipeline.train(data=st, steps=40, progress=False)] == losses


def test_step_k_reads_batch_k_mod_n(compiled):
    _, _, pipeline = compiled
    x, y = _data(3, seed=1)
    one = pipeline.train(data=[x, y], steps=4, progress=False)
    # With the data repeated twice (6 batches), steps 0-3 read the same
    # batches: the same losses. With batch 0 alone repeated the run differs.
    twice = pipeline.train(data=[np.concatenate([x, x]), np.concatenate([y, y])], steps=4, progress=False)
    assert [r["loss"] for r in one] == [r["loss"] for r in twice]
    other = pipeline.train(data=[np.concatenate([x[:STEP_ROWS]] * 3), np.concatenate([y[:STEP_ROWS]] * 3)],
                           steps=4, progress=False)
    assert [r["loss"] for r in other][0] == one[0]["loss"]
    assert [r["loss"] for r in other] != [r["loss"] for r in one]


@pytest.mark.parametrize(
    "arrays, message",
    [
        (lambda x, y: [x], "no array for input.1"),
        (lambda x, y: [x[:-1], y[:-1]], "multiple of 16"),
        (lambda x, y: [x, y[:STEP_ROWS]], "step batches"),
        (lambda x, y: [x.astype(np.int32), y], "the model takes float32"),
        (lambda x, y: [x, y, y], "not inputs of the program"),
    ],
)
def test_malformed_arrays_are_refused(compiled, arrays, message):
    _, _, pipeline = compiled
    x, y = _data(2)
    with pytest.raises(tandem.ToolError, match=message):
        pipeline.train(data=arrays(x, y), steps=1, progress=False)
