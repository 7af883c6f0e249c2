"""Tolerances for comparisons across implementations, derived from the
arithmetic of the compared function (docs/testing.md, "Tolerances").

The suites compare one function computed two ways: by tandem-eval (every op
computed in double and rounded once to its element type) and by XLA (JAX in
f32) or by Tandem's generated C++ (f32 GEMMs through OpenBLAS, every other
op bitwise the evaluator's arithmetic). Neither the summation order of
XLA's or OpenBLAS's kernels nor their vector width is the same on every
CPU, so a tolerance must bound what any order can do, not what one machine
did.

The model, per op, relative to the op's result (u = 2^-24, f32's unit
roundoff):

- A length-n reduction (a sum, a dot product, a mean) evaluated in f32 in
  any order carries at most gamma(n - 1) = (n - 1) u / (1 - (n - 1) u)
  relative to the sum of the terms' magnitudes (Higham, "Accuracy and
  Stability of Numerical Algorithms", 2nd ed., section 3.1; the bound holds
  for every summation tree). For terms of one sign that is the relative
  error of the result: the exact bounds below use it.
- Rounding errors behave as independent, mean-zero random variables, so a
  length-n reduction's error is at most LAMBDA * sqrt(n) * u with
  probability at least 1 - 2 exp(-LAMBDA^2 / 2) (Higham and Mary, "A New
  Approach to Probabilistic Rounding Error Analysis", SIAM J. Sci. Comput.
  41(5), 2019, Theorem 3.1). Model-wide bounds use this one: the worst case
  compounds through a deep network into tolerances no comparison could
  fail. LAMBDA = 3 (at most 2.2% of reductions exceed it, and a tensor's
  norm-wise error averages over many of them).
- The other side (tandem-eval) rounds each result once: u per op.
- A result stored as bf16 or f16 (mixed precision) is rounded from f32 by
  both sides; where the two f32 values differ by a relative e, they round
  to neighbours with probability below e 2^p (a p-bit type's spacing is at
  least 2^-p of the value) and then differ by one spacing, at most
  2^(1-p) of the value: the mean square of the difference is below
  e 2^(2-p) of the squared value, a norm-wise relative error of
  sqrt(e 2^(2-p)), and never more than the one spacing 2^(1-p)
  (`narrow_rounding_bound`; LAMBDA times that here). The next ops inherit
  it, so through a deep chain every narrow rounding adds up to a spacing:
  bf16 comparisons get loose bounds (the model does not see the loss
  averaging independent per-position errors).
- An op's result inherits the largest error of its operands (first order,
  with the op's condition number taken as 1: these models' layer norms see
  centred inputs, their logits are far below 1, and the loss of a
  near-uniform prediction is insensitive to them).

`chain_bound` walks a function's ops in order and returns the bound on its
results; "jax" counts every op (XLA recomputes all of them in f32),
"native" only the GEMMs (the generated code's other kernels compute in
double exactly as the evaluator does: unittests/Target/CPU checks them
bitwise), "cuda" every op with the bound docs/cuda-backend.md ("Numerics")
derives for its kernel (the CUDA target's kernels compute in f32 with
their own transcendentals; unittests/Target/CUDA checks each kernel
against that bound).
"""

import math
import re

U32 = 2.0**-24
LAMBDA = 3.0


def gamma(n, u=U32):
    """Higham's gamma_n = n u / (1 - n u): the worst-case relative error of
    n successive roundings (a sum of n + 1 terms of one sign, in any order)."""
    assert n * u < 1, n
    return n * u / (1 - n * u)


def probabilistic(n, u=U32, lam=LAMBDA):
    """LAMBDA * sqrt(n) * u: the probabilistic bound of a length-n reduction."""
    return lam * math.sqrt(n) * u


# The precision p (significand bits) of narrow result types.
_NARROW_BITS = {"bf16": 8, "f16": 11}


def narrow_rounding_bound(e, bits):
    """The norm-wise relative difference of two values that differ by a
    relative e before both are rounded to a `bits`-bit type: sqrt(e 2^(2-p))
    (the module docstring), at most one spacing 2^(1-p)."""
    return min(math.sqrt(e * 2.0 ** (2 - bits)), 2.0 ** (1 - bits))


def _element_type(type_text):
    inner = re.fullmatch(r"tensor<(?:.*x)?(\w+)>", type_text.strip())
    return inner.group(1) if inner else None


