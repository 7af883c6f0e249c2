"""Ten AdamW steps: tandem-opt --nn-autodiff --nn-optimizer=adamw trained by
tandem-eval --train, against jax.grad + the hand-written AdamW on the same
batches. Per-step losses and final parameters agree within the bounds
`adamw_bounds` derives (except the attention key bias, whose gradient is
exactly zero in exact arithmetic: see split_key_bias)."""

import json

import jax
import numpy as np

import harness
import reference
import tandem_ref
import tolerance
import upstream

STEPS = 10
LR = 3e-3
WEIGHT_DECAY = 0.1
OPTIMIZER = f"optimizer=adamw lr={LR} weight-decay={WEIGHT_DECAY}"
CONFIG = tandem_ref.AdamWConfig(lr=LR, weight_decay=WEIGHT_DECAY)


class AdamWBounds:
    """Tolerances for T AdamW steps taken by tandem-eval and by JAX.

    Step t moves p by lr * m_hat / (s + eps) (+ the decay, computed from p
    alike on both sides), s = sqrt(v_hat). Let e bound the absolute error of
    one gradient element: tolerance.chain_bound's relative bound d on
    @forward_grad times the tensor's root-mean-square gradient (a reduction's
    rounding error scales with its terms, not with its result). m_hat is a
    convex combination of the gradients, so it is off by at most e; v_hat is
    one of their squares, off by at most 2 e s (Cauchy-Schwarz), so s is off
    by at most e. To first order the element's update is then off by
    lr * e (1 + |m_hat| / (s + eps)) / (s + eps), and never by more than two
    of AdamW's largest steps, 2 * lr * 3.17 ((1 - b1) / sqrt(1 - b2): Kingma
    and Ba, 2015, section 2.1). The norms of these elementwise bounds add up
    over the steps, plus one rounding of p per step and side (2 T u ||p_T||).
    Differences of the parameters feed back into later gradients only at
    second order.

    A step's loss differs by the forward bound plus the effect of the
    parameters' difference, |<g, dp>| <= ||g|| ||dp|| (Cauchy-Schwarz),
    relative to the loss."""

    def __init__(self, forward_bound, gradient_bound):
        self.forward = forward_bound
        self.gradient = gradient_bound
        self.drift = {}  # name -> sum over steps of ||elementwise update bound||
        self.steps = 0

    def add_step(self, grads, state):
        """Step `self.steps` with these gradients, `state` the moments after it."""
        t = self.steps
        self.steps += 1
        b1, b2, eps, lr = CONFIG.beta1, CONFIG.beta2, CONFIG.eps, CONFIG.lr
        largest = 2 * (1 - b1) / np.sqrt(1 - b2)
        for name, g in grads.items():
            g = np.asarray(g, np.float64)
            e = self.gradient * float(np.sqrt(np.mean(g * g)))
            m_hat = np.asarray(state[f"opt.m.{name}"], np.float64) / (1 - b1 ** (t + 1))
            s = np.sqrt(np.asarray(state[f"opt.v.{name}"], np.float64) / (1 - b2 ** (t + 1)))
            bound = np.minimum(e * (1 + np.abs(m_hat) / (s + eps)) / (s + eps), largest)
            # Gradients that were exactly zero at every step so far (embedding
            # rows of tokens no batch held) are exact on both sides.
            bound = np.where(s == 0, 0.0, bound)
            self.drift[name] = self.drift.get(name, 0.0) + lr * float(np.linalg.norm(bound))

    def parameter(self, name, final):
        norm = float(np.linalg.norm(np.asarray(final, np.float64)))
        absolute = self.drift.get(name, 0.0) + 2 * self.steps * tolerance.U32 * norm
        return absolute / norm if norm else absolute

    def loss(self, loss, gradient_norm, parameters):
        difference = np.sqrt(
            sum((self.parameter(n, p) * np.linalg.norm(np.asarray(p, np.float64))) ** 2
                for n, p in parameters.items())
        )
        return self.forward + gradient_norm * difference / abs(loss)


def global_norm(grads):
    return float(np.sqrt(sum(float(np.sum(np.asarray(g, np.float64) ** 2)) for g in grads.values())))


def split_key_bias(name, value):
    """The key third of an attention c_attn bias has a gradient of exactly
    zero in exact arithmetic (softmax ignores a constant added to every
    score of a row), so both sides compute rounding noise for it and AdamW,
    which normalizes the gradient, turns that noise into steps of about lr.
    Returns (comparable part, key-bias part or None)."""
    if not name.endswith(".attn.c_attn.bias"):
        return value, None
    d = value.shape[-1] // 3
    return np.concatenate([value[..., :d], value[..., 2 * d:]], axis=-1), value[..., d:2 * d]


