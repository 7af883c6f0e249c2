"""match_dumps.py A B: two fragment-call dumps (TANDEM_DUMP_FRAGMENTS,
safetensors with tensors arg<i>, result<j> and metadata fragment,
microbatch, call, rank). Prints each dump's metadata, then every pair
'A result<j> = B arg<i>' whose dtype, shape and bytes are equal: what one
rank sent and the other received, seen from both sides."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "python", "tests"))
import safetensors_file  # noqa: E402


def read(path):
    meta, tensors = safetensors_file.read_file(path)
    return meta, {name: (dtype, tuple(shape), raw) for name, (dtype, shape, raw) in tensors.items()}


a_meta, a = read(sys.argv[1])
b_meta, b = read(sys.argv[2])
for meta in (a_meta, b_meta):
    print("rank %s call %s %s microbatch %s" % (meta["rank"], meta["call"], meta["fragment"], meta["microbatch"]))
key = lambda name: int(name.lstrip("argresult"))
for r in sorted((n for n in a if n.startswith("result")), key=key):
    for g in sorted((n for n in b if n.startswith("arg")), key=key):
        if a[r] == b[g] and len(a[r][2]) > 0:
            print("A %s = B %s" % (r, g))
