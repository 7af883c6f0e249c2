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
- A result stored as bf16 or f16 (mixed precision), p significand bits,
  spacing S at most s = 2^(1-p) of the value: where the two sides round
  f32 values that differ by d, the results are d rounded to a multiple of
  S, up or down with the probabilities that keep its mean d (the grid's
  offset is uniform, as the rounding model assumes): the rounding adds
  delta of mean 0, variance S^2 f(1 - f) <= S^2/4 (f the fraction of
  d/S) and |delta| < S. Where one side skips the rounding (a CUDA GEMM's
  epilogue writes the f32 product: docs/cuda-backend.md, "Epilogues"),
  delta is the other side's rounding error: mean 0, variance S^2/12,
  |delta| <= S/2. The difference after the rounding is d + delta, so a
  tensor's norm-wise bound (`chain_bound`), where the two differ by a
  relative e before it, adds LAMBDA sqrt(e 2^(2-p)) (S is at least 2^-p of the value, so they land on
  neighbours with probability below e 2^p, one spacing apart), at most
  one spacing, at least the half spacing a skipped rounding leaves
  (`narrow_rounding_bound`: the flips' mean square); the next ops inherit
  it, so through a deep chain every narrow rounding adds up to a spacing
  and the tiny GPT's bf16 @forward gets 5.7: no bound. A loss gets
  `narrow_loss_bound` instead (below), with `chain_bound(...,
  narrow=False)` for the f32 arithmetic.
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
against that bound), its GEMMs with bf16 or f16 operands at their worst
case, gamma(k) in units of 2u (tensor cores may add such products
rounding toward zero: errors of one sign, no mean-zero model).

