"""tandem.from_jax: a Llama-style decoder written in plain JAX
(examples/python/llama.py), imported, compiled for 4 stages and trained 10
AdamW steps on the CPU target, against the same training done by JAX
itself: every step's loss and every trained parameter, within bounds
derived from the arithmetic (test_adamw_steps.AdamWBounds), and the
trained parameters come back as the user's pytree. Twice: with attention
written out, and through jax.nn.dot_product_attention (the fused
nn.attention with kv_heads)."""

import re
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


# Attention written out (jnp.repeat, einsum, softmax: imported op by op)
# and through jax.nn.dot_product_attention (one fused nn.attention with
# kv_heads per layer, decomposed again by the CPU target's autodiff).
@pytest.fixture(scope="module", params=[False, True], ids=["written-out", "dot-product-attention"])
def imported(request):
    config = llama.Config(dot_product_attention=request.param)
    params = llama.init(jax.random.PRNGKey(0), config)
    model = tandem.from_jax(
        lambda p, tokens, targets: llama.loss_fn(p, tokens, targets, config), params, *llama.example_batch(config)
    )
    return config, params, model


def test_attention_imports_fused_only_from_dot_product_attention(imported):
    config, _, model = imported
    fused = model.text.count("nn.attention ")
    if config.dot_product_attention:
        assert fused == config.layers
        assert model.text.count(f"kv_heads = {config.kv_heads} : i64") == config.layers
    else:
        assert fused == 0


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


def test_grouped_query_attention_trains_in_cuda_emulation(corpus, tmp_path):
    """The Llama decoder with jax.nn.dot_product_attention compiled for the
    cuda target and run in emulation (tandemc --cuda-emulate: the generated
    CUDA kernels on the host, docs/cuda-backend.md): the fused attention
    kernels with kv_heads, forward and backward, train 3 AdamW steps on 1
    and on 4 stages with bitwise the same losses and parameters, and the
    first loss is JAX's on the same batch within the CUDA kernels' bound
    plus XLA's."""
    config = llama.Config(dot_product_attention=True)
    params = llama.init(jax.random.PRNGKey(0), config)
    model = tandem.from_jax(
        lambda p, tokens, targets: llama.loss_fn(p, tokens, targets, config), params, *llama.example_batch(config)
    )
    runs = {}
    for stages in (1, 4):
        pipeline = tandem.compile(
            model, stages=stages, microbatches=MICROBATCHES, schedule="1f1b", optimizer=OPTIMIZER,
            target="cuda", extra_args=["--cuda-emulate"], out=tmp_path / f"s{stages}",
        )
        history = pipeline.train(data=corpus, steps=3, progress=False)
        runs[stages] = ([row["loss"] for row in history], pipeline.parameters(named=True), pipeline)
    # Every layer's attention and its gradient are the fused ops with
    # kv_heads on some rank, and the ranks' kernels take the grouped shape
    # (batch, heads, kv_heads, ...) from the unit's table.
    fused = grads = 0
    for rank in range(4):
        text = (runs[4][2].program / f"rank{rank}.mlir").read_text()
        fused += len(re.findall(rf"nn\.attention .*kv_heads = {config.kv_heads} : i64", text))
        grads += len(re.findall(rf"nn\.attention_grad .*kv_heads = {config.kv_heads} : i64", text))
        if "nn.attention " in text:
            source = (runs[4][2].program / f"rank{rank}.cu").read_text()
            assert f"{{{config.batch}, {config.heads}, {config.kv_heads}, {config.seq}, " in source
            assert "tk_attention_grad_keys<" in source
    assert fused == grads == config.layers
    assert runs[1][0] == runs[4][0]
    assert runs[1][1].keys() == runs[4][1].keys()
    for name in runs[1][1]:
        np.testing.assert_array_equal(runs[1][1][name], runs[4][1][name], err_msg=name)
    assert runs[1][0][-1] < runs[1][0][0]

    # The first step's batch, as tandem-run read it, and JAX's loss on it
    # from the same initial values.
    inputs_file = tmp_path / "inputs.safetensors"
    pipeline = runs[1][2]
    harness.run(
        "tandem-eval", pipeline.program / "pipeline.mlir", "--train", "--program", "pipeline",
        "--steps", 1, "--data", corpus, "--params", pipeline.directory / "start.safetensors",
        "--save-inputs", inputs_file,
    )
    batch = tandem_ref.load_params(inputs_file)
    tokens = jnp.asarray(batch["step.0.input.0"], jnp.int32)
    targets = jnp.asarray(batch["step.0.input.1"], jnp.int32)
    named = {n: jnp.asarray(v) for n, v in model.initial.items()}
    expected = float(llama.loss_fn(model.structured(named), tokens, targets, config))
    bound = tolerance.chain_bound(model.text, "forward", "cuda") + tolerance.chain_bound(model.text, "forward", "jax")
    error = abs(runs[1][0][0] - expected) / abs(expected)
    harness.record("llama-gqa-cuda-emulated", f"first loss rel error vs JAX {error:.3e} (bound {bound:.2e})")
    assert error <= bound, (error, bound)
