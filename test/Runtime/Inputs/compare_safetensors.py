"""compare_safetensors.py A B TOL [--base P0 [--base P1 ...]]: the same
tensor names, dtypes and shapes, and per tensor the relative error
sqrt(sum (a-b)^2 / sum b^2) (the absolute one when b is all zeros, as
unittests/Target/CPU measures) <= TOL; TOL 0: bitwise equal bytes. TOL is a
number or KIND:MODEL.mlir:FUNCTION, the bound python/tests/tolerance.py
derives from that function's arithmetic.

With --base, B is the result of SGD steps from P0 (through P1, ...) and TOL
bounds the relative error of the gradients: a tensor's tolerance is then
(TOL * sum_k ||P_{k+1} - P_k|| + 2 k u ||B||) / ||B||, P_k ending at B: an
SGD step p - lr g is off by lr times the gradient's error plus one rounding
on each side (u = 2^-24).
Prints one line per tensor that differs and exits 1; else prints 'ok N'."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "python", "tests"))
import safetensors_file  # noqa: E402
import tolerance  # noqa: E402

read = safetensors_file.read


def values(entry):
    dtype, _, raw = entry
    return safetensors_file.values(dtype, raw)


def norm(xs):
    return sum(x * x for x in xs) ** 0.5


args = sys.argv[1:]
bases = []
while "--base" in args:
    i = args.index("--base")
    bases.append(read(args[i + 1]))
    del args[i : i + 2]
a, b, tol = read(args[0]), read(args[1]), tolerance.from_spec(args[2])
bad = []
if sorted(a) != sorted(b):
    bad.append("names differ: %s vs %s" % (sorted(a), sorted(b)))
for name in sorted(set(a) & set(b)):
    (da, sa, xa), (db, sb, xb) = a[name], b[name]
    if (da, sa) != (db, sb):
        bad.append("%s: %s%s vs %s%s" % (name, da, sa, db, sb))
        continue
    if tol == 0 or da not in ("F32", "F64"):
        if xa != xb:
            bad.append("%s: bytes differ" % name)
        continue
    va, vb = values(a[name]), values(b[name])
    reference = norm(vb)
    diff = norm([x - y for x, y in zip(va, vb)])
    error = diff / reference if reference else diff
    limit = tol
    if bases:
        path = [values(base[name]) for base in bases] + [vb]
        drift = sum(norm([x - y for x, y in zip(q, p)]) for p, q in zip(path, path[1:]))
        absolute = tol * drift + 2 * len(bases) * tolerance.U32 * reference
        limit = absolute / reference if reference else absolute
    if not error <= limit:
        bad.append("%s: relative error %g > %g" % (name, error, limit))
for line in bad:
    print(line)
if bad:
    sys.exit(1)
print("ok %d" % len(a))
