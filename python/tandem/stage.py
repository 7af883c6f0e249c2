"""`tandem.stage_end`: the pipeline-stage marker as a real JAX primitive.

It is the identity on values, so a model that calls it still runs, jits,
differentiates and trains in JAX unchanged (like JaxPP's `mark_stage_end`);
`tandem.from_jax` turns each call into an `nn.stage_end`, where
`mpmd-partition` cuts the pipeline.
"""

import os

import jax
from jax._src import source_info_util
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

# Source lines name the user's code, not this package's.
source_info_util.register_exclusion(os.path.dirname(os.path.abspath(__file__)))

stage_end_p = Primitive("tandem_stage_end")
stage_end_p.multiple_results = True
stage_end_p.def_impl(lambda *xs: xs)
stage_end_p.def_abstract_eval(lambda *avals: avals)


def _jvp(primals, tangents):
    # Linear: the tangents go through a marker too, so JAX's own backward
    # pass keeps the stage structure (the transpose marks the cotangents).
    return stage_end_p.bind(*primals), stage_end_p.bind(*map(ad.instantiate_zeros, tangents))


def _transpose(cotangents, *primals):
    return stage_end_p.bind(*map(ad.instantiate_zeros, cotangents))


ad.primitive_jvps[stage_end_p] = _jvp
ad.primitive_transposes[stage_end_p] = _transpose
batching.primitive_batchers[stage_end_p] = lambda xs, dims: (stage_end_p.bind(*xs), dims)
mlir.register_lowering(stage_end_p, lambda ctx, *xs: list(xs))


def stage_end(x):
    """Marks the end of a pipeline stage: returns `x` (an array or a pytree
    of arrays) unchanged; everything computed from the result belongs to a
    later stage than what `x` was computed from."""
    leaves, tree = jax.tree_util.tree_flatten(x)
    if not leaves:
        return x
    return jax.tree_util.tree_unflatten(tree, stage_end_p.bind(*leaves))