def check_training(model_path, data_args, tmp_path, key):
    upstream.autodiff(model_path, tmp_path / "grad.mlir")
    train_module = upstream.optimizer(tmp_path / "grad.mlir", tmp_path / "train.mlir", OPTIMIZER)
    upstream.require_eval_flags("train", "steps", "save-inputs")
    assert "func.func @train_step" in train_module
    text = model_path.read_text()

    # The starting point: the same module's parameters from their
    # initializers with the same seed (optimizer state: zeros).
    initial_file = tmp_path / "initial.safetensors"
    harness.run("tandem-eval", tmp_path / "train.mlir", "--seed", 0, "--save-params", initial_file)
    final_file = tmp_path / "final.safetensors"
    inputs_file = tmp_path / "inputs.safetensors"
    log_args = []
    if harness.eval_has("log-json"):
        log_args = ["--log-json", tmp_path / "log.json"]
    done = harness.run(
        "tandem-eval", tmp_path / "train.mlir", "--train", "--steps", STEPS, "--seed", 0,
        *data_args, "--save-params", final_file, "--save-inputs", inputs_file, *log_args,
    )
    if log_args:
        log = json.loads((tmp_path / "log.json").read_text())
        tandem_losses = {int(e["step"]): float(e["loss"]) for e in log["steps"]}
    else:
        tandem_losses = harness.parse_step_losses(done.stdout)
    assert sorted(tandem_losses) == list(range(STEPS)), f"steps printed: {sorted(tandem_losses)}"

    initial = tandem_ref.load_params(initial_file)
    for name, value in initial.items():
        if name.startswith("opt."):
            assert not np.any(value), f"optimizer state {name} does not start at zero"
    params = reference.model_params(initial, text)
    state = tandem_ref.adamw_init(params)
    batches = tandem_ref.load_params(inputs_file)
    loss_and_grad = jax.jit(jax.value_and_grad(reference.loss_function(text)))

    grad_text = (tmp_path / "grad.mlir").read_text()
    bounds = AdamWBounds(tolerance.chain_bound(text, "forward", "jax"),
                         tolerance.chain_bound(grad_text, "forward_grad", "jax"))
    loss_errors, loss_bounds = [], []
    for k in range(STEPS):
        inputs = reference.inputs_from_file(batches, prefix=f"step.{k}.input.")
        loss, grads = loss_and_grad(params, *inputs)
        loss_errors.append(abs(tandem_losses[k] - float(loss)) / abs(float(loss)))
        loss_bounds.append(bounds.loss(float(loss), global_norm(grads), params))
        params, state = tandem_ref.adamw_step(params, grads, state, CONFIG)
        bounds.add_step(grads, state)

    final = tandem_ref.load_params(final_file)
    errors = {}
    key_bias_drift = 0.0
    limits = {}
    for name in params:
        ours, ours_key = split_key_bias(name, np.asarray(final[name]))
        theirs, theirs_key = split_key_bias(name, np.asarray(params[name]))
        errors[name] = harness.relative_error(ours, theirs)
        limits[name] = bounds.parameter(name, params[name])
        if ours_key is not None:
            key_bias_drift = max(key_bias_drift, float(np.max(np.abs(ours_key - theirs_key))))
    state_errors = {
        name: harness.relative_error(final[name], np.asarray(value))
        for name, value in state.items()
        if name in final and name != "opt.step"
    }
    worst = max(errors, key=errors.get)
    worst_state = max(state_errors, key=state_errors.get) if state_errors else None
    harness.record(
        key,
        f"{STEPS} adamw steps: max param rel error {errors[worst]:.3e} ({worst}, bound {limits[worst]:.2e}); "
        f"max loss rel error {max(loss_errors):.3e} (bound {min(loss_bounds):.2e})"
        + (f"; max optimizer-state rel error {state_errors[worst_state]:.3e} ({worst_state})"
           if worst_state else ""),
    )
    # The key bias: each side moves at most about lr per step (AdamW's update
    # magnitude), so the two can differ by at most 2 * STEPS * lr.
    assert key_bias_drift <= 2 * STEPS * LR, f"key bias differs by {key_bias_drift:.3e}"
    assert float(final["opt.step"]) == STEPS, f"opt.step is {final['opt.step']} after {STEPS} steps"
    assert all(e <= b for e, b in zip(loss_errors, loss_bounds)), "per-step losses differ: " + ", ".join(
        f"step {k}: {e:.3e} (bound {b:.2e})" for k, (e, b) in enumerate(zip(loss_errors, loss_bounds))
    )
    bad = {n: e for n, e in errors.items() if not e <= limits[n]}
    assert not bad, "final parameters off by more than their bounds (relative): " + ", ".join(
        f"{n} {e:.3e} > {limits[n]:.2e}" for n, e in sorted(bad.items(), key=lambda kv: -kv[1])
    )