`narrow_loss_bound` bounds what the narrow roundings do to a mean
cross-entropy loss between two implementations that may each round or not
round every narrow result (so whatever their fusion). To first order the
loss moves by sum_k g_k delta_k over the narrow results' elements k
(g_k = dL/dx_k), in the order they are computed; each delta_k has mean 0
given all earlier ones, so the sum is a martingale and Freedman's
inequality (Bernstein's, for martingales) bounds it by

    LAMBDA sigma + LAMBDA^2 b / 3

with probability at least 1 - 2 exp(-LAMBDA^2 / 2), Higham and Mary's
level, when sum_k g_k^2 Var(delta_k) <= sigma^2 and |g_k delta_k| <= b.
With Var(delta_k) <= (s x_k)^2 / 4 and |delta_k| <= s |x_k| (above), the
question is how the g_k x_k are spread. The loss is the mean over N = M T
positions (M sequences of T) and the function's ops act on each sequence
(a row of the inputs' first dimension) apart, so the sites in sequence m
reach the loss only through m's logits Z_m. With the ops' condition
numbers 1 (the model above), a relative perturbation e of a narrow
result's slice x_m moves Z_m by at most e ||Z_m||, so for each narrow
result sum_{k in x_m} (g_k x_k)^2 and every (g_k x_k)^2 are at most
(||dL/dZ_m|| ||Z_m||)^2; dL/dz_i = (p_i - y_i)/N with
||p_i - y_i||^2 = sum p^2 - 2 p_y + 1 <= 2, and ||z_i|| <= R for every
position: ||dL/dZ_m|| ||Z_m|| <= sqrt(2T)/N sqrt(T) R = sqrt(2) R / M.
Over n narrow results (per sequence) and M sequences:
sigma^2 = n (s^2/4) M (2 R^2/M^2) = n s^2 R^2 / (2M), b = sqrt(2) s R / M:

    |dL| <= LAMBDA s R sqrt(n / (2M)) + LAMBDA^2 sqrt(2) s R / (3M).

Averaging over sequences is what the model licenses: their rounding
errors are independent because their computations share only the
parameters (identical on both sides; `_narrow_sites` refuses a function
whose ops mix rows or compute from parameters alone). The logits'
sensitivity is not assumed: R is measured, a posteriori, from the step's
parameters (`logits_norm_bound`): z = W h with h the last norm's output,
||h|| <= max|gamma| sqrt(D) + ||beta|| (a normalized row has norm at most
sqrt(D)), ||z|| <= sigma_max(W) ||h||, times 1 + 2^-p for each narrow
rounding of h and z. The tiny GPT in bf16 (n = 106, M = 64 sequences a
step): R grows from 2.4 to 9.8 over its 20 steps as the tied embedding's
largest singular value grows from 0.43 to 1.66, the bound from 0.053 to
0.21 in the loss, 9.6e-3 to 4.8e-2 of it (plus chain_bound's 3.9e-4 for
the f32 arithmetic); the emulated CUDA and CPU targets differ by at most
1.4e-5 (test/Target/CUDA/train-emulated.test).
"""

import math
import re
import struct

import safetensors_file

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


def round_narrow(x, bits):
    """x (a float) rounded to nearest even in bf16 (bits 8) or f16 (11)."""
    if bits == 11:
        return struct.unpack("<e", struct.pack("<e", x))[0]
    assert bits == 8, bits
    word = struct.unpack("<I", struct.pack("<f", x))[0]
    word = (word + 0x7FFF + ((word >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", word))[0]


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
        # the scores (recomputed; the probabilities from them and the
        # forward's log-sum-exp, an operand whose error is inherited),
        # dP = dy·v and D = dy·y (head_dim each; counted as if in
        # sequence), then dq over keys and dk, dv over queries (with
        # kv_heads, a key and value head's dk and dv over the queries of
        # its whole group of heads)
        kv = re.search(r"\bkv_heads = (\d+)", attrs)
        group = heads // int(kv.group(1)) if kv else 1
        return [head_dim, head_dim, head_dim, max(keys, group * queries)]
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


def chain_bound(mlir_text, function="forward", kind="jax", narrow=True):
    """The bound on the relative error of `function`'s results between
    tandem-eval and an f32 implementation ("jax": XLA; "native": Tandem's
    generated C++), by the model in this module's docstring; narrow=False
    leaves out the narrow roundings (for a loss: `narrow_loss_bound`)."""
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
                    if narrow and _tensor_core_attention(op, attrs, operand_shapes, operand_types):
                        # The probabilities' rounding on the tensor cores
                        # (`_tensor_core_attention`): one more narrow
                        # rounding of the output's magnitude.
                        local += 2.0 ** -_NARROW_BITS[_element_type(
                            re.findall(r"tensor<[^>]*>", operand_types)[0])]
                    if op == "matmul" and any(
                            _element_type(t) in _NARROW_BITS
                            for t in re.findall(r"tensor<[^>]*>", operand_types)):
                        # Tensor cores may add bf16 or f16 products rounding
                        # toward zero (Fasi et al., "Numerical behavior of
                        # NVIDIA tensor cores", PeerJ CS 7:e330, 2021):
                        # errors of one sign, up to 2u each, which no
                        # mean-zero model covers: the worst case, in any
                        # order, gamma(k) in units of 2u.
                        local = gamma(lengths[0], 2 * U32) + rounding
                else:
                    local = sum(probabilistic(n + 1) for n in lengths) or rounding
            value = inherited + local
            # The result type: after "->", else the (last) operand type.
            result_types = re.findall(r"tensor<[^>]*>", types.partition(" -> ")[2] or types)
            # The narrowest result's (attention's log-sum-exp is f32
            # whatever its output's type).
            widths = [_NARROW_BITS.get(_element_type(t)) for t in result_types]
            widths = [w for w in widths if w]
            bits = min(widths) if widths else None
            if narrow and bits and value > 0:
                # Both round (the flips), or one skips its rounding (half
                # a spacing, whatever the difference before it).
                value += max(LAMBDA * narrow_rounding_bound(value, bits), 2.0**-bits)
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


def _ops(body):
    """(result names, op, operand names, attributes, types text, line) of
    each nn op of a function body, and ("return", names) at its return."""
    for line in body.splitlines():
        match = _OP.match(line)
        if match:
            rest = match.group("rest")
            attrs = " ".join(re.findall(r"\{[^}]*\}", rest))
            operands, _, types = re.sub(r"\{[^}]*\}", "", rest).partition(" : ")
            names = re.findall(r"%[\w.]+(?:#\d+)?", operands)
            yield _result_names(match.group("results")), match.group("op"), names, attrs, types, line
            continue
        ret = re.match(r"^\s*(?:func\.)?return (.*) : ", line)
        if ret:
            yield re.findall(r"%[\w.]+(?:#\d+)?", ret.group(1)), "return", [], "", "", line


# Ops that compute each row of their first operand's first dimension (a
# sequence) from that row alone and shared values (parameters); none drops
# that dimension but the loss.
_ROW_OPS = {
    "add", "sub", "mul", "div", "neg", "max", "min", "relu", "gelu", "silu",
    "tanh", "exp", "log", "sqrt", "rsqrt", "pow", "cast", "stage_end",
    "layer_norm", "rms_norm", "embedding", "attention", "matmul", "split",
    "concat", "softmax", "log_softmax", "cross_entropy",
}


def _tensor_core_attention(op, attrs, operand_shapes, operand_types):
    """Whether the CUDA target runs this op as its tensor-core attention
    (docs/cuda-backend.md, "Tensor cores": bf16 or f16 heads of a multiple
    of 16, at most 128 wide), which multiplies V by the probabilities
    rounded to the operands' type (the backward: dS and P before their
    products): a narrow rounding the evaluator and the CPU target do not
    have, each probability off by up to 2^-p relative, so the output by as
    much of its weighted values' magnitude."""
    if op not in ("attention", "attention_grad") or not operand_shapes:
        return False
    first = re.findall(r"tensor<[^>]*>", operand_types)
    if not first or _element_type(first[0]) not in _NARROW_BITS:
        return False
    heads = int(re.search(r"\bheads = (\d+)", attrs).group(1))
    head_dim = operand_shapes[0][-1] // heads
    return head_dim % 16 == 0 and head_dim <= 128


def _narrow_sites(body, tensor_cores=False):
    """(n, bits, logits): the number of narrow results of a function whose
    values depend on its inputs, the fewest significand bits among them,
    and the logits its returned nn.cross_entropy reads. Refuses (ValueError)
    a function the derivation of `narrow_loss_bound` does not cover: one
    that returns anything else, mixes rows (sequences) of its inputs' first
    dimension, or computes from parameters alone other than by casts."""
    shared, sites, bits, logits = set(), 0, None, None
    for results, op, names, attrs, types, line in _ops(body):
        if op == "return":
            if logits is None or results != [loss]:
                raise ValueError("the function must return the nn.cross_entropy it ends with")
            return sites, bits, logits
        if logits is not None:
            raise ValueError(f"nn.{op} after the loss: {line.strip()}")
        shapes = [s for s in _types(types) if s is not None]
        if op in ("param", "parameter", "constant") or (op == "cast" and names[0] in shared):
            shared.update(results)
            continue
        own = [n for n in names if n not in shared]
        axis = re.search(r"\baxis = (-?\d+)", attrs)
        if op not in _ROW_OPS:
            raise ValueError(f"nn.{op} is not modelled by narrow_loss_bound: {line.strip()}")
        if not own:
            raise ValueError(f"nn.{op} computes from parameters alone: {line.strip()}")
        if axis and int(axis.group(1)) % len(shapes[0]) == 0:
            raise ValueError(f"nn.{op} along the sequences' dimension: {line.strip()}")
        if op == "matmul" and ("transpose_lhs" in attrs or (names[1] not in shared and len(shapes[1]) < 3)):
            raise ValueError(f"a matmul that mixes rows: {line.strip()}")
        result_types = re.findall(r"tensor<[^>]*>", types.partition(" -> ")[2] or types.partition(" to ")[2] or types)
        narrow = _NARROW_BITS.get(_element_type(result_types[-1]))
        if narrow:
            sites += 1
            bits = min(bits or narrow, narrow)
            # The probabilities' rounding of the CUDA target's tensor-core
            # attention: a second narrow rounding of the op's output.
            if tensor_cores and _tensor_core_attention(op, attrs, shapes, types.partition(" -> ")[0]):
                sites += 1
        if op == "cross_entropy":
            logits, loss = names[0], results[0]
    raise ValueError("no return")


def _values(params, name):
    """The shape and values of a parameter read by `read_params`."""
    if name not in params:
        raise ValueError(f"no parameter {name}")
    return params[name]


def read_params(path):
    """{name: (shape, values)} of a safetensors file's f32 tensors."""
    tensors = safetensors_file.read(path)
    return {name: (shape, safetensors_file.values(dtype, raw))
            for name, (dtype, shape, raw) in tensors.items() if dtype == "F32"}


def sigma_max_bound(values, rows, cols):
    """An upper bound on the largest singular value of a rows x cols matrix
    (row-major values), at most 32^(1/256) - 1 = 1.4% above it for up to 32
    columns: the Gram matrix G of the smaller side, then
    sigma^2 = lambda_max(G) <= ||G^64||_F^(1/64) (G^64 by six squarings,
    each normalized; a Frobenius norm bounds the largest eigenvalue of a
    symmetric matrix, and ||G^64||_F <= sqrt(rank) lambda_max^64)."""
    if rows < cols:
        values = [values[r * cols + c] for c in range(cols) for r in range(rows)]
        rows, cols = cols, rows
    gram = [[0.0] * cols for _ in range(cols)]
    for r in range(rows):
        row = values[r * cols : (r + 1) * cols]
        for i, x in enumerate(row):
            if x:
                target = gram[i]
                for j, y in enumerate(row):
                    target[j] += x * y
    log_scale, power = 0.0, 1
    for _ in range(6):
        norm = math.sqrt(sum(x * x for row in gram for x in row))
        if norm == 0:
            return 0.0
        gram = [[x / norm for x in row] for row in gram]
        columns = list(zip(*gram))
        gram = [[sum(a * b for a, b in zip(row, column)) for column in columns] for row in gram]
        log_scale, power = 2 * (log_scale + math.log(norm)), 2 * power
    norm = math.sqrt(sum(x * x for row in gram for x in row))
    return math.exp((log_scale + math.log(norm)) / power / 2) * (1 + 1e-12)


def logits_norm_bound(mlir_text, function, params):
    """R >= every position's ||z|| (the logits' Euclidean norm over the
    classes) for these parameters ({name: (shape, values)}, `read_params`),
    when the logits are a matmul of a layer or RMS norm's output by a
    parameter, through casts: sigma_max(W) (max|gamma| sqrt(D) + ||beta||),
    W rounded as the function rounds it, times 1 + 2^-p per narrow rounding
    of h and of z (the module docstring)."""
    body = function_text(mlir_text, function)
    ops = {}
    for results, op, names, attrs, types, line in _ops(body):
        for name in results:
            ops[name] = (op, names, attrs, types, line)
    logits = _narrow_sites(body)[2]

    def through_casts(name):
        narrow = []
        while ops.get(name, ("",))[0] == "cast":
            narrow.append(_NARROW_BITS.get(_element_type(ops[name][3].partition(" to ")[2])))
            name = ops[name][1][0]
        return name, [b for b in narrow if b]

    def parameter(name):
        name, narrow = through_casts(name)
        symbol = re.search(r"nn\.param(?:eter)? @([\w.]+)", ops.get(name, ("",) * 5)[4])
        if not symbol:
            raise ValueError(f"{name} is not a parameter")
        shape, values = _values(params, symbol.group(1))
        for b in narrow:
            values = [round_narrow(x, b) for x in values]
        return shape, values

    gemm, roundings = through_casts(logits)
    op, names, attrs, types, line = ops.get(gemm, ("",) * 5)
    result_types = re.findall(r"tensor<[^>]*>", types.partition(" -> ")[2])
    if op != "matmul" or len(names) != 2:
        raise ValueError(f"the logits are not a matmul: {line.strip()}")
    roundings += [b for b in [_NARROW_BITS.get(_element_type(result_types[-1]))] if b]
    (rows, cols), w = parameter(names[1])
    hidden, narrow = through_casts(names[0])
    roundings += narrow
    op, norm_names, _, types, line = ops.get(hidden, ("",) * 5)
    if op not in ("layer_norm", "rms_norm"):
        raise ValueError(f"the logits' input is not a norm's output: {line.strip()}")
    dim = _last(_types(types)[0])
    gain = max(abs(x) for x in parameter(norm_names[1])[1]) * math.sqrt(dim)
    if len(norm_names) > 2:
        gain += math.sqrt(sum(x * x for x in parameter(norm_names[2])[1]))
    return sigma_max_bound(w, rows, cols) * gain * math.prod(1 + 2.0**-b for b in roundings)


def narrow_loss_bound(mlir_text, function, sequences, logits_norm, tensor_cores=False):
    """The bound on the difference (absolute) between two implementations'
    mean cross-entropy over `sequences` sequences of `function` (one
    microbatch's loss; the step's loss means over every microbatch's
    sequences) that comes from their narrow roundings, every position's
    logits of norm at most `logits_norm` (`logits_norm_bound`):
    LAMBDA s R sqrt(n / (2M)) + LAMBDA^2 sqrt(2) s R / (3M) (the module
    docstring), s = 2^(1-p) the widest narrow spacing. tensor_cores: one
    implementation is the CUDA target's, whose tensor-core attention rounds
    its probabilities too (`_tensor_core_attention`)."""
    n, bits, _ = _narrow_sites(function_text(mlir_text, function), tensor_cores)
    if not n:
        return 0.0
    s, r, m = 2.0 ** (1 - bits), logits_norm, sequences
    return LAMBDA * s * r * math.sqrt(n / (2 * m)) + LAMBDA**2 * math.sqrt(2) * s * r / (3 * m)


def from_spec(spec, narrow=True):
    """A tolerance from the command line of the lit tests' comparison
    scripts: a number, or KIND:MODEL.mlir:FUNCTION for chain_bound on that
    function of that file (KIND jax, native or cuda; KIND1+KIND2 for the sum
    of two bounds: two implementations each within its own bound of the
    evaluator are within the sum of each other); narrow=False: without the
    narrow roundings (chain_bound's)."""
    if ":" not in spec:
        return float(spec)
    kinds, path, function = spec.split(":")
    with open(path) as model:
        text = model.read()
    return sum(chain_bound(text, function, kind, narrow) for kind in kinds.split("+"))
