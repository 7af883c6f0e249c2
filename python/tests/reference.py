"""Glue between tandem-eval's files and the hand-written JAX models."""

import jax
import jax.numpy as jnp
import numpy as np

import harness
import tandem_ref


def model_kind(mlir_text):
    return "gpt" if "nn.attention" in mlir_text else "mlp"


def loss_function(mlir_text):
    """f(params, *inputs) -> scalar loss, for the model `mlir_text` declares."""
    if model_kind(mlir_text) == "gpt":
        config = tandem_ref.GPTConfig(
            heads=harness.attention_heads(mlir_text),
            layer_norm_eps=harness.layer_norm_epsilon(mlir_text),
        )
        return lambda params, tokens, targets: tandem_ref.gpt_loss(params, tokens, targets, config)
    return tandem_ref.mlp_loss


def model_params(arrays, mlir_text):
    """The model's parameters (declaration order, optimizer state left out)
    as float32 jax arrays; checks names and shapes against the module."""
    out = {}
    for name, shape in harness.parameter_declarations(mlir_text):
        if name.startswith("opt."):
            continue
        assert name in arrays, f"parameter {name} missing from the saved file"
        assert tuple(arrays[name].shape) == shape, f"{name}: {arrays[name].shape} vs {shape}"
        out[name] = jnp.asarray(arrays[name], dtype=jnp.float32)
    return out


def as_input(array, integer):
    return jnp.asarray(array, dtype=jnp.int32 if integer else jnp.float32)


def inputs_from_file(arrays, prefix="input."):
    """[input.0, input.1, ...] from a --save-inputs file."""
    count = 0
    while f"{prefix}{count}" in arrays:
        count += 1
    assert count > 0, f"no '{prefix}0' in the saved inputs ({sorted(arrays)[:5]} ...)"
    out = []
    for i in range(count):
        a = arrays[f"{prefix}{i}"]
        out.append(as_input(a, np.issubdtype(a.dtype, np.integer)))
    return out


def echoed_inputs(model_path, eval_args, workdir, function="forward"):
    """The inputs tandem-eval gives `function` with `eval_args`, read back
    through a copy of the model whose function also returns its inputs
    (see harness.echo_inputs_module). Returns (loss, inputs)."""
    text = model_path.read_text()
    echo = workdir / f"echo-{model_path.name}"
    echo.write_text(harness.echo_inputs_module(text, function))
    done = harness.run("tandem-eval", echo, *eval_args, "--function", function, "--print-outputs")
    results = harness.parse_printed_results(done.stdout)
    types = harness.printed_result_types(done.stdout)
    loss = float(results[0].reshape(()))
    inputs = [
        as_input(results[i], harness.is_integer_type(types[i])) for i in range(1, len(results))
    ]
    return loss, inputs


def evaluate(model_path, eval_args, workdir, function="forward"):
    """Runs tandem-eval; returns (its loss, params as numpy, inputs, how the
    inputs were obtained)."""
    params_file = workdir / "params.safetensors"
    extra = ["--save-params", params_file]
    inputs_file = workdir / "inputs.safetensors"
    if harness.eval_has("save-inputs"):
        extra += ["--save-inputs", inputs_file]
    done = harness.run("tandem-eval", model_path, *eval_args, "--function", function, *extra)
    loss = harness.parse_loss(done.stdout)
    params = tandem_ref.load_params(params_file)
    if harness.eval_has("save-inputs"):
        inputs = inputs_from_file(tandem_ref.load_params(inputs_file))
        how = "--save-inputs"
    else:
        echo_loss, inputs = echoed_inputs(model_path, eval_args, workdir, function)
        assert echo_loss == loss, (
            f"the echo copy of the model computed loss {echo_loss}, the model {loss}: "
            "the echoed inputs are not the model's inputs"
        )
        how = "echoed through a copy of the function that returns its inputs"
    return loss, params, inputs, how


def jax_loss_and_grads(mlir_text, params, inputs):
    f = loss_function(mlir_text)
    loss, grads = jax.value_and_grad(f)(params, *inputs)
    return float(loss), grads


def perturbed_params_file(model_path, workdir, scale=0.2, seed=1234):
    """A safetensors file written from Python: the model's seed-0 parameters
    plus N(0, scale^2) noise. At initialization GPT-2's small projections
    make attention nearly uniform and the loss nearly blind to the
    architecture; perturbed parameters make every part of the model count.
    Returns (path, name -> numpy array)."""
    initial = workdir / "initial.safetensors"
    harness.run("tandem-eval", model_path, "--seed", 0, "--save-params", initial)
    rng = np.random.default_rng(seed)
    changed = {
        name: (a + scale * rng.standard_normal(a.shape)).astype(np.float32)
        for name, a in tandem_ref.load_params(initial).items()
    }
    path = workdir / "perturbed.safetensors"
    tandem_ref.save_params(changed, path)
    return path, changed
