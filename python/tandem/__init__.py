"""Tandem from Python: bring a JAX or ONNX (PyTorch) model, train it as a pipeline.

    import tandem
    model = tandem.from_jax(loss_fn, params, tokens, targets)
    pipeline = tandem.compile(model, stages=4, microbatches=8)
    history = pipeline.train(data="corpus.txt", steps=100, eval_every=20)
    params = pipeline.parameters()          # the trained pytree

See docs/python.md.
"""

from ._ir import UnsupportedError
from .compiler import Compiled, compile, plot_history
from .model import Model, from_jax
from .onnx_import import from_onnx
from .stage import stage_end
from .tools import ToolError

__all__ = [
    "Compiled",
    "Model",
    "ToolError",
    "UnsupportedError",
    "compile",
    "from_jax",
    "from_onnx",
    "plot_history",
    "stage_end",
]
