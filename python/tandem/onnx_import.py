"""ONNX to nn: `tandem.from_onnx(path_or_model, trainable=..., ties=...)`.

The graph computes the loss (a PyTorch module whose forward returns it,
exported with torch.onnx.export; examples/onnx/nanogpt.py). Its inputs
become the function's arguments (one microbatch, static shapes), and:

- the trainable initializers become `nn.parameter`s under their names, and
  an initializer that PyTorch ties to another (`lm_head.weight` to
  `wte.weight`) is the same parameter; every other initializer is a
  constant. `trainable` and `ties` come from the export script's
  `<name>.parameters.json` beside the file when not given; without either,
  every floating-point initializer is trainable;
- anything computed from constants alone (shapes, ranges, causal masks) is
  evaluated here by onnx's reference implementation and written as an
  `nn.constant`;
- each operator of GPT- and Llama-style models becomes nn ops; anything
  else is an UnsupportedError naming the operator, the node and, when the
  exporter recorded it, the PyTorch source line, which is also every op's
  MLIR location.
"""

import json
import pathlib
import re

import numpy as np

from . import _ir
from ._ir import UnsupportedError

_UNARY = {"Neg": "neg", "Exp": "exp", "Log": "log", "Tanh": "tanh", "Sqrt": "sqrt", "Erf": "erf",
          "Sin": "sin", "Cos": "cos", "Relu": "relu"}
_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Max": "maximum", "Min": "minimum"}
_IDENTITY = {"Identity", "Dropout"}
_STACK_LINE = re.compile(r'File "([^"]+)", line (\d+)')


class _Const:
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = np.asarray(array)


