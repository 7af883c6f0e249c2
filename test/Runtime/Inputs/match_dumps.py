"""match_dumps.py A B: two fragment-call dumps (TANDEM_DUMP_FRAGMENTS,
safetensors with tensors arg<i>, result<j> and metadata fragment,
microbatch, call, rank). Prints each dump's metadata, then every pair
'A result<j> = B arg<i>' whose dtype, shape and bytes are equal: what one
rank sent and the other received, seen from both sides."""
import json
import struct
import sys


def read(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    meta = header.pop("__metadata__", {})
    body = data[8 + n :]
    tensors = {
        name: (t["dtype"], tuple(t["shape"]), body[t["data_offsets"][0] : t["data_offsets"][1]])
        for name, t in header.items()
    }
    return meta, tensors


a_meta, a = read(sys.argv[1])
b_meta, b = read(sys.argv[2])
for meta in (a_meta, b_meta):
    print("rank %s call %s %s microbatch %s" % (meta["rank"], meta["call"], meta["fragment"], meta["microbatch"]))
key = lambda name: int(name.lstrip("argresult"))
for r in sorted((n for n in a if n.startswith("result")), key=key):
    for g in sorted((n for n in b if n.startswith("arg")), key=key):
        if a[r] == b[g] and len(a[r][2]) > 0:
            print("A %s = B %s" % (r, g))
