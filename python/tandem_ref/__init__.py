"""tandem_ref: an outside reference for Tandem, written by hand in JAX.

The models here (an MLP classifier and a GPT-2-style decoder) are written
from their definitions, not translated from Tandem IR. They use the same
parameter names as the models `tandemc models` generates, so a safetensors
file saved by `tandem-eval --save-params` loads into them directly.

Everything runs in float32 on the CPU: importing this package sets
`jax_enable_x64` to False and the platform to cpu.
"""

import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402

jax.config.update("jax_enable_x64", False)
jax.config.update("jax_platforms", "cpu")
# f32 matmuls at full f32 precision (the default on CPU; explicit so that a
# future default change cannot loosen the comparison silently).
jax.config.update("jax_default_matmul_precision", "highest")

from .adamw import AdamWConfig, adamw_init, adamw_step, decays  # noqa: E402
from .gpt import GPTConfig, gpt_logits, gpt_loss  # noqa: E402
from .losses import cross_entropy  # noqa: E402
from .mlp import mlp_logits, mlp_loss  # noqa: E402
from .safetensors_io import load_params, save_params  # noqa: E402

__all__ = [
    "AdamWConfig",
    "GPTConfig",
    "adamw_init",
    "adamw_step",
    "cross_entropy",
    "decays",
    "gpt_logits",
    "gpt_loss",
    "load_params",
    "mlp_logits",
    "mlp_loss",
    "save_params",
]
