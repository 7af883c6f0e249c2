#!/usr/bin/env python3
"""Corrupts the memory plan of DIR/rankR.json in one way (MODE), for the
runtime's error tests:

  overlap    moves a buffer onto the bytes of one live at the same time
  unaligned  moves a buffer 8 bytes up
  outside    moves a buffer past the end of the arena
  short      ends a stashed slot's interval before its last reader
  drop       removes the first buffer
  missing    removes the "memory" object
  huge       claims an arena of 2^47 bytes (valid, but not allocatable:
             x86-64 gives a process at most 2^47 bytes of address space
             without asking for more; only TANDEM_SEPARATE_BUFFERS=1 runs it)
  toohuge    claims an arena of 2^60 bytes (beyond what a manifest may say)
"""

import json
import sys


def main():
    path = "%s/rank%s.json" % (sys.argv[1], sys.argv[2])
    mode = sys.argv[3]
    with open(path) as f:
        manifest = json.load(f)
    plan = manifest["memory"]
    buffers = plan["buffers"]
    if mode == "overlap":
        for a in buffers:
            for b in buffers:
                if (a is not b and a["bytes"] and b["bytes"] and
                        a["offset"] != b["offset"] and
                        a["first"] <= b["last"] and b["first"] <= a["last"]):
                    b["offset"] = a["offset"]
                    break
            else:
                continue
            break
    elif mode == "unaligned":
        buffers[0]["offset"] += 8
    elif mode == "outside":
        buffers[0]["offset"] = plan["arena_bytes"]
    elif mode == "short":
        for b in buffers:
            if b["kind"] == "slot" and b["last"] > b["first"] + 1:
                b["last"] = b["first"]
                break
    elif mode == "drop":
        del buffers[0]
    elif mode == "huge":
        plan["arena_bytes"] = 1 << 47
    elif mode == "toohuge":
        plan["arena_bytes"] = 1 << 60
    elif mode == "missing":
        del manifest["memory"]
    with open(path, "w") as f:
        json.dump(manifest, f)


if __name__ == "__main__":
    main()
