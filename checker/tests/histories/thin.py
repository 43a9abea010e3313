#!/usr/bin/env python3
"""How runs/redis-*.jsonl were cut from their runs' history.jsonl (README.md):
one key's events, a prefix, and 1 read in N kept before the last 40 events.

  thin.py HISTORY KEY CUT EVERY OUT

A set's reads return the whole set, so a run's history is mostly reads (1.4 to 1.8 MB). Keeping
one key keeps that key's verdict (linearizability is per key); dropping a completed read leaves a
linearizable history linearizable; an illegal one stays illegal only if the read that shows it is
kept: reads in the last 40 events are all kept, and tests/reference.rs checks the verdict.
"""
import json, sys

src, key, cut, every, dst = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
ev = [e for e in map(json.loads, open(src)) if e.get("key") == key]
ev = ev[:cut] if cut > 0 else ev
pending, drop, reads = {}, set(), 0
for i, e in enumerate(ev):
    if e["type"] == "invoke":
        pending[e["process"]] = i
        continue
    j = pending.pop(e["process"])
    if e["f"] == "read":
        reads += 1
        if reads % every and i < len(ev) - 40:
            drop.update([i, j])
with open(dst, "w") as out:
    n = 0
    for i, e in enumerate(ev):
        if i not in drop:
            e["index"] = n
            n += 1
            out.write(json.dumps(e, separators=(",", ":")) + "\n")
