"""JAX to nn: `tandem.from_jax(loss_fn, params, *example_batch)`.

The loss function is traced to a jaxpr with the parameters and the example
batch as inputs, and every equation becomes nn ops:

- parameters become `nn.parameter`s named by their pytree paths
  (`blocks/0/attn/wq`); an array that `lax.scan` runs over (stacked layers)
  becomes one parameter per layer (`blocks/w/0`, `blocks/w/1`, ...), so
  each pipeline stage owns its own layers;
- anything computed from constants alone (iota, causal masks, RoPE tables)
  is evaluated here by JAX itself and written as `nn.constant`s, stored
  compactly: a constant that repeats along a dimension is written once and
  broadcast;
- nested `jit`, `custom_jvp_call` (jax.nn.relu), `jax.checkpoint` and
  `lax.scan` are inlined or unrolled: Tandem derives the backward pass
  itself, from the primal computation (a custom JVP rule is not used, a
  custom VJP is refused); `tandem.stage_end` becomes `nn.stage_end`;
- the ops of a `jax.checkpoint` region that its policy does not save carry
  the unit attribute `nn.recompute` (constants, parameter reads and stage
  markers never do), which `tandemc --remat annotated` recomputes in the
  backward pass instead of keeping (checkpoint_policy);
- `jax.nn.dot_product_attention` becomes one `nn.attention` where the op
  expresses the call (jax_attention), its equations where not;
- integer arithmetic on the inputs is refused except the index
  normalization jnp emits before a gather (`where(i < 0, i + n, i)`):
  Tandem's gathers reject ids outside [0, n) at run time, so for the ids
  they accept the normalization is the identity.

Anything else is an `UnsupportedError` naming the primitive and the user's
source line. Every op carries that line as its MLIR location, so tandemc's
diagnostics point at the Python source too.
"""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import source_info_util
from jax.extend import core as jcore

from . import _ir, jax_attention
from ._ir import UnsupportedError

# Elementwise primitives with an nn op of the same meaning.
_UNARY = {
    "neg": "neg",
    "exp": "exp",
    "log": "log",
    "tanh": "tanh",
    "sqrt": "sqrt",
    "rsqrt": "rsqrt",
    "sin": "sin",
    "cos": "cos",
    "erf": "erf",
    "erfc": "erfc",
    "stop_gradient": "stop_gradient",
}
_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "maximum", "min": "minimum"}
# Sub-jaxprs that are inlined: (primitive, the parameter holding the jaxpr).
_INLINED = {
    "jit": "jaxpr",
    "pjit": "jaxpr",
    "closed_call": "call_jaxpr",
    "core_call": "call_jaxpr",
    "custom_jvp_call": "call_jaxpr",
    "remat2": "jaxpr",
    "checkpoint": "jaxpr",
}
# `name` is jax.ad_checkpoint.checkpoint_name: a label for checkpoint policies.
_IDENTITY = {"copy", "copy_p", "optimization_barrier", "name"}
_CHECKPOINT = ("remat2", "checkpoint")


def checkpoint_policy(policy):
    """What a jax.checkpoint `policy` leaves unsaved, as one of "all" (every
    op recomputed: None, nothing_saveable), "none" (everything_saveable),
    "dots" (all but dot_general: dots_saveable, checkpoint_dots) and
    "dots_no_batch" (all but dot_generals without batch dimensions); None
    for any other policy."""
    policies = jax.checkpoint_policies
    if policy is None or policy is policies.nothing_saveable:
        return "all"
    if policy is policies.everything_saveable:
        return "none"
    if isinstance(policy, type(policies.dots_saveable)):
        return "dots_no_batch" if policy.only_if_no_batch_dims else "dots"
    return None


def _saved(kind, eqn):
    """Whether policy `kind` saves the results of equation `eqn`."""
    if kind == "none":
        return True
    if kind in ("dots", "dots_no_batch") and eqn.primitive.name == "dot_general":
        (_, _), (lhs_batch, rhs_batch) = eqn.params["dimension_numbers"]
        return kind == "dots" or (not lhs_batch and not rhs_batch)
    return False


class _Tensor:
    """A value of the function: `full` (the nn value of the jaxpr variable's
    shape) and/or `compact`, an nn value of the same rank (or rank 0) that
    NumPy-broadcasts to it, for broadcasts that elementwise ops can read
    without materializing."""

    __slots__ = ("full", "compact", "shape", "dtype")

    def __init__(self, full=None, compact=None, shape=None, dtype=None):
        self.full, self.compact = full, compact
        some = full if full is not None else compact
        self.shape = tuple(shape if shape is not None else some.shape)
        self.dtype = np.dtype(dtype if dtype is not None else some.dtype)


class _Const:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = np.asarray(array)


