#!/usr/bin/env python3
"""Pools ipu_mix.py's per-type results over the recordings into one IPU/x86 ratio per
vertex type: the sum of the IPU estimates over the sum of the x86 instructions.

  pool_ratio.py OLD_RATIO.json OUT.json DIR

DIR holds ipu_mix.py's output for each recording and type, DIR/ipu_mix-<rec>-<Type>.txt
(rec: garden, 1m, 1m-paper); a type those recordings do not hold keeps its ratio from
OLD_RATIO.json: the Generator (the spill store), measured on its own recordings of
2026-11-27 with the vectorizer off (README, the cost table)."""
import glob, json, re, sys
from collections import defaultdict
old_path, out, d = sys.argv[1:4]
old = json.load(open(old_path))
x86, ipu, per = defaultdict(float), defaultdict(float), defaultdict(dict)
for rec in ("garden", "1m", "1m-paper"):
    for t in old:
        p = f"{d}/ipu_mix-{rec}-{t}.txt"
        try:
            line = open(p).readline()
        except FileNotFoundError:
            continue
        m = re.match(r"x86 instructions (\d+) .*IPU estimate (\d+), ratio", line)
        x86[t] += int(m.group(1)); ipu[t] += int(m.group(2))
        per[t][rec] = round(int(m.group(2)) / int(m.group(1)), 3)
new = {t: (round(ipu[t] / x86[t], 3) if x86[t] else old[t]) for t in old}
json.dump(new, open(out, "w"), indent=1)
for t in old:
    print(f"{t:14s} old {old[t]:.3f} new {new[t]:.3f}  x86 {x86[t]:.0f}  per recording {per[t] or 'none (kept old)'}")
