#!/usr/bin/env python3
"""Checks a tandem-rank-v2 manifest against its library and itself.

Usage: check_manifest.py DIR RANK NM

Fails (exit 1, a message on stderr) unless: the format is tandem-rank-v2;
the library exports every fragment's symbol and scratch symbol (NM -D
--defined-only), and nothing else named tandem_<fragment>; every
parameter, input and slot an argument names is declared in the manifest
or produced by a fragment the rank runs or receives; every run names a
fragment of the manifest with a microbatch iff it runs per microbatch; and
each fragment runs once per microbatch (or once per step). Prints a
one-line summary.
"""
import json
import os
import subprocess
import sys


def fail(message):
    sys.stderr.write("check_manifest: " + message + "\n")
    sys.exit(1)


def main():
    directory, rank, nm = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(os.path.join(directory, "rank%d.json" % rank)) as f:
        manifest = json.load(f)
    if manifest.get("format") != "tandem-rank-v2":
        fail("format is %r" % manifest.get("format"))
    grid = manifest["grid"]
    if grid["rank"] != rank:
        fail("grid.rank is %d" % grid["rank"])
    library = os.path.join(directory, manifest["library"])
    out = subprocess.run([nm, "-D", "--defined-only", library], check=True,
                         capture_output=True, text=True).stdout
    exported = {line.split()[-1] for line in out.splitlines() if line.strip()}
    fragments = {f["name"]: f for f in manifest["fragments"]}
    wanted = set()
    for f in fragments.values():
        wanted |= {f["symbol"], f["scratch_symbol"]}
    # Not entry points: the CPU features and the fragment ABI version the
    # runtime checks at load.
    for symbol in ("tandem_cpu_features", "tandem_fragment_abi"):
        if symbol not in exported:
            fail("library lacks " + symbol)
        wanted.add(symbol)
    missing = wanted - exported
    if missing:
        fail("library lacks " + ", ".join(sorted(missing)))
    extra = {s for s in exported if s.startswith("tandem_")} - wanted
    if extra:
        fail("library exports unlisted " + ", ".join(sorted(extra)))

    params = {p["name"] for p in manifest["parameters"]}
    inputs = {i["index"] for i in manifest["inputs"]}
    received = {(a["slot"]["fragment"], a["slot"]["result"])
                for a in manifest["actions"] if a["op"] in ("recv",
                                                            "broadcast")}
    for f in fragments.values():
        for i, arg in enumerate(f["arguments"]):
            if "param" in arg:
                if arg["param"] not in params:
                    fail("%s arg %d: undeclared parameter" % (f["name"], i))
            elif "input" in arg:
                if arg["input"] not in inputs:
                    fail("%s arg %d: undeclared input" % (f["name"], i))
            else:
                slot = (arg["slot"]["fragment"], arg["slot"]["result"])
                local = slot[0] in fragments
                if local != arg["local"]:
                    fail("%s arg %d: slot %r local is %r" %
                         (f["name"], i, slot, arg["local"]))
                if not local and slot not in received:
                    fail("%s arg %d: slot %r neither local nor received" %
                         (f["name"], i, slot))
        for r in f["results"]:
            if "update" in r and r["update"] not in params:
                fail("%s updates undeclared %s" % (f["name"], r["update"]))

    m = grid["microbatches"]
    runs = {}
    for a in manifest["actions"]:
        if a["op"] != "run":
            continue
        f = fragments.get(a["fragment"])
        if f is None:
            fail("run of unknown fragment " + a["fragment"])
        if ("microbatch" in a) != f["per_microbatch"]:
            fail("run of %s: microbatch presence" % a["fragment"])
        runs.setdefault(a["fragment"], []).append(a.get("microbatch"))
    for name, f in fragments.items():
        expected = list(range(m)) if f["per_microbatch"] else [None]
        if sorted(runs.get(name, []), key=lambda k: -1 if k is None else k) \
                != expected:
            fail("%s runs %r" % (name, runs.get(name)))
    print("rank %d: %d fragments, %d parameters, %d actions, symbols ok" %
          (rank, len(fragments), len(params), len(manifest["actions"])))


if __name__ == "__main__":
    main()
