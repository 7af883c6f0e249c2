"""Finding `jax.nn.dot_product_attention` in a jaxpr.

JAX 0.10 does not jit `dot_product_attention`: its XLA implementation
(`_dot_product_attention_xla`) is traced inline, a reshape, a vmapped
einsum, the masks, a softmax and a second einsum spread over a dozen
equations whose layout changes with the arguments. Rather than matching
that, `from_jax` traces the loss inside `marking()`, which routes every
call nn.attention can express (no bias, no mask but the causal one, no
sequence lengths, no local window, no residual) through a `jax.jit` whose
name records `is_causal` and the scale. The jit runs the original
implementation, so the traced function computes exactly what it did; the
importer turns a jit of that name into one nn.attention where its body
is that call's forward computation (`is_forward`) and its shapes fit, and
inlines it like any other jit where not.

Anything else (a bias, a boolean mask, a JAX without the expected internal
function) is traced as before and imports equation by equation.
"""

import contextlib
import inspect
import re
import threading

import jax
import numpy as np

try:
    from jax._src.nn import functions as _functions
except ImportError:  # another JAX layout: nothing is marked
    _functions = None

_PREFIX = "tandem_dot_product_attention"
_NAME = re.compile(rf"{_PREFIX}_(causal|full)_scale_([0-9a-f]{{16}})")
# The parameters the replacement takes over; any other signature is left alone.
_SIGNATURE = (
    "query", "key", "value", "bias", "mask", "is_causal", "scale",
    "q_seqlen", "kv_seqlen", "local_window_size", "return_residual",
)
# JAX's own implementation (None where its signature is not the one this
# module knows), whatever marking() does meanwhile.
_XLA = getattr(_functions, "_dot_product_attention_xla", None)
if _XLA is not None and tuple(inspect.signature(_XLA).parameters) != _SIGNATURE:
    _XLA = None
_lock = threading.Lock()
_depth = 0


def marker_name(causal, scale):
    """The jit's name: the scale as its float64 bits, so it is exact."""
    bits = int(np.asarray(float(scale), np.float64).view(np.uint64))
    return f"{_PREFIX}_{'causal' if causal else 'full'}_scale_{bits:016x}"


def parse(name):
    """(causal, scale) of a marked jit's name, or None for any other jit."""
    match = _NAME.fullmatch(str(name))
    if match is None:
        return None
    scale = float(np.asarray(int(match.group(2), 16), np.uint64).view(np.float64))
    return match.group(1) == "causal", scale


def _forward(causal, scale):
    """JAX's own computation of a call nn.attention expresses (no bias,
    mask, sequence lengths or window) on its query, key and value."""

    def attention(q, k, v):
        return _XLA(q, k, v, None, None, is_causal=causal, scale=scale, q_seqlen=None,
                    kv_seqlen=None, local_window_size=None)

    return attention


def is_forward(closed, causal, scale):
    """Whether a marked jit's body (a ClosedJaxpr) is the forward
    computation of a call on its operands. The name alone does not say so:
    jax.grad's partial evaluation and transposition and jax.vmap keep a
    jit's name on bodies that compute something else (residuals,
    cotangents, a batch of calls)."""
    avals = closed.in_avals
    if _XLA is None or len(avals) != 3:
        return False

    try:
        expected = jax.make_jaxpr(_forward(causal, scale))(*(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals))
    except (TypeError, ValueError):  # operands the call itself would refuse
        return False
    return (
        str(expected.jaxpr) == str(closed.jaxpr)
        and len(expected.consts) == len(closed.consts)
        and all(np.array_equal(a, b) for a, b in zip(expected.consts, closed.consts))
    )


def _marked(query, key, value, bias, mask, is_causal, scale, q_seqlen, kv_seqlen,
            local_window_size, return_residual=False):
    extras = (bias, mask, q_seqlen, kv_seqlen, local_window_size)
    if any(e is not None for e in extras) or return_residual or not isinstance(scale, (int, float, np.number)):
        return _XLA(query, key, value, bias, mask, is_causal=is_causal, scale=scale,
                        q_seqlen=q_seqlen, kv_seqlen=kv_seqlen, local_window_size=local_window_size,
                        return_residual=return_residual)

    attention = _forward(is_causal, scale)
    attention.__name__ = attention.__qualname__ = marker_name(bool(is_causal), scale)
    return jax.jit(attention)(query, key, value)


@contextlib.contextmanager
def marking():
    """While active (in any thread), expressible dot_product_attention calls
    are traced as marked jits. Re-entrant; JAX's implementation is back when
    the outermost use ends."""
    global _depth
    with _lock:
        if _depth == 0 and _XLA is not None:
            _functions._dot_product_attention_xla = _marked
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _XLA is not None:
                _functions._dot_product_attention_xla = _XLA