def test_gpt_adamw_steps(gpt_mlir, corpus, tmp_path):
    check_training(gpt_mlir, ["--data", corpus], tmp_path, "tiny-gpt training")


def test_mlp_adamw_steps(mlp_mlir, tmp_path):
    """The MLP's inputs are float features, not token data, so the loop is
    driven from here: each step runs the compiled @train_step once through
    tandem-eval (inputs generated from the seed = step number, saved with
    --save-inputs) and writes its results back by nn.updates, exactly as
    tandem-eval --train does for token models."""
    upstream.autodiff(mlp_mlir, tmp_path / "grad.mlir")
    train = tmp_path / "train.mlir"
    train_text = upstream.optimizer(tmp_path / "grad.mlir", train, OPTIMIZER)
    upstream.require_eval_flags("save-outputs", "save-inputs", "params")
    updates = harness.function_result_names(train.read_text(), "nn.updates", "train_step")
    assert "func.func @train_step" in train_text

    current = tmp_path / "params.0.safetensors"
    harness.run("tandem-eval", train, "--seed", 0, "--save-params", current)
    initial = tandem_ref.load_params(current)
    text = mlp_mlir.read_text()
    params = reference.model_params(initial, text)
    state = tandem_ref.adamw_init(params)
    loss_and_grad = jax.jit(jax.value_and_grad(reference.loss_function(text)))

    bounds = AdamWBounds(tolerance.chain_bound(text, "forward", "jax"),
                         tolerance.chain_bound((tmp_path / "grad.mlir").read_text(), "forward_grad", "jax"))
    loss_errors, loss_bounds = [], []
    for k in range(STEPS):
        outputs_file = tmp_path / f"outputs.{k}.safetensors"
        inputs_file = tmp_path / f"inputs.{k}.safetensors"
        harness.run("tandem-eval", train, "--function", "train_step", "--params", current,
                    "--seed", 100 + k, "--save-outputs", outputs_file,
                    "--save-inputs", inputs_file)
        outputs = tandem_ref.load_params(outputs_file)
        assert len(updates) == sum(1 for n in outputs if n.startswith("result.")) - 1
        values = tandem_ref.load_params(current)
        for i, name in enumerate(updates):
            values[name] = outputs[f"result.{i + 1}"]
        current = tmp_path / f"params.{k + 1}.safetensors"
        tandem_ref.save_params(values, current)

        inputs = reference.inputs_from_file(tandem_ref.load_params(inputs_file))
        loss, grads = loss_and_grad(params, *inputs)
        tandem_loss = float(outputs["result.0"])
        loss_errors.append(abs(tandem_loss - float(loss)) / abs(float(loss)))
        loss_bounds.append(bounds.loss(float(loss), global_norm(grads), params))
        params, state = tandem_ref.adamw_step(params, grads, state, CONFIG)
        bounds.add_step(grads, state)

    final = tandem_ref.load_params(current)
    errors = {name: harness.relative_error(final[name], np.asarray(params[name])) for name in params}
    limits = {name: bounds.parameter(name, params[name]) for name in params}
    worst = max(errors, key=errors.get)
    harness.record(
        "tiny-mlp training",
        f"{STEPS} adamw steps: max param rel error {errors[worst]:.3e} ({worst}, bound {limits[worst]:.2e}); "
        f"max loss rel error {max(loss_errors):.3e} (bound {min(loss_bounds):.2e})",
    )
    assert float(final["opt.step"]) == STEPS
    assert all(e <= b for e, b in zip(loss_errors, loss_bounds)), (
        f"per-step losses differ: {loss_errors} (bounds {loss_bounds})")
    bad = {n: (e, limits[n]) for n, e in errors.items() if not e <= limits[n]}
    assert not bad, f"final parameters off by more than their bounds (relative): {bad}"