class _Mask:
    """A boolean as a float 0/1 value (nn has no booleans)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class _Transposed:
    """A transpose not yet written: MatMul reads a swap of the last two
    dimensions through its transpose flag instead."""

    __slots__ = ("source", "perm")

    def __init__(self, source, perm):
        self.source, self.perm = source, list(perm)


def _transposed(entry, perm):
    """`entry` transposed by `perm`, pending: a pending transpose of it is
    folded in (transposes in a row are one, often none, as when heads move
    out and back around an attention)."""
    if isinstance(entry, _Transposed):
        return _Transposed(entry.source, [entry.perm[p] for p in perm])
    return _Transposed(entry, perm)


class _Sequence:
    __slots__ = ("items",)

    def __init__(self, items):
        self.items = list(items)


def _where(node):
    """(file, line) of the first source frame the exporter recorded."""
    for prop in node.metadata_props:
        if prop.key == "pkg.torch.onnx.stack_trace":
            found = _STACK_LINE.search(prop.value)
            if found:
                return found.group(1), int(found.group(2))
    return None, None


class _Importer:
    def __init__(self, onnx):
        self.onnx = onnx
        self.body = _ir.FunctionBuilder()
        # parameter name -> initial value, in first-use order.
        self.declared = {}
        # Values after which a pipeline stage ends.
        self.stage_ends = set()
        # Initializer name -> (parameter name, initial value).
        self.parameters = {}
        # Values some node or the graph's output reads.
        self.consumed = set()
        self.node = None

    def fail(self, message):
        node = self.node
        file, line = _where(node) if node is not None else (None, None)
        place = f"node '{node.name}' ({node.op_type})" if node is not None else "the graph"
        if file:
            place += f" from {file}:{line}"
        raise UnsupportedError(f"{place}: {message}")

    # --- values ---------------------------------------------------------

    def param(self, name, array):
        self.declared.setdefault(name, array)
        return self.body.op(f"nn.param {_ir.symbol(name)} : {_ir.tensor_type(array.shape, array.dtype)}",
                            array.shape, array.dtype)

    def value(self, entry):
        if isinstance(entry, _ir.Value):
            return entry
        if isinstance(entry, _Const):
            if entry.array.dtype == np.bool_:
                return self.body.constant(entry.array.astype(np.float32))
            return self.body.constant(entry.array)
        if isinstance(entry, _Mask):
            return entry.value
        if isinstance(entry, _Transposed):
            return self.body.transpose(self.value(entry.source), entry.perm)
        self.fail("a sequence is used as a tensor")

    def shape(self, entry):
        if isinstance(entry, _Const):
            return entry.array.shape
        if isinstance(entry, _Transposed):
            source = self.shape(entry.source)
            return tuple(source[p] for p in entry.perm)
        return self.value(entry).shape

    def const(self, entry, what):
        if not isinstance(entry, _Const):
            self.fail(f"{what} must be a constant (computed from initializers and shapes only)")
        return entry.array

    def aligned(self, entries, dtype=None):
        """Values of the same rank (NumPy broadcasting's leading ones), a
        rank-0 value left as it is."""
        values = [self.value(e) for e in entries]
        rank = max(len(v.shape) for v in values)
        out = []
        for v in values:
            if dtype is not None and v.dtype != dtype:
                v = self.body.cast(v, dtype)
            if 0 < len(v.shape) < rank:
                v = self.body.reshape(v, (1,) * (rank - len(v.shape)) + v.shape)
            out.append(v)
        return out

    # --- the graph ------------------------------------------------------

    def read(self, env, name):
        """The entry of value `name`: a parameter is read where it is used
        (one nn.param per use keeps each stage's reads local to it)."""
        if name in self.parameters:
            return self.param(*self.parameters[name])
        if name not in env:
            self.fail(f"input '{name}' is not computed before the node")
        return env[name]

    def handler(self, node):
        if node.domain not in ("", "ai.onnx"):
            self.fail(f"operator '{node.op_type}' of domain '{node.domain}' is not supported by tandem.from_onnx")
        handler = getattr(self, "op_" + node.op_type, None)
        for table, generic in ((_UNARY, self.unary), (_BINARY, self.binary), (_IDENTITY, self.identity)):
            if handler is None and node.op_type in table:
                handler = generic
        if handler is None:
            self.fail(f"operator '{node.op_type}' is not supported by tandem.from_onnx")
        return handler

    def run(self, graph, env):
        self.consumed |= {name for node in graph.node for name in node.input}
        self.consumed |= {output.name for output in graph.output}
        for node in graph.node:
            self.node = node
            file, line = _where(node)
            self.body.loc = _ir.location(file, line) if file else f' loc("{node.name}")' if node.name else ""
            ins = [self.read(env, name) if name else None for name in node.input]
            if all(isinstance(e, _Const) for e in ins if e is not None):
                outs = self.fold(node, ins)
            else:
                outs = self.handler(node)(node, ins)
                outs = outs if isinstance(outs, list) else [outs]
            for name, entry in zip(node.output, outs):
                if name:
                    env[name] = self.stage_end(entry) if name in self.stage_ends else entry
        self.node = None

    def stage_end(self, entry):
        value = self.value(entry)
        if not _ir.is_float(value.dtype):
            self.fail("a stage cannot end at integer values")
        (out,) = self.body.ops(f"nn.stage_end {value.name} : {value.type}", [(value.shape, value.dtype)])
        return out

    def fold(self, node, ins):
        from onnx.reference import ReferenceEvaluator

        feeds = {name: e.array for name, e in zip(node.input, ins) if name}
        try:
            outs = ReferenceEvaluator(node).run(None, feeds)
        except Exception as error:  # the reference names what it lacks
            self.fail(f"evaluating it on constants failed: {error}")
        return [_Const(o) for o in outs]

    def attr(self, node, name, default=None):
        for a in node.attribute:
            if a.name == name:
                return self.onnx.helper.get_attribute_value(a)
        return default

    def axis(self, axis, rank):
        axis = int(axis)
        if not -rank <= axis < max(rank, 1):
            self.fail(f"axis {axis} is out of range for rank {rank}")
        return axis % max(rank, 1)

    # --- elementwise ----------------------------------------------------

    def identity(self, node, ins):
        if node.op_type == "Dropout" and len(ins) > 2 and ins[2] is not None:
            if not isinstance(ins[2], _Const) or bool(ins[2].array):
                self.fail("Dropout in training mode is not supported: export the module in eval mode")
        return [ins[0]] + [None] * (len(node.output) - 1)

    def unary(self, node, ins):
        x = self.value(ins[0])
        if not _ir.is_float(x.dtype):
            self.fail(f"'{node.op_type}' on integers is not supported")
        return self.body.unary(_UNARY[node.op_type], x)

    def binary(self, node, ins):
        if any(isinstance(e, _Mask) for e in ins) and node.op_type != "Mul":
            self.fail(f"'{node.op_type}' of booleans is not supported")
        a, b = self.aligned(ins)
        if not (_ir.is_float(a.dtype) and _ir.is_float(b.dtype)):
            self.fail(f"'{node.op_type}' on integers computed from the inputs is not supported")
        if a.dtype != b.dtype:
            self.fail(f"'{node.op_type}' of {a.dtype.name} and {b.dtype.name}")
        return self.body.binary(_BINARY[node.op_type], a, b, np.broadcast_shapes(a.shape, b.shape))

    def op_Reciprocal(self, node, ins):
        x = self.value(ins[0])
        return self.body.binary("div", self.body.constant(np.ones((), x.dtype)), x, x.shape)

    def op_Sigmoid(self, node, ins):
        x = self.value(ins[0])
        one = self.body.constant(np.ones((), x.dtype))
        e = self.body.unary("exp", self.body.unary("neg", x))
        return self.body.binary("div", one, self.body.binary("add", one, e, x.shape), x.shape)

    def op_Abs(self, node, ins):
        x = self.value(ins[0])
        return self.body.binary("maximum", x, self.body.unary("neg", x), x.shape)

    def op_Pow(self, node, ins):
        x = self.value(ins[0])
        exponent = self.const(ins[1], "the exponent of 'Pow'").reshape(-1)
        if exponent.size != 1:
            self.fail("'Pow' with more than one exponent is not supported")
        y = float(exponent[0])
        if y == 2.0:
            return self.body.binary("mul", x, x, x.shape)
        return self.body.op(f"nn.pow {x.name}, {_ir.float_attribute(y)} : {x.type}", x.shape, x.dtype)

    def op_Gelu(self, node, ins):
        x = self.value(ins[0])
        if self.attr(node, "approximate", b"none") in (b"tanh", "tanh"):
            return self.body.unary("gelu", x)
        # Exact: x * (1 + erf(x / sqrt 2)) / 2.
        half = self.body.constant(np.asarray(0.5, x.dtype))
        scaled = self.body.binary("mul", x, self.body.constant(np.asarray(1 / np.sqrt(2), x.dtype)), x.shape)
        one = self.body.constant(np.ones((), x.dtype))
        erf = self.body.binary("add", one, self.body.unary("erf", scaled), x.shape)
        return self.body.binary("mul", self.body.binary("mul", x, erf, x.shape), half, x.shape)

    def op_Cast(self, node, ins):
        to = self.onnx.helper.tensor_dtype_to_np_dtype(self.attr(node, "to"))
        return self.cast(ins[0], to)

    def op_CastLike(self, node, ins):
        like = ins[1].array.dtype if isinstance(ins[1], _Const) else self.value(ins[1]).dtype
        return self.cast(ins[0], like)

    def cast(self, entry, to):
        to = np.dtype(to)
        if isinstance(entry, _Const):
            # CastLike of a constant to a computed value's type (the
            # exporter's 1/sqrt(head dim)): still a constant.
            return _Const(entry.array.astype(to))
        if isinstance(entry, _Mask):
            if to == np.bool_:
                return entry
            if not _ir.is_float(to):
                self.fail("a boolean converted to an integer is not supported")
            return _Mask(self.body.cast(entry.value, to))
        x = self.value(entry)
        if to != np.bool_ and _ir.is_float(x.dtype) == _ir.is_float(to):
            # Between float types; ids stay ids (nn takes i32 and i64 alike).
            return self.body.cast(x, to) if _ir.is_float(to) else x
        self.fail(f"converting {x.dtype.name} to {to.name} is not supported")

    # --- comparisons and selection -------------------------------------

    def compare(self, node, a, b, negate):
        lhs, rhs = self.aligned([a, b])
        if not _ir.is_float(lhs.dtype):
            self.fail(f"'{node.op_type}' on integers computed from the inputs is not supported")
        shape = np.broadcast_shapes(lhs.shape, rhs.shape)
        mask = self.body.binary("greater_equal", lhs, rhs, shape)
        if negate:
            mask = self.body.binary("sub", self.body.constant(np.ones((), mask.dtype)), mask, shape)
        return _Mask(mask)

    # a >= b, and the strict ones as the negation of the opposite.
    def op_GreaterOrEqual(self, node, ins):
        return self.compare(node, ins[0], ins[1], False)

    def op_LessOrEqual(self, node, ins):
        return self.compare(node, ins[1], ins[0], False)

    def op_Less(self, node, ins):
        return self.compare(node, ins[0], ins[1], True)

    def op_Greater(self, node, ins):
        return self.compare(node, ins[1], ins[0], True)

    def op_Not(self, node, ins):
        if not isinstance(ins[0], _Mask):
            self.fail("'Not' of something other than a comparison is not supported")
        m = ins[0].value
        return _Mask(self.body.binary("sub", self.body.constant(np.ones((), m.dtype)), m, m.shape))

    def op_Where(self, node, ins):
        cond, x, y = ins
        # The computed side's type (a constant side is cast to it).
        dtype = next((self.value(e).dtype for e in (y, x) if not isinstance(e, _Const)), x.array.dtype)
        if not _ir.is_float(dtype):
            self.fail("'Where' between integer values is not supported")
        if isinstance(cond, _Const):
            cond = _Const(cond.array.astype(dtype))
        elif not isinstance(cond, _Mask):
            self.fail("'Where' with a condition that is not a comparison or a constant is not supported")
        shape = np.broadcast_shapes(self.shape(cond), self.shape(x), self.shape(y))
        c, t, f = (self.body.broadcast_to(v, shape) for v in self.aligned([cond, x, y], dtype))
        return self.body.op(f"nn.select {c.name}, {t.name}, {f.name} : {c.type}, {_ir.tensor_type(shape, dtype)}",
                            shape, dtype)

    # --- shapes ---------------------------------------------------------

    def op_Shape(self, node, ins):
        shape = np.asarray(self.shape(ins[0]), np.int64)
        start, end = self.attr(node, "start", 0), self.attr(node, "end", None)
        return _Const(shape[start:end])

    def op_Size(self, node, ins):
        return _Const(np.asarray(int(np.prod(self.shape(ins[0]))), np.int64))

    def reshape_entry(self, entry, shape):
        if isinstance(entry, _Mask):
            return _Mask(self.body.reshape(entry.value, shape))
        return self.body.reshape(self.value(entry), shape)

    def op_Reshape(self, node, ins):
        source = self.shape(ins[0])
        target = [int(d) for d in self.const(ins[1], "the shape of 'Reshape'")]
        if not self.attr(node, "allowzero", 0):
            target = [source[i] if d == 0 else d for i, d in enumerate(target)]
        if target.count(-1) > 1:
            self.fail("'Reshape' with more than one -1")
        if -1 in target:
            known = int(np.prod([d for d in target if d != -1]))
            target[target.index(-1)] = int(np.prod(source)) // known if known else 0
        if int(np.prod(target)) != int(np.prod(source)):
            self.fail(f"'Reshape' of {list(source)} to {target}")
        return self.reshape_entry(ins[0], target)

    def op_Flatten(self, node, ins):
        shape = self.shape(ins[0])
        axis = self.axis(self.attr(node, "axis", 1), len(shape) + 1) if shape else 0
        return self.reshape_entry(ins[0], (int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))))

    def op_Unsqueeze(self, node, ins):
        shape = list(self.shape(ins[0]))
        axes = ins[1].array if len(ins) > 1 and ins[1] is not None else self.attr(node, "axes")
        rank = len(shape) + len(axes)
        for a in sorted(self.axis(a, rank) for a in axes):
            shape.insert(a, 1)
        return self.reshape_entry(ins[0], shape)

    def op_Squeeze(self, node, ins):
        shape = self.shape(ins[0])
        axes = ins[1].array if len(ins) > 1 and ins[1] is not None else self.attr(node, "axes")
        drop = {self.axis(a, len(shape)) for a in axes} if axes is not None else {i for i, d in enumerate(shape) if d == 1}
        return self.reshape_entry(ins[0], [d for i, d in enumerate(shape) if i not in drop])

    def op_Transpose(self, node, ins):
        rank = len(self.shape(ins[0]))
        perm = [int(p) for p in self.attr(node, "perm", list(reversed(range(rank))))]
        return _transposed(ins[0], perm)

    def op_Expand(self, node, ins):
        x = self.value(ins[0])
        shape = np.broadcast_shapes(x.shape, tuple(int(d) for d in self.const(ins[1], "the shape of 'Expand'")))
        x = self.body.reshape(x, (1,) * (len(shape) - len(x.shape)) + x.shape)
        return self.body.broadcast_to(x, shape)

    def op_Slice(self, node, ins):
        x = self.value(ins[0])
        starts = self.const(ins[1], "the starts of 'Slice'")
        ends = self.const(ins[2], "the ends of 'Slice'")
        axes = self.const(ins[3], "the axes of 'Slice'") if len(ins) > 3 and ins[3] is not None else range(len(starts))
        steps = self.const(ins[4], "the steps of 'Slice'") if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
        begin, limit, stride = [0] * len(x.shape), list(x.shape), [1] * len(x.shape)
        for s, e, a, st in zip(starts, ends, axes, steps):
            a = self.axis(a, len(x.shape))
            if st <= 0:
                self.fail("'Slice' with a step below 1 is not supported")
            b, e, st = slice(int(s), int(e), int(st)).indices(x.shape[a])
            begin[a], limit[a], stride[a] = b, max(b, e), st
        shape = tuple(max(0, -(-(li - b) // st)) for b, li, st in zip(begin, limit, stride))
        return self.body.slice(x, begin, limit, stride, shape)

    def op_Concat(self, node, ins):
        values = self.aligned(ins)
        return self.body.concat(values, self.axis(self.attr(node, "axis"), len(values[0].shape)))

    def split(self, x, axis, sizes):
        return [x] if len(sizes) == 1 else self.body.split(x, axis, sizes)

    def op_Split(self, node, ins):
        x = self.value(ins[0])
        axis = self.axis(self.attr(node, "axis", 0), len(x.shape))
        if len(ins) > 1 and ins[1] is not None:
            sizes = [int(s) for s in self.const(ins[1], "the sizes of 'Split'")]
        else:
            n = self.attr(node, "num_outputs", len(node.output))
            chunk = -(-x.shape[axis] // n)
            sizes = [min(chunk, x.shape[axis] - i * chunk) for i in range(n)]
        return self.split(x, axis, sizes)

    def op_SplitToSequence(self, node, ins):
        x = self.value(ins[0])
        axis = self.axis(self.attr(node, "axis", 0), len(x.shape))
        if len(ins) > 1 and ins[1] is not None:
            split = self.const(ins[1], "the split of 'SplitToSequence'")
            if split.ndim == 0:
                chunk = int(split)
                sizes = [min(chunk, x.shape[axis] - i) for i in range(0, x.shape[axis], chunk)]
            else:
                sizes = [int(s) for s in split]
            return _Sequence(self.split(x, axis, sizes))
        parts = self.split(x, axis, [1] * x.shape[axis])
        if not self.attr(node, "keepdims", 1):
            parts = [self.body.reshape(p, p.shape[:axis] + p.shape[axis + 1:]) for p in parts]
        return _Sequence(parts)

    def op_SequenceAt(self, node, ins):
        if not isinstance(ins[0], _Sequence):
            self.fail("'SequenceAt' of something other than SplitToSequence")
        return ins[0].items[int(self.const(ins[1], "the position of 'SequenceAt'"))]

    # --- reductions and normalizations ----------------------------------

    def reduce(self, node, ins, name):
        x = self.value(ins[0])
        axes = ins[1].array if len(ins) > 1 and ins[1] is not None else self.attr(node, "axes")
        if axes is None or len(axes) == 0:
            if self.attr(node, "noop_with_empty_axes", 0):
                return x
            axes = range(len(x.shape))
        axes = [self.axis(a, len(x.shape)) for a in axes]
        keep = bool(self.attr(node, "keepdims", 1))
        if name == "reduce_min":
            return self.body.unary("neg", self.body.reduce("reduce_max", self.body.unary("neg", x), axes, keep))
        return self.body.reduce(name, x, axes, keep)

    def op_ReduceSum(self, node, ins):
        return self.reduce(node, ins, "reduce_sum")

    def op_ReduceMean(self, node, ins):
        return self.reduce(node, ins, "reduce_mean")

    def op_ReduceMax(self, node, ins):
        return self.reduce(node, ins, "reduce_max")

    def op_ReduceMin(self, node, ins):
        return self.reduce(node, ins, "reduce_min")

    def softmax(self, node, ins, name):
        x = self.value(ins[0])
        axis = self.axis(self.attr(node, "axis", -1), len(x.shape))
        return self.body.op(f"nn.{name} {x.name} {{axis = {axis} : i64}} : {x.type}", x.shape, x.dtype)

    def op_Softmax(self, node, ins):
        return self.softmax(node, ins, "softmax")

    def op_LogSoftmax(self, node, ins):
        return self.softmax(node, ins, "log_softmax")

    def normalization(self, node, ins):
        if any(node.output[1:]):
            self.fail("the mean and inverse deviation outputs are not supported")
        x = self.value(ins[0])
        if self.axis(self.attr(node, "axis", -1), len(x.shape)) != len(x.shape) - 1:
            self.fail("normalizing over more than the last dimension is not supported")
        width = x.shape[-1]
        weight = self.value(ins[1]) if len(ins) > 1 and ins[1] is not None else self.body.constant(np.ones(width, x.dtype))
        return x, weight, float(self.attr(node, "epsilon", 1e-5))

    def op_LayerNormalization(self, node, ins):
        x, weight, epsilon = self.normalization(node, ins)
        bias = self.value(ins[2]) if len(ins) > 2 and ins[2] is not None else self.body.constant(np.zeros(x.shape[-1], x.dtype))
        return [self.body.op(
            f"nn.layer_norm {x.name}, {weight.name}, {bias.name} {{epsilon = {_ir.float_attribute(epsilon)} : f64}} : "
            f"{x.type}, {weight.type}, {bias.type}", x.shape, x.dtype)] + [None] * (len(node.output) - 1)

    def op_RMSNormalization(self, node, ins):
        x, weight, epsilon = self.normalization(node, ins)
        return self.body.op(f"nn.rms_norm {x.name}, {weight.name} {{epsilon = {_ir.float_attribute(epsilon)} : f64}} : {x.type}, {weight.type}",
                            x.shape, x.dtype)

    # --- matrix products ------------------------------------------------

    def op_MatMul(self, node, ins):
        a, b = ins
        lhs = self.value(a)
        # A transposed matrix operand (a Linear's weight) is read through
        # the matmul's transpose flag instead of being moved.
        rank = len(b.perm) if isinstance(b, _Transposed) else 0
        swap = len(lhs.shape) >= 2 and rank >= 2 and b.perm == list(range(rank - 2)) + [rank - 1, rank - 2]
        rhs = self.value(b.source if swap else b)
        rhs_shape = rhs.shape[:-2] + (rhs.shape[-1], rhs.shape[-2]) if swap else rhs.shape
        if lhs.dtype != rhs.dtype or not _ir.is_float(lhs.dtype):
            self.fail(f"'MatMul' of {lhs.dtype.name} and {rhs.dtype.name} is not supported")
        if len(lhs.shape) < 2 or len(rhs_shape) < 2:
            # A vector operand: as a 1-row or 1-column matrix.
            lhs2 = self.body.reshape(lhs, (1,) + lhs.shape) if len(lhs.shape) == 1 else lhs
            rhs2 = self.body.reshape(rhs, rhs.shape + (1,)) if len(rhs.shape) == 1 else rhs
            out = self.matmul(lhs2, rhs2, [], rhs2.shape)
            shape = out.shape[:-2] + ((out.shape[-2],) if len(lhs.shape) > 1 else ()) + ((out.shape[-1],) if len(rhs.shape) > 1 else ())
            return self.body.reshape(out, shape)
        return self.matmul(lhs, rhs, ["transpose_rhs"] if swap else [], rhs_shape)

    def matmul(self, lhs, rhs, flags, rhs_shape):
        if lhs.shape[-1] != rhs_shape[-2]:
            self.fail(f"'MatMul' of {list(lhs.shape)} and {list(rhs_shape)}")
        if len(rhs_shape) == 2 and len(lhs.shape) >= 2:
            shape = lhs.shape[:-1] + (rhs_shape[-1],)
        else:
            batch = tuple(np.broadcast_shapes(lhs.shape[:-2], rhs_shape[:-2]))
            lhs = self.body.broadcast_to(self.body.reshape(lhs, (1,) * (len(batch) + 2 - len(lhs.shape)) + lhs.shape), batch + lhs.shape[-2:])
            rhs = self.body.broadcast_to(self.body.reshape(rhs, (1,) * (len(batch) + 2 - len(rhs.shape)) + rhs.shape), batch + rhs.shape[-2:])
            shape = batch + (lhs.shape[-2], rhs_shape[-1])
        attrs = " {" + ", ".join(flags) + "}" if flags else ""
        return self.body.op(f"nn.matmul {lhs.name}, {rhs.name}{attrs} : {lhs.type}, {rhs.type} -> {_ir.tensor_type(shape, lhs.dtype)}",
                            shape, lhs.dtype)

    def op_Gemm(self, node, ins):
        a = _Transposed(ins[0], [1, 0]) if self.attr(node, "transA", 0) else ins[0]
        b = _Transposed(ins[1], [1, 0]) if self.attr(node, "transB", 0) else ins[1]
        y = self.op_MatMul(node, [self.value(a) if isinstance(a, _Transposed) else a, b])
        alpha, beta = float(self.attr(node, "alpha", 1.0)), float(self.attr(node, "beta", 1.0))
        if alpha != 1.0:
            y = self.body.binary("mul", y, self.body.constant(np.asarray(alpha, y.dtype)), y.shape)
        if len(ins) > 2 and ins[2] is not None and beta != 0.0:
            (c,) = self.aligned([ins[2]])
            c = self.body.reshape(c, (1,) * (2 - len(c.shape)) + c.shape) if len(c.shape) < 2 else c
            if beta != 1.0:
                c = self.body.binary("mul", c, self.body.constant(np.asarray(beta, c.dtype)), c.shape)
            y = self.body.binary("add", y, c, y.shape)
        return y

    # --- attention ------------------------------------------------------

    # Inputs and outputs of Attention (opsets 23 to 25) beyond Q, K, V and Y,
    # by position, and why nn.attention cannot take them.
    _ATTENTION_INPUTS = {
        3: "an attn_mask is not supported: nn.attention masks causally (is_causal=1) or not at all",
        4: "past_key (a KV cache) is not supported: Tandem trains on whole sequences",
        5: "past_value (a KV cache) is not supported: Tandem trains on whole sequences",
        6: "nonpad_kv_seqlen (padded keys) is not supported: nn.attention attends to every key",
    }
    _ATTENTION_OUTPUTS = {1: "present_key", 2: "present_value", 3: "qk_matmul_output"}

    def op_Attention(self, node, ins):
        """nn.attention. The 3-D form is its layout already (B×S×(heads·H),
        head h in columns [h·H, (h+1)·H)); the 4-D form B×N×S×H moves the
        heads beside the head size and back. ONNX repeats each key and value
        head over consecutive query heads, as nn.attention's kv_heads does."""
        for i, why in self._ATTENTION_INPUTS.items():
            if len(ins) > i and ins[i] is not None:
                self.fail(why)
        for i, name in self._ATTENTION_OUTPUTS.items():
            if len(node.output) > i and node.output[i] in self.consumed:
                self.fail(f"its output {name} is used; Tandem imports only Y")
        softcap = float(self.attr(node, "softcap", 0.0))
        if softcap != 0.0:
            self.fail(f"softcap {softcap!r} is not supported by nn.attention")
        if self.attr(node, "left_window_size", -1) != -1 or self.attr(node, "right_window_size", -1) != -1:
            self.fail("a local window (left_window_size, right_window_size) is not supported by nn.attention")
        shapes = [tuple(self.shape(e)) for e in ins[:3]]
        rank = len(shapes[0])
        if rank not in (3, 4) or any(len(s) != rank for s in shapes):
            self.fail(f"inputs of ranks {[len(s) for s in shapes]} (3-D or 4-D, all alike, are supported)")
        if rank == 3:
            heads, kv_heads = self.attr(node, "q_num_heads"), self.attr(node, "kv_num_heads")
            if heads is None or kv_heads is None:
                self.fail("3-D inputs need q_num_heads and kv_num_heads")
            (b, t, dq), (bk, s, dk), (bv, sv, dv) = shapes
            if dq % heads or dk % kv_heads or dv % kv_heads:
                self.fail(f"hidden sizes {dq}, {dk}, {dv} are not multiples of {heads} and {kv_heads} heads")
            head, key_head, value_head, value_heads = dq // heads, dk // kv_heads, dv // kv_heads, kv_heads
        else:
            (b, heads, t, head), (bk, kv_heads, s, key_head), (bv, value_heads, sv, value_head) = shapes
            for name, count in (("q_num_heads", heads), ("kv_num_heads", kv_heads)):
                if self.attr(node, name, count) != count:
                    self.fail(f"{name} {self.attr(node, name)} disagrees with the inputs' {count} heads")
        if len({b, bk, bv}) != 1 or s != sv or value_heads != kv_heads or key_head != head:
            self.fail(f"Q, K and V of shapes {[list(x) for x in shapes]} do not fit together")
        if value_head != head:
            self.fail(f"a value head size ({value_head}) other than the query and key head size ({head}) is not "
                      "supported by nn.attention")
        if heads % kv_heads:
            self.fail(f"{heads} query heads are not a multiple of {kv_heads} key and value heads")
        causal = bool(self.attr(node, "is_causal", 0))
        if causal and s != t:
            self.fail(f"causal attention of {t} queries over {s} keys is not supported: nn.attention's causal "
                      "mask needs as many keys as queries")
        if rank == 3:
            q, k, v = (self.value(e) for e in ins[:3])
        else:
            q, k, v = (self.body.reshape(self.value(_transposed(e, [0, 2, 1, 3])), (b, n, w * head))
                       for e, n, w in zip(ins[:3], (t, s, s), (heads, kv_heads, kv_heads)))
        if not _ir.is_float(q.dtype) or q.dtype != k.dtype or q.dtype != v.dtype:
            self.fail(f"'Attention' of {q.dtype.name}, {k.dtype.name} and {v.dtype.name} is not supported")
        precision = self.attr(node, "softmax_precision")
        if precision is not None and self.onnx.helper.tensor_dtype_to_np_dtype(precision) != q.dtype:
            self.fail("a softmax_precision other than the inputs' type is not supported: choose mixed precision "
                      "with tandem.compile(precision=...)")
        scale = self.attr(node, "scale")
        y = self.body.attention(q, k, v, heads, kv_heads, causal, None if scale is None else float(scale))
        if rank == 4:
            y = _Transposed(self.body.reshape(y, (b, t, heads, head)), [0, 2, 1, 3])
        return [y] + [None] * (len(node.output) - 1)

    # --- gathers and losses ---------------------------------------------

    def op_Gather(self, node, ins):
        data, indices = ins
        table = self.value(data)
        axis = self.axis(self.attr(node, "axis", 0), len(table.shape))
        if isinstance(indices, _Const):
            ids = indices.array.astype(np.int64)
            ids = np.where(ids < 0, ids + table.shape[axis], ids)
            flat = ids.reshape(-1)
            if flat.size and np.array_equal(flat, np.arange(flat[0], flat[0] + flat.size)):
                # A run of consecutive rows (wpe[arange(T)]): a slice.
                begin = [0] * len(table.shape)
                limit = list(table.shape)
                begin[axis], limit[axis] = int(flat[0]), int(flat[0]) + flat.size
                shape = list(table.shape)
                shape[axis] = flat.size
                piece = self.body.slice(table, begin, limit, [1] * len(begin), shape)
                return self.body.reshape(piece, table.shape[:axis] + ids.shape + table.shape[axis + 1:])
            if axis != 0 or len(table.shape) != 2:
                self.fail("'Gather' of constant, non-consecutive indices is supported for rows of a matrix only")
            indices = self.body.constant(ids)
        ids = self.value(indices)
        if _ir.is_float(ids.dtype):
            self.fail("'Gather' with float indices")
        if axis != 0 or len(table.shape) != 2:
            self.fail("'Gather' of computed indices is supported for rows of a matrix (an embedding) only")
        shape = ids.shape + table.shape[1:]
        return self.body.op(f"nn.embedding {table.name}, {ids.name} : {table.type}, {ids.type} -> {_ir.tensor_type(shape, table.dtype)}",
                            shape, table.dtype)

    def loss_targets(self, node, ins, classes):
        if len(ins) > 2 and ins[2] is not None:
            self.fail("class weights are not supported")
        ignore = self.attr(node, "ignore_index")
        if ignore is not None and 0 <= int(ignore) < classes:
            self.fail(f"ignore_index {ignore} is a class; Tandem's losses count every position")
        reduction = self.attr(node, "reduction", b"mean")
        reduction = reduction.decode() if isinstance(reduction, bytes) else reduction
        if reduction not in ("mean", "sum"):
            self.fail(f"reduction '{reduction}' is not supported: the loss must be a scalar")
        targets = self.value(ins[1])
        if _ir.is_float(targets.dtype):
            self.fail("float targets are not supported")
        return targets, reduction

    def move_classes_last(self, scores):
        """[N, C, d...] (ONNX's class axis 1) as [N, d..., C]."""
        if len(scores.shape) <= 2:
            return scores
        rank = len(scores.shape)
        return self.body.transpose(scores, [0] + list(range(2, rank)) + [1])

    def op_SoftmaxCrossEntropyLoss(self, node, ins):
        if any(node.output[1:]):
            self.fail("the log-probability output is not supported")
        scores = self.move_classes_last(self.value(ins[0]))
        classes = scores.shape[-1]
        targets, reduction = self.loss_targets(node, ins, classes)
        loss = self.body.op(f"nn.cross_entropy {scores.name}, {targets.name} : {scores.type}, {targets.type} -> "
                            f"{_ir.tensor_type((), scores.dtype)}", (), scores.dtype)
        return self.total(loss, targets, reduction)

    def op_NegativeLogLikelihoodLoss(self, node, ins):
        logp = self.move_classes_last(self.value(ins[0]))
        classes = logp.shape[-1]
        targets, reduction = self.loss_targets(node, ins, classes)
        hot = self.body.op(f"nn.one_hot {targets.name} {{classes = {classes} : i64}} : {targets.type} -> "
                           f"{_ir.tensor_type(logp.shape, logp.dtype)}", logp.shape, logp.dtype)
        picked = self.body.binary("mul", hot, logp, logp.shape)
        name = "reduce_mean" if reduction == "mean" else "reduce_sum"
        per_position = self.body.reduce("reduce_sum", picked, [len(logp.shape) - 1])
        return self.body.unary("neg", self.body.reduce(name, per_position, range(len(per_position.shape))))

    def total(self, mean, targets, reduction):
        if reduction == "mean":
            return mean
        count = self.body.constant(np.asarray(int(np.prod(targets.shape)), mean.dtype))
        return self.body.binary("mul", mean, count, ())


def _load(onnx, model):
    if isinstance(model, (str, pathlib.Path)):
        return onnx.load(str(model)), pathlib.Path(model)
    return model, None


def _stage_end_values(graph, stage_ends):
    """The values `stage_ends` names: a value of the graph, or a PyTorch
    module (its fully qualified name, from the scopes the exporter records):
    the output of the module's last node."""
    produced = {o for n in graph.node for o in n.output} | {i.name for i in graph.input}
    values = set()
    for end in stage_ends:
        if end in produced:
            values.add(end)
            continue
        last = None
        for node in graph.node:
            for prop in node.metadata_props:
                if prop.key == "pkg.torch.onnx.name_scopes" and end in json.loads(prop.value.replace("'", '"')):
                    last = node
        if last is None:
            raise UnsupportedError(f"stage end '{end}' is neither a value of the graph nor a module the exporter recorded")
        values.add(last.output[0])
    return values


def from_onnx(model, trainable=None, ties=None, stage_ends=(), function="forward"):
    """Imports an ONNX graph that computes a scalar loss as a Tandem model.

    `model` is a path or an onnx.ModelProto. `trainable` lists the
    initializers that are parameters (PyTorch's `named_parameters()` names)
    and `ties` maps an initializer to the parameter it is tied to; both
    default to the export script's `<stem>.parameters.json` beside the file,
    and without one every floating-point initializer is trainable.
    `stage_ends` lists where pipeline stages end: PyTorch module names
    (`h.0`: after that block) or value names of the graph.
    """
    import onnx

    from .model import Model

    proto, path = _load(onnx, model)
    if path is not None and (trainable is None or ties is None):
        sidecar = path.with_name(path.stem + ".parameters.json")
        if sidecar.exists():
            described = json.loads(sidecar.read_text())
            trainable = described.get("trainable") if trainable is None else trainable
            ties = described.get("ties") if ties is None else ties
    ties = dict(ties or {})
    graph = proto.graph
    initializers = {i.name: onnx.numpy_helper.to_array(i) for i in graph.initializer}
    names = set(trainable) if trainable is not None else {n for n, a in initializers.items() if np.issubdtype(a.dtype, np.floating)}
    unknown = sorted(n for n in names if n not in initializers and n not in ties.values())
    if unknown:
        raise UnsupportedError(f"trainable parameters {unknown} are not initializers of the graph")

    importer = _Importer(onnx)
    importer.stage_ends = _stage_end_values(graph, stage_ends)
    env = {}
    values = {}
    for name, array in initializers.items():
        target = ties.get(name, name)
        if target not in names:
            env[name] = _Const(array)
            continue
        if not np.array_equal(values.setdefault(target, array), array):
            raise UnsupportedError(f"initializer '{name}' is tied to '{target}' but holds other values")
        importer.parameters[name] = (target, values[target])

    arguments, inputs = [], []
    for graph_input in graph.input:
        if graph_input.name in initializers:
            continue
        tensor = graph_input.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tensor.shape.dim]
        if any(d is None for d in dims):
            raise UnsupportedError(
                f"input '{graph_input.name}' has a dynamic shape {[d.dim_param or d.dim_value for d in tensor.shape.dim]}; "
                "export with static shapes (one microbatch)")
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        _ir.element_type(dtype)
        value = _ir.Value(f"%arg{len(arguments)}", dims, dtype)
        arguments.append(value)
        inputs.append((tuple(dims), np.dtype(dtype)))
        env[graph_input.name] = value

    importer.run(graph, env)
    if len(graph.output) != 1:
        raise UnsupportedError(f"the graph must have one output, the loss; it has {len(graph.output)}")
    loss = importer.read(env, graph.output[0].name)
    if isinstance(loss, _Const):
        raise UnsupportedError("the loss does not depend on the parameters or the inputs")
    result = importer.value(loss)
    if result.shape != () or not _ir.is_float(result.dtype):
        raise UnsupportedError(f"the graph's output must be a scalar floating-point loss; it is {result.type}")
    if not importer.declared:
        raise UnsupportedError("the loss reads no parameter: there is nothing to train")
    declared = [(n, a.shape, a.dtype) for n, a in importer.declared.items()]
    header = [f"Generated by tandem.from_onnx from {path.name if path else 'a model'}",
              f"parameters: {sum(int(np.prod(s)) for _, s, _ in declared)}"]
    text = _ir.module_text(declared, function, arguments, importer.body, result, header)
    return Model(text, dict(importer.declared), inputs)
