"""Prints, per rank manifest in a directory, which model parameters the rank
binds: `rank N: <names>` with each transformer block's parameters folded into
its prefix `h.<i>` and the optimizer's state (opt.*) left out.

usage: owned-parameters.py DIR RANKS
"""
import json
import sys

directory, ranks = sys.argv[1], int(sys.argv[2])
for rank in range(ranks):
    with open(f"{directory}/rank{rank}.json") as f:
        manifest = json.load(f)
    owned = []
    for parameter in manifest["parameters"]:
        name = parameter["name"]
        if name.startswith("opt."):
            continue
        parts = name.split(".")
        if parts[0] == "h":
            name = "h." + parts[1]
        elif "." in name:
            name = parts[0]
        if name not in owned:
            owned.append(name)
    print(f"rank {rank}: {' '.join(owned)}")