class _Mask:
    """A boolean as a float 0/1 tensor (nn has no booleans)."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor


class _NegativeIds:
    """`ids < 0` for integer input ids."""

    __slots__ = ("ids",)

    def __init__(self, ids):
        self.ids = ids


class _ShiftedIds:
    """`ids + n` for integer input ids."""

    __slots__ = ("ids", "by")

    def __init__(self, ids, by):
        self.ids, self.by = ids, by


class _ParamLeaf:
    """A parameter leaf, read where it is used."""

    __slots__ = ("leaf",)

    def __init__(self, leaf):
        self.leaf = leaf


class _ParamSlice:
    """Layer `index` of a parameter leaf that a scan runs over."""

    __slots__ = ("leaf", "index")

    def __init__(self, leaf, index):
        self.leaf, self.index = leaf, index


def _path_name(path):
    parts = []
    for key in path:
        for attribute in ("key", "idx", "name"):
            if hasattr(key, attribute):
                parts.append(str(getattr(key, attribute)))
                break
        else:
            parts.append(str(key))
    return "/".join(parts) if parts else "param"


def _where(eqn):
    frame = source_info_util.user_frame(eqn.source_info.traceback)
    if frame is None:
        return None, "an unknown place"
    return frame, f"{frame.file_name}:{frame.start_line}"


class _Importer:
    def __init__(self, leaf_names, leaf_values):
        self.body = _ir.FunctionBuilder()
        self.leaf_names = leaf_names
        self.leaf_values = leaf_values
        # leaf -> "whole" or ("split", length); decided at the first use.
        self.leaf_use = {}
        # nn name -> (shape, dtype, leaf, layer or None), in first-use order.
        self.parameters = {}
        self.where = "an unknown place"
        # The policy kind (checkpoint_policy) of the innermost jax.checkpoint
        # being imported, None outside any.
        self.checkpoint = None
        self.warned = set()

    # --- errors --------------------------------------------------------

    def fail(self, message):
        raise UnsupportedError(f"{self.where}: {message}")

    # --- reading values -------------------------------------------------

    def read(self, env, var):
        if isinstance(var, jcore.Literal):
            return _Const(np.asarray(var.val, dtype=var.aval.dtype))
        return env[var]

    def _parameter(self, name, shape, dtype, leaf, layer):
        if name not in self.parameters:
            self.parameters[name] = (tuple(shape), np.dtype(dtype), leaf, layer)
        return self.body.op(
            f"nn.param {_ir.symbol(name)} : {_ir.tensor_type(shape, dtype)}", shape, dtype
        )

    def _use_leaf(self, leaf, how):
        previous = self.leaf_use.setdefault(leaf, how)
        if previous != how:
            self.fail(
                f"parameter '{self.leaf_names[leaf]}' is used both whole and as the array a "
                "lax.scan runs over; Tandem splits a scanned parameter into one parameter per "
                "layer, so it can be used only that way"
            )

    def value(self, entry, compact=False):
        """The nn value of an entry (its compact form if allowed)."""
        if isinstance(entry, _Const):
            return self.constant(entry.array, compact)
        if isinstance(entry, _Tensor):
            if compact and entry.compact is not None:
                return entry.compact
            if entry.full is None:
                entry.full = self.body.broadcast_to(entry.compact, entry.shape)
            return entry.full
        if isinstance(entry, _ParamLeaf):
            value = self.leaf_values[entry.leaf]
            self._use_leaf(entry.leaf, "whole")
            return self._parameter(
                self.leaf_names[entry.leaf], value.shape, value.dtype, entry.leaf, None
            )
        if isinstance(entry, _ParamSlice):
            value = self.leaf_values[entry.leaf]
            name = f"{self.leaf_names[entry.leaf]}/{entry.index}"
            return self._parameter(name, value.shape[1:], value.dtype, entry.leaf, entry.index)
        if isinstance(entry, _Mask):
            return self.value(entry.tensor, compact)
        self.fail("an integer index expression is used as a value")

    def tensor(self, entry):
        """The entry as a _Tensor (parameters read, constants written)."""
        if isinstance(entry, _Tensor):
            return entry
        if isinstance(entry, _Const):
            compact = self.constant(entry.array, True)
            return _Tensor(compact=compact, shape=entry.array.shape, dtype=entry.array.dtype)
        return _Tensor(full=self.value(entry))

    def constant(self, array, compact):
        """A constant; with `compact`, each dimension along which it does not
        change is written with size 1 (rank 0 when it is a splat)."""
        array = np.asarray(array)
        if array.dtype == np.bool_:
            self.fail("a boolean constant is used as a value")
        if compact:
            small = array
            for axis in range(array.ndim):
                first = np.take(small, [0], axis=axis)
                same = small == first
                if _ir.is_float(array.dtype):
                    same |= np.isnan(small) & np.isnan(first)
                if np.all(same):
                    small = first
            if small.size == 1:
                small = small.reshape(())
            return self.body.constant(small)
        return self.body.constant(array)

    # --- the jaxpr --------------------------------------------------------

    def run(self, jaxpr, consts, inputs):
        env = {}
        for var, value in zip(jaxpr.constvars, consts):
            env[var] = _Const(np.asarray(value))
        for var, entry in zip(jaxpr.invars, inputs):
            env[var] = entry
        for eqn in jaxpr.eqns:
            frame, where = _where(eqn)
            saved = (self.where, self.body.loc, self.body.recompute)
            # Equations inside jnp's own jitted helpers have no user frame:
            # they keep the place of the call that contains them.
            if frame is not None:
                self.where = where
                self.body.loc = _ir.location(frame.file_name, frame.start_line, frame.start_column)
            # Inside a jax.checkpoint, what its policy does not save is
            # recomputed (an equation holding a jaxpr decides again for each
            # of the equations it inlines).
            self.body.recompute = self.checkpoint is not None and not _saved(self.checkpoint, eqn)
            outs = self.equation(eqn, [self.read(env, v) for v in eqn.invars])
            self.where, self.body.loc, self.body.recompute = saved
            for var, entry in zip(eqn.outvars, outs):
                if not isinstance(var, jcore.DropVar):
                    env[var] = entry
        return [self.read(env, v) for v in jaxpr.outvars]

    def equation(self, eqn, ins):
        name = eqn.primitive.name
        if name == "tandem_stage_end":
            return self.stage_end(ins)
        if ins and all(isinstance(e, _Const) for e in ins) or (not ins and name != "scan"):
            return self.fold(eqn, ins)
        if name in ("jit", "pjit") and jax_attention.parse(eqn.params.get("name")) is not None:
            return self.attention(eqn, ins)
        if name in _INLINED:
            return self.inline(eqn, ins)
        if name in ("custom_vjp_call", "custom_vjp_call_jaxpr"):
            self.fail(
                f"primitive '{name}' (a jax.custom_vjp function) is not supported: Tandem "
                "derives gradients from the primal computation and would not use the custom rule"
            )
        handler = getattr(self, "p_" + name, None)
        if handler is None:
            self.fail(f"primitive '{name}' is not supported by tandem.from_jax")
        out = handler(eqn, ins)
        return out if isinstance(out, list) else [out]

    def fold(self, eqn, ins):
        """Evaluates an equation of constants with JAX itself."""
        with jax.ensure_compile_time_eval():
            outs = eqn.primitive.bind(*[jnp.asarray(e.array) for e in ins], **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        return [_Const(np.asarray(o)) for o in outs]

    def inline(self, eqn, ins):
        closed = eqn.params[_INLINED[eqn.primitive.name]]
        jaxpr = closed.jaxpr if hasattr(closed, "jaxpr") else closed
        consts = closed.consts if hasattr(closed, "consts") else []
        if eqn.primitive.name not in _CHECKPOINT:
            return self.run(jaxpr, consts, ins)
        policy = eqn.params.get("policy")
        kind = checkpoint_policy(policy)
        if kind is None:
            described = getattr(policy, "__qualname__", None) or repr(policy)
            if (described, self.where) not in self.warned:
                self.warned.add((described, self.where))
                warnings.warn(
                    f"{self.where}: jax.checkpoint policy {described} is not one Tandem maps "
                    "(None, nothing_saveable, everything_saveable, dots_saveable, "
                    "dots_with_no_batch_dims_saveable): every op of the region is marked "
                    "nn.recompute",
                    stacklevel=2,
                )
            kind = "all"
        saved, self.checkpoint = self.checkpoint, kind
        try:
            return self.run(jaxpr, consts, ins)
        finally:
            self.checkpoint = saved

    def out_aval(self, eqn, i=0):
        aval = eqn.outvars[i].aval
        return tuple(aval.shape), np.dtype(aval.dtype)

    # --- elementwise ----------------------------------------------------

    def elementwise(self, eqn, ins, op):
        shape, dtype = self.out_aval(eqn)
        if not _ir.is_float(dtype):
            self.fail(f"'{eqn.primitive.name}' on integers computed from the inputs is not supported")
        a, b = (self.value(e, compact=True) for e in ins)
        result_shape = np.broadcast_shapes(a.shape, b.shape)
        result = self.body.binary(op, a, b, result_shape)
        if result_shape != shape:
            return _Tensor(compact=result, shape=shape, dtype=dtype)
        return _Tensor(full=result)

    def unary(self, eqn, ins, op):
        x = self.value(ins[0])
        if not _ir.is_float(x.dtype):
            self.fail(f"'{eqn.primitive.name}' on integers is not supported")
        return _Tensor(full=self.body.unary(op, x))

    def __getattr__(self, attribute):
        # p_<primitive> for the tables above.
        if attribute.startswith("p_"):
            name = attribute[2:]
            if name in _UNARY:
                return lambda eqn, ins: self.unary(eqn, ins, _UNARY[name])
            if name in _BINARY:
                return lambda eqn, ins: self.binary_or_ids(eqn, ins, _BINARY[name])
            if name in _IDENTITY:
                return lambda eqn, ins: ins[0]
        raise AttributeError(attribute)

    def binary_or_ids(self, eqn, ins, op):
        if name_is_ids_shift(eqn, ins):
            ids, const = (ins[0], ins[1]) if isinstance(ins[1], _Const) else (ins[1], ins[0])
            return _ShiftedIds(ids, int(const.array))
        return self.elementwise(eqn, ins, op)

    def p_logistic(self, eqn, ins):
        x = self.value(ins[0])
        one = self.constant(np.ones((), x.dtype), True)
        e = self.body.unary("exp", self.body.unary("neg", x))
        return _Tensor(full=self.body.binary("div", one, self.body.binary("add", one, e, x.shape), x.shape))

    def p_abs(self, eqn, ins):
        x = self.value(ins[0])
        return _Tensor(full=self.body.binary("maximum", x, self.body.unary("neg", x), x.shape))

    def p_sign(self, eqn, ins):
        """(x >= 0) - (-x >= 0): 1, 0 or -1, with zero gradient; NaN gives 0
        where JAX gives NaN."""
        x = self.value(ins[0])
        zero = self.constant(np.zeros((), x.dtype), True)
        up = self.body.binary("greater_equal", x, zero, x.shape)
        down = self.body.binary("greater_equal", self.body.unary("neg", x), zero, x.shape)
        return _Tensor(full=self.body.binary("sub", up, down, x.shape))

    def p_square(self, eqn, ins):
        x = self.value(ins[0])
        return _Tensor(full=self.body.binary("mul", x, x, x.shape))

    def p_integer_pow(self, eqn, ins):
        x = self.value(ins[0])
        y = int(eqn.params["y"])
        if y == 1:
            return _Tensor(full=x)
        if y == 2:
            return _Tensor(full=self.body.binary("mul", x, x, x.shape))
        return _Tensor(full=self.body.op(f"nn.pow {x.name}, {_ir.float_attribute(y)} : {x.type}", x.shape, x.dtype))

    def p_pow(self, eqn, ins):
        if not isinstance(ins[1], _Const) or ins[1].array.size != 1 and len(set(ins[1].array.reshape(-1))) != 1:
            self.fail("'pow' with an exponent that is not one constant is not supported")
        x = self.value(ins[0])
        y = float(ins[1].array.reshape(-1)[0])
        return _Tensor(full=self.body.op(f"nn.pow {x.name}, {_ir.float_attribute(y)} : {x.type}", x.shape, x.dtype))

    def p_clamp(self, eqn, ins):
        low, x, high = ins
        shape, dtype = self.out_aval(eqn)
        lo = self.value(low, True)
        hi = self.value(high, True)
        v = self.value(x)
        return _Tensor(full=self.body.binary("minimum", self.body.binary("maximum", v, lo, shape), hi, shape))

    # --- comparisons and selection -------------------------------------

    def compare(self, eqn, ins, flip, negate):
        a, b = ins
        if self._ids(a) is not None and isinstance(b, _Const) and eqn.primitive.name == "lt" and np.all(b.array == 0):
            return _NegativeIds(self._ids(a))
        if isinstance(a, _Mask) or isinstance(b, _Mask) or not _ir.is_float(self._dtype(a)):
            self.fail(f"'{eqn.primitive.name}' on integers or booleans computed from the inputs is not supported")
        lhs, rhs = (b, a) if flip else (a, b)
        lv, rv = self.value(lhs, True), self.value(rhs, True)
        shape = np.broadcast_shapes(lv.shape, rv.shape)
        mask = self.body.binary("greater_equal", lv, rv, shape)
        if negate:
            one = self.constant(np.ones((), mask.dtype), True)
            mask = self.body.binary("sub", one, mask, shape)
        out_shape, _ = self.out_aval(eqn)
        tensor = _Tensor(full=mask) if shape == out_shape else _Tensor(compact=mask, shape=out_shape, dtype=mask.dtype)
        return _Mask(tensor)

    # x >= y, x <= y, and the strict ones as 1 - the opposite (NaN compares
    # as in nn.greater_equal: false for >=, so true for the strict negation).
    def p_ge(self, eqn, ins):
        return self.compare(eqn, ins, flip=False, negate=False)

    def p_le(self, eqn, ins):
        return self.compare(eqn, ins, flip=True, negate=False)

    def p_gt(self, eqn, ins):
        return self.compare(eqn, ins, flip=True, negate=True)

    def p_lt(self, eqn, ins):
        return self.compare(eqn, ins, flip=False, negate=True)

    def p_eq(self, eqn, ins):
        """`ids[..., None] == iota` (jax.nn.one_hot) becomes nn.one_hot;
        other equality tests are refused. Ids outside [0, classes), which
        jax.nn.one_hot maps to a zero row, are a run-time error."""
        a, b = ins
        ids, iota = (a, b) if isinstance(b, _Const) else (b, a)
        shape, _ = self.out_aval(eqn)
        if self._ids(ids) is not None and isinstance(iota, _Const) and ids.shape[-1:] == (1,):
            classes = shape[-1]
            expected = np.broadcast_to(np.arange(classes), iota.array.shape[:-1] + (classes,))
            if iota.array.shape[-1] == classes and np.array_equal(iota.array, expected):
                positions = ids.shape[:-1]
                flat = self.body.reshape(self.value(ids), positions)
                one_hot_shape = tuple(positions) + (classes,)
                one_hot = self.body.op(
                    f"nn.one_hot {flat.name} {{classes = {classes} : i64}} : {flat.type} -> "
                    f"{_ir.tensor_type(one_hot_shape, np.float32)}",
                    one_hot_shape,
                    np.float32,
                )
                if one_hot_shape != shape:
                    return _Mask(_Tensor(compact=one_hot, shape=shape, dtype=np.float32))
                return _Mask(_Tensor(full=one_hot))
        self.fail("'eq' is supported only as jax.nn.one_hot of integer inputs (ids[..., None] == iota)")

    def p_is_finite(self, eqn, ins):
        """x - x is 0 for finite x and NaN for infinities and NaN, and NaN
        compares false: (x - x) >= 0 is exactly isfinite(x)."""
        x = self.value(ins[0])
        zero = self.constant(np.zeros((), x.dtype), True)
        mask = self.body.binary("greater_equal", self.body.binary("sub", x, x, x.shape), zero, x.shape)
        return _Mask(_Tensor(full=mask))

    def p_select_n(self, eqn, ins):
        predicate, *cases = ins
        if isinstance(predicate, _NegativeIds) and len(cases) == 2:
            keep, shifted = cases
            if (
                self._ids(keep) is predicate.ids
                and isinstance(shifted, _ShiftedIds)
                and shifted.ids is predicate.ids
                and shifted.by > 0
            ):
                # jnp's normalization of negative indices before a gather.
                return predicate.ids
        if len(cases) != 2:
            self.fail("'select_n' with more than two cases is not supported")
        shape, dtype = self.out_aval(eqn)
        if not _ir.is_float(dtype):
            self.fail("'select_n' between integer values is not supported")
        if isinstance(predicate, _Const):
            if predicate.array.dtype != np.bool_:
                self.fail("'select_n' with an integer predicate is not supported")
            cond = self.constant(predicate.array.astype(dtype), True)
        elif isinstance(predicate, _Mask):
            cond = self.value(predicate.tensor, True)
            if cond.dtype != dtype:
                cond = self.body.cast(cond, dtype)
        else:
            self.fail("'select_n' with a predicate that is not a comparison is not supported")
        if len(cond.shape) > len(shape):
            cond = self.body.broadcast_to(cond, shape)
        false_value = self.body.broadcast_to(self.value(cases[0], True), shape)
        true_value = self.body.broadcast_to(self.value(cases[1], True), shape)
        result = self.body.op(
            f"nn.select {cond.name}, {true_value.name}, {false_value.name} : {cond.type}, "
            f"{_ir.tensor_type(shape, dtype)}",
            shape,
            dtype,
        )
        return _Tensor(full=result)

    def p_convert_element_type(self, eqn, ins):
        shape, dtype = self.out_aval(eqn)
        entry = ins[0]
        if isinstance(entry, _Mask):
            if not _ir.is_float(dtype):
                self.fail("a boolean converted to an integer is not supported")
            tensor = entry.tensor
            if tensor.full is not None:
                return _Tensor(full=self.body.cast(tensor.full, dtype))
            return _Tensor(compact=self.body.cast(tensor.compact, dtype), shape=shape, dtype=dtype)
        source = self._dtype(entry)
        if _ir.is_float(source) and _ir.is_float(dtype):
            return _Tensor(full=self.body.cast(self.value(entry), dtype))
        if not _ir.is_float(source) and source == dtype:
            return entry
        self.fail(f"converting {source.name} to {np.dtype(dtype).name} is not supported")

    def _dtype(self, entry):
        if isinstance(entry, _Const):
            return entry.array.dtype
        if isinstance(entry, _Tensor):
            return entry.dtype
        if isinstance(entry, (_ParamLeaf, _ParamSlice)):
            return np.dtype(self.leaf_values[entry.leaf].dtype)
        return np.dtype(np.int32)

    def _ids(self, entry):
        """The nn value of integer ids, or None."""
        if isinstance(entry, _Tensor) and not _ir.is_float(entry.dtype):
            return entry
        return None

    # --- shapes ---------------------------------------------------------

    def p_broadcast_in_dim(self, eqn, ins):
        shape, dtype = self.out_aval(eqn)
        dims = eqn.params["broadcast_dimensions"]
        if isinstance(ins[0], _Tensor) and not _ir.is_float(ins[0].dtype):
            # Integer ids: only adding size-1 dimensions (a reshape).
            x = self.value(ins[0])
            expanded = [1] * len(shape)
            for i, d in enumerate(dims):
                expanded[d] = x.shape[i]
            if tuple(expanded) != shape:
                self.fail("broadcasting integer ids is not supported")
            return _Tensor(full=self.body.reshape(x, shape))
        if isinstance(ins[0], _Mask):
            return _Mask(self.p_broadcast_in_dim(eqn, [ins[0].tensor]))
        x = self.value(ins[0], compact=False)
        expanded = [1] * len(shape)
        for i, d in enumerate(dims):
            expanded[d] = x.shape[i]
        compact = self.body.reshape(x, expanded)
        if tuple(expanded) == shape:
            return _Tensor(full=compact)
        return _Tensor(compact=compact, shape=shape, dtype=dtype)

    def _reshape(self, eqn, ins):
        shape, _ = self.out_aval(eqn)
        if isinstance(ins[0], _Mask):
            return _Mask(_Tensor(full=self.body.reshape(self.value(ins[0].tensor), shape)))
        return _Tensor(full=self.body.reshape(self.value(ins[0]), shape))

    def p_reshape(self, eqn, ins):
        if eqn.params.get("dimensions") is not None:
            self.fail("'reshape' with a dimension order is not supported")
        return self._reshape(eqn, ins)

    p_squeeze = _reshape
    p_expand_dims = _reshape

    def p_transpose(self, eqn, ins):
        return _Tensor(full=self.body.transpose(self.value(ins[0]), eqn.params["permutation"]))

    def p_slice(self, eqn, ins):
        shape, dtype = self.out_aval(eqn)
        x = self.value(ins[0])
        starts = list(eqn.params["start_indices"])
        limits = list(eqn.params["limit_indices"])
        strides = list(eqn.params["strides"] or [1] * len(starts))
        return _Tensor(full=self.body.slice(x, starts, limits, strides, shape))

    def p_dynamic_slice(self, eqn, ins):
        x, *starts = ins
        if not all(isinstance(s, _Const) for s in starts):
            self.fail("'dynamic_slice' at a position computed from the inputs is not supported")
        sizes = eqn.params["slice_sizes"]
        value = self.value(x)
        begin = [int(np.clip(int(s.array), 0, d - n)) for s, d, n in zip(starts, value.shape, sizes)]
        shape, _ = self.out_aval(eqn)
        return _Tensor(full=self.body.slice(value, begin, [b + n for b, n in zip(begin, sizes)], [1] * len(begin), shape))

    def p_concatenate(self, eqn, ins):
        return _Tensor(full=self.body.concat([self.value(e) for e in ins], int(eqn.params["dimension"])))

    def p_split(self, eqn, ins):
        sizes = [int(s) for s in eqn.params["sizes"]]
        return [_Tensor(full=o) for o in self.body.split(self.value(ins[0]), int(eqn.params["axis"]), sizes)]

    # --- reductions -----------------------------------------------------

    def p_reduce_sum(self, eqn, ins):
        return _Tensor(full=self.body.reduce("reduce_sum", self.value(ins[0]), eqn.params["axes"]))

    def p_reduce_max(self, eqn, ins):
        return _Tensor(full=self.body.reduce("reduce_max", self.value(ins[0]), eqn.params["axes"]))

    def p_reduce_min(self, eqn, ins):
        x = self.body.unary("neg", self.value(ins[0]))
        return _Tensor(full=self.body.unary("neg", self.body.reduce("reduce_max", x, eqn.params["axes"])))

    # --- matrix products ------------------------------------------------

    def p_dot_general(self, eqn, ins):
        shape, dtype = self.out_aval(eqn)
        lhs, rhs = self.value(ins[0]), self.value(ins[1])
        if lhs.dtype != rhs.dtype or lhs.dtype != dtype:
            self.fail(
                f"'dot_general' of {lhs.dtype.name} and {rhs.dtype.name} into {dtype.name} is not "
                "supported: write the model in one precision and choose mixed precision with "
                "tandem.compile(precision=...)"
            )
        (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
        lc, rc, lb, rb = map(lambda d: [int(i) for i in d], (lc, rc, lb, rb))
        lf = [d for d in range(len(lhs.shape)) if d not in lc and d not in lb]
        rf = [d for d in range(len(rhs.shape)) if d not in rc and d not in rb]
        size = lambda v, dims: int(np.prod([v.shape[d] for d in dims], dtype=np.int64))  # noqa: E731
        batch = [lhs.shape[d] for d in lb]
        m, n = size(lhs, lf), size(rhs, rf)

        # The common case needs no data movement: x[..., K] @ w[K, N] (or
        # w[N, K]), the weight of a layer applied to every token.
        if (
            not lb
            and len(lhs.shape) >= 2
            and len(lc) == 1
            and lc[0] == len(lhs.shape) - 1
            and len(rhs.shape) == 2
            and len(rf) == 1
        ):
            flag = " {transpose_rhs}" if rc[0] == 1 else ""
            result = self.body.op(
                f"nn.matmul {lhs.name}, {rhs.name}{flag} : {lhs.type}, {rhs.type} -> "
                f"{_ir.tensor_type(shape, dtype)}",
                shape,
                dtype,
            )
            return _Tensor(full=result)

        def arrange(value, b, first, second):
            """`value` as batch + [first, second] for nn.matmul: the nn value
            and whether it is stored transposed (batch + [second, first],
            which the matmul reads through its transpose flag)."""
            identity = list(range(len(value.shape)))
            if b + second + first == identity and b + first + second != identity:
                return self.body.reshape(value, batch + [size(value, second), size(value, first)]), True
            moved = self.body.transpose(value, b + first + second)
            return self.body.reshape(value if moved is value else moved, batch + [size(value, first), size(value, second)]), False

        left, tl = arrange(lhs, lb, lf, lc)
        right, tr = arrange(rhs, rb, rc, rf)
        flags = [f for f, on in (("transpose_lhs", tl), ("transpose_rhs", tr)) if on]
        attrs = " {" + ", ".join(flags) + "}" if flags else ""
        product_shape = batch + [m, n]
        product = self.body.op(
            f"nn.matmul {left.name}, {right.name}{attrs} : {left.type}, {right.type} -> "
            f"{_ir.tensor_type(product_shape, dtype)}",
            product_shape,
            dtype,
        )
        return _Tensor(full=self.body.reshape(product, shape))

    # --- attention ------------------------------------------------------

    def attention(self, eqn, ins):
        """jax.nn.dot_product_attention, marked while tracing
        (jax_attention): B×T×N×H queries over B×S×K×H keys and values, K
        dividing N (JAX's grouped-query attention groups consecutive query
        heads, as nn.attention does), as one nn.attention on B×T×(N·H) and
        B×S×(K·H) (reshapes of contiguous dimensions: free). A call outside
        what the op expresses imports its equations instead."""
        causal, scale = jax_attention.parse(eqn.params["name"])
        if not jax_attention.is_forward(eqn.params["jaxpr"], causal, scale):
            return self.inline(eqn, ins)
        avals = [v.aval for v in eqn.invars]
        out = eqn.outvars[0].aval if len(eqn.outvars) == 1 else None
        shapes = [tuple(a.shape) for a in avals]
        if not (
            len(avals) == 3
            and out is not None
            and all(len(s) == 4 for s in shapes)
            and all(a.dtype == avals[0].dtype for a in avals)
            and _ir.is_float(avals[0].dtype)
            and tuple(out.shape) == shapes[0]
            and out.dtype == avals[0].dtype
        ):
            return self.inline(eqn, ins)
        (b, t, n, h), (kb, s, k, kh) = shapes[0], shapes[1]
        # Causal attention of T queries over S != T keys is JAX's tril(T, S):
        # nn.attention's causal mask needs T == S.
        if shapes[2] != shapes[1] or (kb, kh) != (b, h) or n % k or (causal and s != t):
            return self.inline(eqn, ins)
        q, key, value = (self.value(e) for e in ins)
        q = self.body.reshape(q, (b, t, n * h))
        key = self.body.reshape(key, (b, s, k * h))
        value = self.body.reshape(value, (b, s, k * h))
        # JAX's default scale is 1/sqrt(H) computed the same way: the op's own.
        explicit = None if scale == 1.0 / np.sqrt(h) else scale
        y = self.body.attention(q, key, value, n, k, causal, explicit)
        return [_Tensor(full=self.body.reshape(y, shapes[0]))]

    # --- gathers --------------------------------------------------------

    def p_gather(self, eqn, ins):
        operand, indices = ins
        shape, dtype = self.out_aval(eqn)
        numbers = eqn.params["dimension_numbers"]
        ids = self._ids(indices)
        if ids is None:
            if isinstance(indices, _Const):
                ids = _Tensor(full=self.body.constant(indices.array))
            else:
                self.fail("'gather' with indices that are not integer inputs or constants is not supported")
        ids_value = self.value(ids)
        table = self.value(operand)
        rank = len(table.shape)
        offset = tuple(numbers.offset_dims)
        collapsed = tuple(numbers.collapsed_slice_dims)
        start_map = tuple(numbers.start_index_map)
        operand_batch = tuple(getattr(numbers, "operand_batching_dims", ()))
        indices_batch = tuple(getattr(numbers, "start_indices_batching_dims", ()))
        sizes = tuple(eqn.params["slice_sizes"])
        if ids_value.shape[-1:] != (1,) or len(start_map) != 1:
            self.fail("'gather' of more than one index per position is not supported")
        positions = ids_value.shape[:-1]
        flat_ids = self.body.reshape(ids_value, positions)

        # Rows of a table: an embedding lookup.
        if (
            rank == 2
            and start_map == (0,)
            and collapsed == (0,)
            and not operand_batch
            and offset == (len(positions),)
            and sizes == (1, table.shape[1])
        ):
            result = self.body.op(
                f"nn.embedding {table.name}, {flat_ids.name} : {table.type}, {flat_ids.type} -> "
                f"{_ir.tensor_type(shape, dtype)}",
                shape,
                dtype,
            )
            return _Tensor(full=result)

        # One element per batch position along an axis: take_along_axis.
        axis = start_map[0]
        if (
            collapsed == (axis,)
            and not offset
            and sorted(operand_batch) == [d for d in range(rank) if d != axis]
            and all(s == 1 for s in sizes)
        ):
            classes = table.shape[axis]
            pairs = sorted(zip(indices_batch, operand_batch))
            moved = self.body.transpose(table, [o for _, o in pairs] + [axis])
            expanded = [1] * len(positions) + [classes]
            for (i, o) in pairs:
                expanded[i] = table.shape[o]
            moved = self.body.reshape(moved, expanded)
            one_hot_shape = tuple(positions) + (classes,)
            one_hot = self.body.op(
                f"nn.one_hot {flat_ids.name} {{classes = {classes} : i64}} : {flat_ids.type} -> "
                f"{_ir.tensor_type(one_hot_shape, dtype)}",
                one_hot_shape,
                dtype,
            )
            picked = self.body.binary("mul", one_hot, moved, one_hot_shape)
            return _Tensor(full=self.body.reduce("reduce_sum", picked, [len(positions)]))
        self.fail(
            "this 'gather' is not supported (Tandem imports rows of a table, x[ids], and "
            "jnp.take_along_axis)"
        )

    # --- structure ------------------------------------------------------

    def stage_end(self, ins):
        values = [self.value(e) for e in ins]
        if not all(_ir.is_float(v.dtype) for v in values):
            self.fail("tandem.stage_end of integer values is not supported")
        types = ", ".join(v.type for v in values)
        outs = self.body.ops(
            f"nn.stage_end {', '.join(v.name for v in values)} : {types}",
            [(v.shape, v.dtype) for v in values],
        )
        return [_Tensor(full=o) for o in outs]

    def p_scan(self, eqn, ins):
        params = eqn.params
        if params.get("reverse"):
            self.fail("a reversed lax.scan is not supported")
        length = int(params["length"])
        consts_n, carry_n = int(params["num_consts"]), int(params["num_carry"])
        closed = params["jaxpr"]
        consts = ins[:consts_n]
        carry = list(ins[consts_n : consts_n + carry_n])
        xs = ins[consts_n + carry_n :]
        ys = []
        for i in range(length):
            slices = [self.scan_slice(x, i) for x in xs]
            outs = self.run(closed.jaxpr, closed.consts, list(consts) + carry + slices)
            carry = outs[:carry_n]
            ys.append(outs[carry_n:])
        stacked = []
        for j in range(len(eqn.outvars) - carry_n):
            shape, dtype = self.out_aval(eqn, carry_n + j)
            parts = [ys[i][j] for i in range(length)]
            if all(isinstance(p, _Const) for p in parts):
                stacked.append(_Const(np.stack([p.array for p in parts])))
                continue
            values = [self.body.reshape(self.value(p), (1,) + tuple(shape[1:])) for p in parts]
            stacked.append(_Tensor(full=self.body.concat(values, 0)))
        return carry + stacked

    def scan_slice(self, entry, i):
        if isinstance(entry, _Const):
            return _Const(entry.array[i])
        if isinstance(entry, _ParamLeaf):
            value = self.leaf_values[entry.leaf]
            self._use_leaf(entry.leaf, ("split", value.shape[0]))
            return _ParamSlice(entry.leaf, i)
        x = self.value(entry)
        shape = x.shape[1:]
        starts = [i] + [0] * len(shape)
        limits = [i + 1] + list(shape)
        piece = self.body.slice(x, starts, limits, [1] * len(x.shape), (1,) + shape)
        return _Tensor(full=self.body.reshape(piece, shape))


def name_is_ids_shift(eqn, ins):
    """`ids + n` (n a positive constant) on integer input ids."""
    if eqn.primitive.name != "add" or len(ins) != 2:
        return False
    a, b = ins
    for ids, const in ((a, b), (b, a)):
        if (
            isinstance(ids, _Tensor)
            and not _ir.is_float(ids.dtype)
            and isinstance(const, _Const)
            and const.array.size == 1
        ):
            return True
    return False