def _shape(type_text):
    inner = re.fullmatch(r"tensor<(.*)>", type_text.strip())
    if not inner:
        return None
    return tuple(int(d) for d in inner.group(1).split("x")[:-1])


def _types(text):
    return [_shape(t) for t in re.findall(r"tensor<[^>]*>", text)]


def _last(shape):
    return shape[-1] if shape else 1


# The CUDA kernels' own rounding errors, in units of u, per op
# (docs/cuda-backend.md, "Numerics"); an op not listed rounds once. Row
# ops: x - m (1), exp (4) and the division (1) for a softmax; log adds
# log's 4 and the subtraction's 1; the norms: the reciprocal square root
# (2) and three products.
_CUDA_UNITS = {
    "exp": 4, "log": 4, "sin": 4, "cos": 4, "tanh": 6, "silu": 8,
    "gelu": 12, "rsqrt": 2, "pow": 16,
    # tanh (6), its argument (3), the two terms' products and sums (8) and
    # the cotangent's product
    "gelu_grad": 18,
    "softmax": 6, "log_softmax": 11, "cross_entropy": 11,
    "cross_entropy_grad": 7, "layer_norm": 5, "rms_norm": 5,
    # r (2), x̂'s product, g·w and its products with x̂ and r, the mean's
    # product and dx's subtractions
    "layer_norm_grad": 10, "rms_norm_grad": 8,
    # Data movement is exact.
    "reshape": 0, "transpose": 0, "slice": 0, "concat": 0, "split": 0,
    "broadcast_to": 0, "embedding": 0, "stage_end": 0,
}


def _reduction_lengths(op, attrs, axes, operand_types):
    """The lengths of the reductions one op performs, in sequence along its
    longest path (an empty list for elementwise and data-movement ops)."""
    first = operand_types[0] if operand_types else None
    if op == "matmul":
        lhs = operand_types[0]
        transpose = re.search(r"\btranspose_lhs\b", attrs)
        return [lhs[-2] if transpose else lhs[-1]]
    if op == "attention":
        q, k = operand_types[0], operand_types[1]
        heads = int(re.search(r"\bheads = (\d+)", attrs).group(1))
        head_dim = q[-1] // heads
        keys = k[-2]
        # scores (head_dim), the softmax's sum (keys), probabilities x V (keys)
        return [head_dim, keys, keys]
    if op == "attention_grad":
        q, k = operand_types[0], operand_types[1]
        heads = int(re.search(r"\bheads = (\d+)", attrs).group(1))
        head_dim = q[-1] // heads
        queries, keys = q[-2], k[-2]
        # scores and the softmax's sum (recomputed), dP = dy·v (head_dim),
        # the row sum of P·dP (keys), then dq over keys and dk, dv over
        # queries (with kv_heads, a key and value head's dk and dv over
        # the queries of its whole group of heads)
        kv = re.search(r"\bkv_heads = (\d+)", attrs)
        group = heads // int(kv.group(1)) if kv else 1
        return [head_dim, keys, head_dim, keys, max(keys, group * queries)]
    if op in ("layer_norm", "rms_norm"):
        return [_last(first)] * (2 if op == "layer_norm" else 1)
    if op in ("layer_norm_grad", "rms_norm_grad"):
        # the statistics again (mean and variance, or the mean square), then
        # the sums of g·w and g·w·x̂ (layer norm) or of g·w·x̂ (rms)
        return [_last(first)] * (4 if op == "layer_norm_grad" else 2)
    if op in ("softmax", "log_softmax"):
        axis = re.search(r"axis = (-?\d+)", attrs)
        dim = first[int(axis.group(1))] if axis else _last(first)
        return [dim]
    if op in ("cross_entropy", "cross_entropy_grad"):
        rows = math.prod(first[:-1])
        return [_last(first), rows] if op == "cross_entropy" else [_last(first)]
    if op == "embedding_grad":
        # a token's rows summed over every position that reads it
        return [math.prod(operand_types[-1])] if operand_types else []
    if op.startswith("reduce_"):
        # `nn.reduce_sum %x [0, 1]`: the product of the reduced dimensions
        dims = [int(a) for a in axes.split(",")] if axes else range(len(first))
        return [math.prod(first[d] for d in dims)]
    return []


_OP = re.compile(
    r"^\s*(?P<results>(?:%[\w.#:]+(?:,\s*)?)+) = nn\.(?P<op>\w+)(?P<rest>.*)$"
)


