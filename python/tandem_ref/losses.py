"""Shared pieces: the loss and the activation both models use."""

import math

import jax
import jax.numpy as jnp


def cross_entropy(logits, targets):
    """Mean over all positions of -log softmax(logits)[target].

    logits: [..., C] float32; targets: [...] integer class ids.
    Computed as logsumexp(logits) - logits[target] with the row maximum
    subtracted first. The maximum is a constant shift whose gradient
    contributions cancel exactly, so it is held constant.
    """
    row_max = jax.lax.stop_gradient(jnp.max(logits, axis=-1, keepdims=True))
    shifted = logits - row_max
    log_sum = jnp.log(jnp.sum(jnp.exp(shifted), axis=-1))
    index = targets.astype(jnp.int32)[..., None]
    picked = jnp.take_along_axis(shifted, index, axis=-1)[..., 0]
    return jnp.mean(log_sum - picked)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu_tanh(x):
    """GPT-2's GELU, tanh form: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    return 0.5 * x * (1.0 + jnp.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))
