"""AdamW written by hand, to Tandem's documented nn-optimizer semantics.

From `nn-optimizer`'s description (include/tandem/Dialect/NN/Transforms/
Passes.td, docs/reference/NNPasses.md), with t the step counter before the
step (0-based), lr(t) the scheduled learning rate and wd the decay of the
parameter's group:

    m <- b1 m + (1 - b1) g
    v <- b2 v + (1 - b2) g^2
    p <- p - lr(t) wd p - lr(t) (m / c1) / (sqrt(v / c2) + eps)
    c1 = 1 - b1^(t+1), c2 = 1 - b2^(t+1)

Weight decay is decoupled (applied to p, not g). Groups: `matrices` (the
default) decays parameters of rank >= 2 only, so biases and normalization
weights do not decay; `all`; `none`; and any parameter whose name contains
one of `no_decay` never decays. Optional clipping multiplies every gradient
by min(1, clip / (norm + 1e-6)), the global norm summed per parameter in
the canonical (declaration) order. Schedules: constant, or warmup-cosine.

State follows Tandem's names: `opt.step` (a rank-0 float32 counter) and
`opt.m.<name>`, `opt.v.<name>`.
"""

import dataclasses
import math

import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class AdamWConfig:
    lr: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.01
    decay: str = "matrices"  # matrices | all | none
    no_decay: tuple = ()
    clip_norm: float = 0.0
    schedule: str = "constant"  # constant | warmup-cosine
    warmup_steps: int = 0
    total_steps: int = 0
    min_lr: float = 0.0


def decays(name, shape, config):
    """Whether parameter `name` of `shape` is in the weight-decay group."""
    if any(s in name for s in config.no_decay):
        return False
    if config.decay == "all":
        return True
    if config.decay == "none":
        return False
    if config.decay == "matrices":
        return len(shape) >= 2
    raise ValueError(f"unknown decay group '{config.decay}'")


def learning_rate(t, config):
    """lr(t) for the 0-based step counter t (a Python number)."""
    if config.schedule == "constant":
        return config.lr
    if config.schedule != "warmup-cosine":
        raise ValueError(f"unknown schedule '{config.schedule}'")
    w, total = config.warmup_steps, config.total_steps
    if t < w:
        return config.lr * (t + 1) / w
    if t < total:
        progress = (t - w) / (total - w)
        return config.min_lr + (config.lr - config.min_lr) * (1 + math.cos(math.pi * progress)) / 2
    return config.min_lr


def adamw_init(params):
    """Zero state for `params` (a dict name -> array), like Tandem's zeros."""
    state = {"opt.step": jnp.zeros((), jnp.float32)}
    for name, p in params.items():
        state[f"opt.m.{name}"] = jnp.zeros_like(p)
        state[f"opt.v.{name}"] = jnp.zeros_like(p)
    return state


def adamw_step(params, grads, state, config, order=None):
    """One step. Returns (new_params, new_state).

    `order` is the canonical parameter order (used for the clipping norm);
    defaults to the order of `params`.
    """
    order = list(order if order is not None else params.keys())
    t = int(state["opt.step"])
    lr = learning_rate(t, config)
    b1, b2 = config.beta1, config.beta2
    c1 = 1.0 - b1 ** (t + 1)
    c2 = 1.0 - b2 ** (t + 1)

    if config.clip_norm > 0:
        total = jnp.zeros((), jnp.float32)
        for name in order:
            total = total + jnp.sum(grads[name] * grads[name])
        norm = jnp.sqrt(total)
        factor = jnp.minimum(1.0, config.clip_norm / (norm + 1e-6))
        grads = {name: g * factor for name, g in grads.items()}

    new_params, new_state = {}, {"opt.step": state["opt.step"] + 1.0}
    for name in order:
        p, g = params[name], grads[name]
        m = b1 * state[f"opt.m.{name}"] + (1.0 - b1) * g
        v = b2 * state[f"opt.v.{name}"] + (1.0 - b2) * (g * g)
        wd = config.weight_decay if decays(name, p.shape, config) else 0.0
        update = (m / c1) / (jnp.sqrt(v / c2) + config.eps)
        new_params[name] = p - lr * wd * p - lr * update
        new_state[f"opt.m.{name}"] = m
        new_state[f"opt.v.{name}"] = v
    return new_params, new_state
