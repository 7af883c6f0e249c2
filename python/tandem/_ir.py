"""Writing nn dialect IR as text.

Debian ships no MLIR Python bindings, so the importers build the module as
text through this small builder: SSA names, tensor types, constants (hex
for anything but a splat) and source locations, so that a diagnostic from
tandemc points at the user's Python line.
"""

import numpy as np

# numpy dtype name -> MLIR element type. Booleans are not an nn type: the
# importers turn masks into float tensors themselves.
_ELEMENT_TYPES = {
    "float64": "f64",
    "float32": "f32",
    "float16": "f16",
    "bfloat16": "bf16",
    "float8_e4m3fn": "f8E4M3FN",
    "float8_e5m2": "f8E5M2",
    "int32": "i32",
    "int64": "i64",
}


class UnsupportedError(Exception):
    """A model uses something Tandem cannot import; the message names it and
    where it came from."""


def element_type(dtype):
    name = np.dtype(dtype).name
    if name not in _ELEMENT_TYPES:
        raise UnsupportedError(f"element type {name} has no nn equivalent")
    return _ELEMENT_TYPES[name]


def is_float(dtype):
    return element_type(dtype) not in ("i32", "i64")


def tensor_type(shape, dtype):
    dims = "".join(f"{int(d)}x" for d in shape)
    return f"tensor<{dims}{element_type(dtype)}>"


def _quote(text):
    return text.replace("\\", "\\\\").replace('"', '\\"')


def location(file_name, line, column=0):
    """An MLIR file location, or "" when the place is unknown."""
    if not file_name or line is None:
        return ""
    return f' loc("{_quote(str(file_name))}":{int(line)}:{max(int(column or 0), 0)})'


def symbol(name):
    """`@name`, quoted when the name is not a bare identifier."""
    bare = name and (name[0].isalpha() or name[0] == "_") and all(
        c.isalnum() or c in "_.$-" for c in name
    )
    return f"@{name}" if bare else f'@"{_quote(name)}"'


def dense(array):
    """The `dense<...>` literal of a numpy array: a splat as one value,
    anything else as little-endian hex bytes (exact, and compact)."""
    array = np.asarray(array)
    flat = array.reshape(-1)
    if flat.size > 0 and np.all(flat.view(np.uint8).reshape(flat.size, -1) == flat[:1].view(np.uint8)):
        value = flat[0]
        if is_float(array.dtype):
            return f"dense<{_float_literal(value, array.dtype)}>"
        return f"dense<{int(value)}>"
    data = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False)
    return f'dense<"0x{data.tobytes().hex().upper()}">'


def _float_literal(value, dtype):
    # A hex literal of the value's bits is exact for every float type.
    bits = np.asarray(value, dtype=dtype).reshape(1).view(f"u{np.dtype(dtype).itemsize}")[0]
    return f"0x{int(bits):0{2 * np.dtype(dtype).itemsize}X}"


# The discardable unit attribute of an op whose results the backward pass
# recomputes instead of keeping (`tandemc --remat annotated`).
RECOMPUTE = "nn.recompute"
# Ops with nothing to recompute (a constant, a parameter read) and the stage
# marker (a cut of the pipeline, not a computation): never marked.
NEVER_RECOMPUTED = frozenset({"nn.constant", "nn.param", "nn.stage_end"})

_CLOSING = {"<": ">", "[": "]", "{": "}", "(": ")"}


def with_unit_attribute(text, name):
    """The op text `text` (`nn.op operands [attr-dict] : types`, no result
    names) with the unit attribute `name` in its attribute dictionary: nn
    ops' formats put `attr-dict` just before the first ` : ` outside
    brackets and strings, so the attribute joins a `{...}` that ends there
    or comes as its own `{name}`."""
    stack = []
    groups = []  # (start, end) of the top-level {...} groups
    i = 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in _CLOSING:
            stack.append((_CLOSING[c], i))
        elif c in ">]})" and stack and stack[-1][0] == c:
            if not (c == ">" and text[i - 1] == "-"):  # `->` is no bracket
                _, start = stack.pop()
                if c == "}" and not stack:
                    groups.append((start, i))
        elif not stack and text.startswith(" : ", i):
            head, tail = text[:i], text[i:]
            if groups and groups[-1][1] == i - 1:
                start, end = groups[-1]
                inside = text[start + 1 : end].strip()
                if name in [a.split("=")[0].strip() for a in _top_level_split(inside)]:
                    return text
                joined = f"{inside}, {name}" if inside else name
                return f"{text[:start]}{{{joined}}}{tail}"
            return f"{head} {{{name}}}{tail}"
        i += 1
    raise ValueError(f"no attribute dictionary position in '{text}'")


