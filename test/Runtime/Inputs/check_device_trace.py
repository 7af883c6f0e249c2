"""check_device_trace.py TRACE DIR STEPS [groups]: the device tracks of a tandem-run
--trace file against the rank manifests in DIR, for STEPS steps. Per rank
and step, the "device" track (tid 2) holds one span per run action, in
the action list's order, none starting before the previous one ended (a
rank's stream runs its work in order); the "device: transfers" track
(tid 3) holds one span per receive (with `groups`, one per posted group
of sends and receives, named by its ops joined with ", ", as the NCCL
transport marks them). Causality, as the events order the work: a
receive's copy starts after the sender's run that produced the slot ended
(a group, which may start waiting early, ends after it), and the
receiver's first run that reads the slot starts after the transfer
ended. Prints 'ok: R runs, T transfers, C orderings' or each
violation and exits 1. (Event times are float milliseconds: comparisons
allow 2 microseconds. A rank's device spans are placed on the host clock
at most their `uncertainty_us` late, never early, all of one step's by
the same amount: a transfer measured against the producer's run on
another rank allows the producer's uncertainty too.)"""
import json
import sys

EPS = 2.0


def slot_text(slot):
    text = "%s[%d]" % (slot["fragment"], slot["result"])
    if slot.get("microbatch", -1) >= 0:
        text += " microbatch %d" % slot["microbatch"]
    return text


def run_name(action):
    name = "run " + action["fragment"]
    if action.get("microbatch", -1) >= 0:
        name += " microbatch %d" % action["microbatch"]
    return name


def main():
    trace_path, folder, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    groups = sys.argv[4:] == ["groups"]
    events = json.load(open(trace_path))["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    ranks = sorted({e["pid"] for e in spans})
    manifests = {r: json.load(open("%s/rank%d.json" % (folder, r))) for r in ranks}
    errors = []
    runs = transfers = orderings = 0
    # (rank, step, run name) -> span; (rank, step, transfer name) -> span.
    run_at, copy_at = {}, {}
    for r in ranks:
        actions = manifests[r]["actions"]
        expected = [run_name(a) for a in actions if a["op"] == "run"]
        receives = sorted(
            "recv of %s from %d" % (slot_text(dict(a["slot"], microbatch=a["slot"].get("microbatch", -1))), a["peer"])
            for a in actions if a["op"] == "recv")
        for step in range(steps):
            mine = [e for e in spans if e["pid"] == r and e["args"]["step"] == step]
            device = [e for e in mine if e["tid"] == 2]
            names = [e["name"] for e in device]
            if names != expected:
                errors.append("rank %d step %d: device runs %s, expected %s" % (r, step, names, expected))
            for a, b in zip(device, device[1:]):
                if b["ts"] < a["ts"] + a["dur"] - EPS:
                    errors.append("rank %d step %d: %s starts before %s ended" % (r, step, b["name"], a["name"]))
            copies = [e for e in mine if e["tid"] == 3]
            # A group's span stands for each receive it holds.
            ops = [(op, e) for e in copies for op in (e["name"].split(", ") if groups else [e["name"]])]
            got = sorted(op for op, _ in ops if op.startswith("recv of "))
            if got != receives:
                errors.append("rank %d step %d: device transfers %s, expected %s" % (r, step, got, receives))
            runs += len(device)
            transfers += len(copies)
            for e in device:
                run_at[(r, step, e["name"])] = e
            for op, e in ops:
                copy_at[(r, step, op)] = e
    for r in ranks:
        m = manifests[r]
        fragments = {f["name"]: f for f in m["fragments"]}
        actions = m["actions"]
        for i, a in enumerate(actions):
            if a["op"] != "recv":
                continue
            slot = a["slot"]
            mb = slot.get("microbatch", -1)
            name = "recv of %s from %d" % (slot_text(dict(slot, microbatch=mb)), a["peer"])
            producer = run_name({"fragment": slot["fragment"], "microbatch": mb})
            consumer = None
            for b in actions[i + 1:]:
                if b["op"] != "run":
                    continue
                for arg in fragments[b["fragment"]]["arguments"]:
                    s = arg.get("slot")
                    if (s and s["fragment"] == slot["fragment"] and s["result"] == slot["result"]
                            and arg.get("rule") == "same_microbatch" and b.get("microbatch", -1) == mb):
                        consumer = run_name(b)
                if consumer:
                    break
            for step in range(steps):
                copy = copy_at.get((r, step, name))
                made = run_at.get((a["peer"], step, producer))
                if not copy or not made:
                    continue
                orderings += 1
                arrived = copy["ts"] + (copy["dur"] if groups else 0)
                late = made["args"].get("uncertainty_us", 0.0)
                if arrived < made["ts"] + made["dur"] - EPS - late:
                    errors.append("rank %d step %d: %s %s before rank %d's %s ended"
                                  % (r, step, name, "ended" if groups else "started", a["peer"], producer))
                used = run_at.get((r, step, consumer)) if consumer else None
                if used:
                    orderings += 1
                    if used["ts"] < copy["ts"] + copy["dur"] - EPS:
                        errors.append("rank %d step %d: %s started before %s ended" % (r, step, consumer, name))
    if errors:
        print("\n".join(errors))
        sys.exit(1)
    print("ok: %d runs, %d transfers, %d orderings" % (runs, transfers, orderings))


main()