def _result_names(text):
    names = []
    for piece in re.findall(r"%[\w.]+(?::\d+)?", text):
        if ":" in piece:
            base, count = piece.split(":")
            names += [f"{base}#{i}" for i in range(int(count))]
        else:
            names.append(piece)
    return names


def function_text(mlir_text, function):
    match = re.search(rf"func\.func @{re.escape(function)}\(", mlir_text)
    assert match, f"no function @{function}"
    end = mlir_text.find("\n  }", match.start())
    return mlir_text[match.start() : end if end >= 0 else None]


def chain_bound(mlir_text, function="forward", kind="jax"):
    """The bound on the relative error of `function`'s results between
    tandem-eval and an f32 implementation ("jax": XLA; "native": Tandem's
    generated C++), by the model in this module's docstring."""
    assert kind in ("jax", "native", "cuda"), kind
    error = {}
    worst = 0.0
    body = function_text(mlir_text, function)
    for line in body.splitlines():
        match = _OP.match(line)
        if match:
            op, rest = match.group("op"), match.group("rest")
            attrs = " ".join(re.findall(r"\{[^}]*\}", rest))
            operands, _, types = re.sub(r"\{[^}]*\}", "", rest).partition(" : ")
            names = re.findall(r"%[\w.]+(?:#\d+)?", operands)
            inherited = max((error.get(n, 0.0) for n in names), default=0.0)
            operand_types = types.partition(" -> ")[0]
            operand_shapes = [s for s in _types(operand_types) if s is not None]
            if op in ("param", "parameter", "constant"):
                local = 0.0
            else:
                axes = re.search(r"\[([-\d, ]*)\]", operands)
                axes = axes.group(1).strip() if axes else ""
                lengths = _reduction_lengths(op, attrs, axes, operand_shapes)
                rounding = LAMBDA * U32
                if kind == "native":
                    # Only OpenBLAS's f32 GEMMs differ from the evaluator
                    # (attention: its two GEMMs, not the softmax's sum).
                    rounding = 0.0
                    if op == "attention":
                        lengths = [lengths[0], lengths[2]]
                    elif op != "matmul":
                        lengths = []
                if kind == "cuda":
                    # The sums' orders differ from the evaluator's (a GEMM's
                    # is the library's), plus each kernel's own arithmetic;
                    # fused attention's online softmax rescales its running
                    # sum and output up to once per key (an exp and a product
                    # each: docs/cuda-backend.md, "Attention").
                    units = _CUDA_UNITS.get(op, 1)
                    if op in ("attention", "attention_grad"):
                        units = 5 * operand_shapes[1][-2] + 6
                    rounding = units * U32
                    local = sum(probabilistic(n + 1) for n in lengths) + rounding
                else:
                    local = sum(probabilistic(n + 1) for n in lengths) or rounding
            value = inherited + local
            # The result type: after "->", else the (last) operand type.
            result_types = re.findall(r"tensor<[^>]*>", types.partition(" -> ")[2] or types)
            bits = _NARROW_BITS.get(_element_type(result_types[-1])) if result_types else None
            if bits and value > 0:
                value += LAMBDA * narrow_rounding_bound(value, bits)
            for name in _result_names(match.group("results")):
                error[name] = value
            continue
        ret = re.match(r"^\s*(?:func\.)?return (.*) : ", line)
        if ret:
            for name in re.findall(r"%[\w.]+(?:#\d+)?", ret.group(1)):
                worst = max(worst, error.get(name, 0.0))
    return worst


def mean_of_equal_terms_bound(n, roundings_per_term, u=U32):
    """The relative error of an f32 mean of n equal positive terms, each
    computed with `roundings_per_term` roundings: gamma(roundings) for the
    terms, gamma(n - 1) for their sum in any order, one rounding for the
    division (exact when n is a power of two; counted anyway)."""
    return gamma(roundings_per_term, u) + gamma(n - 1, u) + u


def from_spec(spec):
    """A tolerance from the command line of the lit tests' comparison
    scripts: a number, or KIND:MODEL.mlir:FUNCTION for chain_bound on that
    function of that file (KIND jax, native or cuda; KIND1+KIND2 for the sum
    of two bounds: two implementations each within its own bound of the
    evaluator are within the sum of each other)."""
    if ":" not in spec:
        return float(spec)
    kinds, path, function = spec.split(":")
    with open(path) as model:
        text = model.read()
    return sum(chain_bound(text, function, kind) for kind in kinds.split("+"))