def _top_level_split(text):
    """`text` cut at its commas outside brackets and strings."""
    parts, depth, current, quoted = [], 0, [], False
    for i, c in enumerate(text):
        if quoted:
            quoted = not (c == '"' and text[i - 1] != "\\")
        elif c == '"':
            quoted = True
        elif c in "<[{(":
            depth += 1
        elif c in ">]})" and not (c == ">" and i and text[i - 1] == "-"):
            depth -= 1
        elif c == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(c)
    if current:
        parts.append("".join(current))
    return parts


class Value:
    """An SSA value of the module being written."""

    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name = name
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype)

    def __repr__(self):
        return f"{self.name} : {self.type}"


class FunctionBuilder:
    """The body of one func.func: ops appended in order."""

    def __init__(self):
        self.lines = []
        self._next = 0
        self._constants = {}
        self.loc = ""
        # While set, the ops appended carry `nn.recompute` (jax.checkpoint):
        # like `loc`, the importer sets it around the equations it imports.
        self.recompute = False

    def fresh(self, shape, dtype):
        name = f"%v{self._next}"
        self._next += 1
        return Value(name, shape, dtype)

    def op(self, text, shape, dtype):
        """Appends `%r = <text>` and returns %r (of the given type)."""
        result = self.fresh(shape, dtype)
        self.lines.append(f"    {result.name} = {self._marked(text)}{self.loc}")
        return result

    def ops(self, text, results):
        """Appends an op with several results [(shape, dtype)]."""
        values = [self.fresh(s, d) for s, d in results]
        names = ", ".join(v.name for v in values)
        self.lines.append(f"    {names} = {self._marked(text)}{self.loc}")
        return values

    def _marked(self, text):
        if not self.recompute or text.split(" ", 1)[0] in NEVER_RECOMPUTED:
            return text
        return with_unit_attribute(text, RECOMPUTE)

    def constant(self, array):
        array = np.asarray(array)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._constants:
            saved, self.loc = (self.loc, self.recompute), ""
            self.recompute = False
            self._constants[key] = self.op(
                f"nn.constant {dense(array)} : {tensor_type(array.shape, array.dtype)}",
                array.shape,
                array.dtype,
            )
            self.loc, self.recompute = saved
        return self._constants[key]

    # Ops whose text the importers share.

    def unary(self, name, x, **attrs):
        return self.op(f"nn.{name} {x.name}{_attrs(attrs)} : {x.type}", x.shape, x.dtype)

    def binary(self, name, a, b, shape, dtype=None):
        dtype = a.dtype if dtype is None else dtype
        return self.op(
            f"nn.{name} {a.name}, {b.name} : {a.type}, {b.type} -> {tensor_type(shape, dtype)}",
            shape,
            dtype,
        )

    def reshape(self, x, shape):
        shape = tuple(int(d) for d in shape)
        if shape == x.shape:
            return x
        return self.op(f"nn.reshape {x.name} : {x.type} to {tensor_type(shape, x.dtype)}", shape, x.dtype)

    def broadcast_to(self, x, shape):
        shape = tuple(int(d) for d in shape)
        if shape == x.shape:
            return x
        return self.op(
            f"nn.broadcast_to {x.name} : {x.type} to {tensor_type(shape, x.dtype)}", shape, x.dtype
        )

    def transpose(self, x, permutation):
        permutation = [int(p) for p in permutation]
        if permutation == list(range(len(permutation))):
            return x
        shape = tuple(x.shape[p] for p in permutation)
        return self.op(
            f"nn.transpose {x.name}, [{', '.join(map(str, permutation))}] : {x.type} -> "
            f"{tensor_type(shape, x.dtype)}",
            shape,
            x.dtype,
        )

    def cast(self, x, dtype):
        if np.dtype(dtype) == x.dtype:
            return x
        return self.op(f"nn.cast {x.name} : {x.type} to {tensor_type(x.shape, dtype)}", x.shape, dtype)

    def slice(self, x, begin, limit, stride, shape):
        """x[begin:limit:stride] per dimension (`shape` is the result's)."""
        if list(begin) == [0] * len(begin) and tuple(limit) == x.shape and set(stride) <= {1}:
            return x
        fmt = lambda v: "[" + ", ".join(str(int(i)) for i in v) + "]"  # noqa: E731
        return self.op(
            f"nn.slice {x.name} {fmt(begin)} to {fmt(limit)} step {fmt(stride)} : {x.type} -> "
            f"{tensor_type(shape, x.dtype)}",
            shape,
            x.dtype,
        )

    def concat(self, values, axis):
        shape = list(values[0].shape)
        shape[axis] = sum(v.shape[axis] for v in values)
        types = ", ".join(v.type for v in values)
        return self.op(
            f"nn.concat {', '.join(v.name for v in values)} {{axis = {int(axis)} : i64}} : ({types}) -> "
            f"{tensor_type(shape, values[0].dtype)}",
            shape,
            values[0].dtype,
        )

    def split(self, x, axis, sizes):
        """x cut along `axis` into pieces of `sizes`."""
        results = []
        for size in sizes:
            shape = list(x.shape)
            shape[axis] = int(size)
            results.append((tuple(shape), x.dtype))
        return self.ops(
            f"nn.split {x.name} {{axis = {int(axis)} : i64, sizes = array<i64: {', '.join(str(int(n)) for n in sizes)}>}} : "
            f"{x.type} -> {', '.join(tensor_type(s, d) for s, d in results)}",
            results,
        )

    def attention(self, q, k, v, heads, kv_heads, causal, scale=None):
        """nn.attention of B×Tq×(heads·Dh) queries over B×Tk×(kv_heads·Dh)
        keys and values; `kv_heads` is written only where it differs from
        `heads`, `scale` only when given (the op's default is 1/sqrt(Dh))."""
        attrs = ["causal"] if causal else []
        attrs.append(f"heads = {int(heads)} : i64")
        if int(kv_heads) != int(heads):
            attrs.append(f"kv_heads = {int(kv_heads)} : i64")
        if scale is not None:
            attrs.append(f"scale = {float_attribute(scale)} : f64")
        return self.op(
            f"nn.attention {q.name}, {k.name}, {v.name} {{{', '.join(attrs)}}} : {q.type}, {k.type}, "
            f"{v.type} -> {q.type}",
            q.shape,
            q.dtype,
        )

    def reduce(self, name, x, axes, keepdims=False):
        axes = sorted(int(a) for a in axes)
        if not axes:
            return x
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keepdims else tuple(
            d for i, d in enumerate(x.shape) if i not in axes
        )
        keep = " keepdims" if keepdims else ""
        return self.op(
            f"nn.{name} {x.name} [{', '.join(map(str, axes))}]{keep} : {x.type} -> "
            f"{tensor_type(shape, x.dtype)}",
            shape,
            x.dtype,
        )


def float_attribute(value):
    """A float attribute's literal, exact: Python's shortest round-trip
    form, with the decimal point MLIR's float literals need (`1e-05` lexes
    as the integer 1 there)."""
    text = repr(float(value))
    if not np.isfinite(float(value)):
        raise UnsupportedError(f"the float attribute {text} is not finite")
    if "." not in text:
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0" + (f"e{exponent}" if exponent else "")
    return text


def _attrs(attrs):
    if not attrs:
        return ""
    return " {" + ", ".join(f"{k} = {v}" for k, v in attrs.items()) + "}"


def module_text(parameters, function_name, arguments, body, result, header=()):
    """The whole module: `parameters` [(name, shape, dtype)], one function."""
    out = [f"// {line}" for line in header]
    out.append("module {")
    for name, shape, dtype in parameters:
        out.append(f"  nn.parameter {symbol(name)} : {tensor_type(shape, dtype)} = zeros")
    args = ", ".join(f"{a.name}: {a.type}" for a in arguments)
    out.append(f"  func.func @{function_name}({args}) -> {result.type} {{")
    out.extend(body.lines)
    out.append(f"    return {result.name} : {result.type}")
    out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"
