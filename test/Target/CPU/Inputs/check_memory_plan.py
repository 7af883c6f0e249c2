#!/usr/bin/env python3
"""Checks the memory plan of the rank lowering's manifests independently of
the compiler and the runtime (docs/memory-plan.md).

  check_memory_plan.py DIR RANK
      recomputes every buffer's live interval from the action list, checks
      the plan's intervals cover them, that offsets are aligned and inside
      the arena and that buffers live together share no byte; prints
      "rank R: arena A, naive N, stash K" (K: the most microbatches with a
      live slot that a backward run of theirs reads -- forward results and
      received activations, counting one received ahead of its forward).
  check_memory_plan.py --less DIR_A DIR_B RANK
      prints "smaller, same naive" when DIR_A's arena on RANK is smaller
      than DIR_B's and both plan the same buffers (naive_bytes).
"""

import json
import os
import sys


def load(directory, rank):
    with open(os.path.join(directory, "rank%d.json" % rank)) as f:
        return json.load(f)


def fail(message):
    print("error: " + message)
    sys.exit(1)


def key(buffer):
    if buffer["kind"] == "slot":
        return ("slot", buffer["fragment"], buffer["result"],
                buffer.get("microbatch", -1))
    if buffer["kind"] == "accumulator":
        return ("accumulator", buffer["action"], buffer["argument"])
    return ("scratch", buffer["action"])


def uses(manifest):
    """(key -> (first, last)) that the action list needs."""
    m = manifest["grid"]["microbatches"]
    fragments = {f["name"]: f for f in manifest["fragments"]}
    actions = manifest["actions"]
    end = len(actions)
    need = {}

    def touch(k, a, b):
        lo, hi = need.get(k, (a, b))
        need[k] = (min(lo, a), max(hi, b))

    # The action after which each slot's value is there: its run, or the
    # last action of its receive's group.
    ready = {}

    i = 0
    while i < end:
        action = actions[i]
        if action["op"] == "run":
            f = fragments[action["fragment"]]
            mb = action.get("microbatch", -1)
            for a, arg in enumerate(f["arguments"]):
                if "slot" not in arg:
                    continue
                s = arg["slot"]
                if arg["rule"] != "sum_microbatches":
                    k = mb if arg["rule"] == "same_microbatch" else -1
                    touch(("slot", s["fragment"], s["result"], k), i, i)
                    continue
                # Summed as the slots appear, in microbatch order: slot k
                # is added once it and the sum of slots 0..k-1 are there.
                fold = -1
                for k in range(m):
                    slot = ("slot", s["fragment"], s["result"], k)
                    fold = max(fold, ready.get(slot, i))
                    if k == 0:
                        first = fold
                    touch(slot, fold, fold)
                touch(("accumulator", i, a), first, i)
            if f["scratch_bytes"]:
                touch(("scratch", i), i, i)
            for r, res in enumerate(f["results"]):
                if "in_place_of" in res:
                    continue  # Written over its parameter: no buffer.
                last = end if ("update" in res or "output" in res) else i
                touch(("slot", f["name"], r, mb), i, last)
                ready[("slot", f["name"], r, mb)] = i
            i += 1
            continue
        j = i
        while j + 1 < end and actions[j + 1]["op"] != "run":
            j += 1
        for k in range(i, j + 1):
            s = actions[k]["slot"]
            slot = ("slot", s["fragment"], s["result"], s.get("microbatch", -1))
            touch(slot, i if actions[k]["op"] == "recv" else k, j)
            if actions[k]["op"] == "recv":
                ready[slot] = j
        i = j + 1
    return need


def check(directory, rank):
    manifest = load(directory, rank)
    plan = manifest["memory"]
    align = plan["alignment"]
    arena = plan["arena_bytes"]
    buffers = plan["buffers"]
    planned = {}
    for b in buffers:
        if b["offset"] % align:
            fail("%s is not aligned" % (key(b),))
        if b["offset"] + b["bytes"] > arena:
            fail("%s ends past the arena" % (key(b),))
        planned[key(b)] = b
    need = uses(manifest)
    if set(need) != set(planned):
        fail("planned buffers differ from the used ones: %s" %
             sorted(set(need) ^ set(planned), key=str))
    for k, (lo, hi) in need.items():
        b = planned[k]
        if b["first"] > lo or b["last"] < hi:
            fail("%s live [%d, %d], used [%d, %d]" %
                 (k, b["first"], b["last"], lo, hi))
    for x in range(len(buffers)):
        for y in range(x + 1, len(buffers)):
            a, b = buffers[x], buffers[y]
            together = a["first"] <= b["last"] and b["first"] <= a["last"]
            overlap = (a["bytes"] and b["bytes"] and
                       a["offset"] < b["offset"] + b["bytes"] and
                       b["offset"] < a["offset"] + a["bytes"])
            if together and overlap:
                fail("%s and %s share bytes" % (key(a), key(b)))
    naive = sum((b["bytes"] + align - 1) // align * align for b in buffers)
    if naive != plan["naive_bytes"]:
        fail("naive_bytes %d, the buffers sum to %d" %
             (plan["naive_bytes"], naive))
    # Stashed: forward results a backward run of the same microbatch reads.
    kinds = {f["name"]: f["kind"] for f in manifest["fragments"]}
    stashed = set()
    for f in manifest["fragments"]:
        if f["kind"] not in ("bwd", "bwd_input", "bwd_weight"):
            continue
        for arg in f["arguments"]:
            s = arg.get("slot")
            if (s and arg["rule"] == "same_microbatch" and
                    kinds.get(s["fragment"], "fwd") == "fwd"):
                stashed.add((s["fragment"], s["result"]))
    stash = 0
    for t in range(len(manifest["actions"]) + 1):
        live = {b.get("microbatch") for b in buffers
                if b["kind"] == "slot" and
                (b["fragment"], b["result"]) in stashed and
                b["first"] <= t <= b["last"]}
        stash = max(stash, len(live))
    # Summed gradients: the most microbatches of one summed slot live at
    # once (they are added to the sum as they appear, not all kept for it).
    summed = {(a["slot"]["fragment"], a["slot"]["result"])
              for f in manifest["fragments"] for a in f["arguments"]
              if a.get("rule") == "sum_microbatches"}
    waiting = 0
    for t in range(len(manifest["actions"]) + 1):
        for s in summed:
            live = [b for b in buffers if b["kind"] == "slot" and
                    (b["fragment"], b["result"]) == s and
                    b["first"] <= t <= b["last"]]
            waiting = max(waiting, len(live))
    print("rank %d: arena %d, naive %d, stash %d, summed slots %d" %
          (rank, arena, plan["naive_bytes"], stash, waiting))


def main():
    if sys.argv[1] == "--less":
        a = load(sys.argv[2], int(sys.argv[4]))["memory"]
        b = load(sys.argv[3], int(sys.argv[4]))["memory"]
        print("smaller" if a["arena_bytes"] < b["arena_bytes"] else
              "not smaller: %d >= %d" % (a["arena_bytes"], b["arena_bytes"]),
              end="")
        print(", same naive" if a["naive_bytes"] == b["naive_bytes"] else
              ", other naive")
        return
    check(sys.argv[1], int(sys.argv[2]))


if __name__ == "__main__":
    main()
