"""tandem.from_jax: a Llama-style decoder written in plain JAX
(examples/python/llama.py), imported, compiled for 4 stages and trained 10
AdamW steps on the CPU target, against the same training done by JAX
itself: every step's loss and every trained parameter, within bounds
derived from the arithmetic (test_adamw_steps.AdamWBounds), and the
trained parameters come back as the user's pytree."""

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import harness
import tandem
import tandem_ref
import tolerance
from test_adamw_steps import CONFIG, OPTIMIZER, STEPS, AdamWBounds, global_norm

sys.path.insert(0, str(harness.SOURCE_DIR / "examples" / "python"))
import llama  # noqa: E402

MICROBATCHES = 2


@pytest.fixture(scope="module")
def imported():
    config = llama.Config()
    params = llama.init(jax.random.PRNGKey(0), config)
    return config, params, tandem.from_jax(llama.loss_fn, params, *llama.example_batch(config))


def test_parameters_are_named_by_pytree_paths(imported):
    _, params, model = imported
    paths = [
        "/".join(str(getattr(k, "key", getattr(k, "idx", k))) for k in path)
        for path, _ in jax.tree_util.tree_flatten_with_path(params)[0]
    ]
    assert sorted(model.parameter_names) == sorted(paths)
    assert '@"blocks/2/wq"' in model.text and "@embed" in model.text
    # The untied head is its own parameter; stage markers survive.
    assert model.text.count("nn.stage_end") == llama.Config().layers
    for name, value in model.initial.items():
        leaf = params
        for key in name.split("/"):
            leaf = leaf[int(key)] if isinstance(leaf, list) else leaf[key]
        np.testing.assert_array_equal(value, np.asarray(leaf))


def test_llama_trains_like_jax(imported, corpus, tmp_path):
    config, params, model = imported
    pipeline = tandem.compile(
        model, stages=4, microbatches=MICROBATCHES, schedule="1f1b", optimizer=OPTIMIZER, out=tmp_path / "out"
    )
    assert sorted(pipeline.memory) == [0, 1, 2, 3] and all(v > 0 for v in pipeline.memory.values())
    assert pipeline.simulated_step > 0
    assert pipeline.timeline().lstrip().startswith("<")
    history = pipeline.train(data=corpus, steps=STEPS, progress=False)
    assert [row["step"] for row in history] == list(range(STEPS))
    losses = [row["loss"] for row in history]

    # The step inputs tandem-run trained on: the evaluator runs the same
    # program on the same batches and saves them.
    inputs_file = tmp_path / "inputs.safetensors"
    evaluated = harness.run(
        "tandem-eval", pipeline.program / "pipeline.mlir", "--train", "--program", "pipeline",
        "--steps", STEPS, "--data", corpus, "--params", pipeline.directory / "start.safetensors",
        "--save-inputs", inputs_file,
    )
    eval_losses = harness.parse_step_losses(evaluated.stdout)
    batches = tandem_ref.load_params(inputs_file)

    # JAX trains the same model by Tandem's names (the pytree rebuilt from
    # them), with the hand-written AdamW, from the same initial values.
    named = {n: jnp.asarray(v) for n, v in model.initial.items()}
    state = tandem_ref.adamw_init(named)
    loss_and_grad = jax.jit(
        jax.value_and_grad(lambda p, t, y: llama.loss_fn(model.structured(p), t, y, config))
    )
    grad_path = tmp_path / "grad.mlir"
    harness.run("tandem-opt", pipeline.directory / "model.mlir", "--nn-autodiff", "-o", grad_path)
    text, grad_text = model.text, grad_path.read_text()
    # Tandem's CPU code and JAX each differ from the evaluator by their
    # bound, so from each other by the sum.
    bounds = AdamWBounds(
        tolerance.chain_bound(text, "forward", "jax") + tolerance.chain_bound(text, "forward", "native"),
        tolerance.chain_bound(grad_text, "forward_grad", "jax")
        + tolerance.chain_bound(grad_text, "forward_grad", "native"),
    )
    loss_errors, loss_bounds = [], []
    for k in range(STEPS):
        tokens = jnp.asarray(batches[f"step.{k}.input.0"], jnp.int32)
        targets = jnp.asarray(batches[f"step.{k}.input.1"], jnp.int32)
        assert tokens.shape == (MICROBATCHES * config.batch, config.seq)
        # The step's loss is the mean of its microbatches' means: the mean
        # over the whole step batch, which is what the JAX model computes.
        loss, grads = loss_and_grad(named, tokens, targets)
        loss_errors.append(abs(losses[k] - float(loss)) / abs(float(loss)))
        loss_bounds.append(bounds.loss(float(loss), global_norm(grads), named))
        assert abs(eval_losses[k] - losses[k]) <= bounds.forward * abs(losses[k]), (k, eval_losses[k], losses[k])
        named, state = tandem_ref.adamw_step(named, grads, state, CONFIG)
        bounds.add_step(grads, state)

    trained = pipeline.parameters()
    flat_trained = pipeline.parameters(named=True)
    errors, limits = {}, {}
    for name, value in named.items():
        errors[name] = harness.relative_error(flat_trained[name], np.asarray(value))
        limits[name] = bounds.parameter(name, value)
    worst = max(errors, key=lambda n: errors[n] / limits[n])
    harness.record(
        "llama-from-jax",
        f"{STEPS} adamw steps, 4 stages: max loss rel error {max(loss_errors):.3e} (bound {min(loss_bounds):.2e}); "
        f"worst param {worst} {errors[worst]:.3e} (bound {limits[worst]:.2e})",
    )
    assert all(e <= b for e, b in zip(loss_errors, loss_bounds)), list(zip(loss_errors, loss_bounds))
    bad = {n: (errors[n], limits[n]) for n in errors if not errors[n] <= limits[n]}
    assert not bad, bad
    assert losses[-1] < losses[0]

    # Back in Python as the user's pytree, each leaf the trained value.
    assert jax.tree_util.tree_structure(trained) == jax.tree_util.tree_structure(params)
    np.testing.assert_array_equal(trained["blocks"][1]["wq"], flat_trained["blocks/1/wq"])
    assert not np.array_equal(trained["blocks"][1]["wq"], np.asarray(params["blocks"][1]["wq"]))

    figure = pipeline.plot(tmp_path / "loss.png")
    assert (tmp_path / "loss.png").stat().st_size > 0 and figure is not None
