#!/usr/bin/env python3
"""Splits a combined callgrind file of labelled worker runs (r<record>w<worker>, replay-o2
--measure under callgrind --dump-instr=yes) into one file per vertex type, so that
ipu_mix.py gives each type its own IPU/x86 ratio.

  split_mix.py FEATURES.tsv MIX.out OUT_PREFIX   -> OUT_PREFIX-<Type>.out

FEATURES.tsv: replay-probe's output on the same record directory (it names each
record's vertex type)."""
import sys
feats, mix, prefix = sys.argv[1:4]
rtype = {}
with open(feats) as f:
    head = f.readline().rstrip("\n").split("\t")
    for line in f:
        v = line.split("\t", 6)
        rtype[int(v[0])] = v[4]
outs, header, cur, buf = {}, [], None, None
def flush():
    if buf is not None:
        t = rtype[int(label[1:].split("w")[0])] if label else "unlabelled"
        if t not in outs:
            outs[t] = open(f"{prefix}-{t}.out", "w")
            outs[t].writelines(header)
        outs[t].writelines(buf)
label = None
with open(mix) as f:
    for line in f:
        if line.startswith("part: "):
            flush()
            buf, label = [line], None
        elif buf is None:
            header.append(line)
        else:
            if line.startswith("desc: Trigger: Client Request: "):
                label = line.split(": ")[-1].strip()
            buf.append(line)
flush()
for t, o in outs.items():
    o.close()
print(" ".join(sorted(outs)))
