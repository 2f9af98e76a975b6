#!/usr/bin/env python3
"""The routers' instructions per call as their lanes grow, fitted on recorded runs.

  router_lanes.py OUT.json BIN DIR [DIR ...] [--keep TYPE=OLD.json ...]

Each DIR is a POPLAR_HOST_RECORD directory (see the README's cost model section);
BIN holds build.sh's replay-o2 and replay-probe. Every RouterCount, RouterForward
and RouterPlan record is replayed under callgrind (instructions per worker) and
joined with its router's params (children, injector or direct lanes) and its
events (replay-probe: rays classified, moved). The root is the router with an
in-flight cap (foam_params.max_in_flight), whose injector lanes also carry the
allowance: RouterCount sums the asks and weights, RouterForward shares it out.

Each worker run is counted twice: its x86-64 instructions, and its IPU instructions,
every executed x86 instruction weighed as ipu_mix.py weighs it (callgrind
--dump-instr=yes). The model takes the IPU fit: one IPU/x86 ratio per type
under-charged the busiest calls, whose lanes' shares divide integers (a library
call on the IPU): on the garden recording with 256 injectors, RouterForward's calls
forwarding over 20 rays a worker weigh 1.61 IPU instructions an x86 one, the type's
pooled ratio 1.14.

Fits, x86-64 and IPU instructions, least squares over every worker run:
  RouterCount, RouterForward (per worker): fixed + child * children
      + lane * own lanes + root_lane * own lanes at the root + ray * rays
      + replica_ray * rays at a router with replica lanes
  RouterForward also: + short_lane * own lanes while the upward credit is short
      (share_wanted > share_avail) + ration_lane * own lanes while the root rations
      its injectors' allowance (share_asked > share_room): only then does a worker
      divide its lanes' shares (PrefixShare in router.cpp), read from the record's ctl
  RouterPlan (one worker): fixed + child * children + lane * injector lanes
      + root_lane * injector lanes at the root
  RouterCountPlan (one worker: the six workers' counts in one walk, then
      RouterPlan; recorded under Schedule::PlanBesideMarch, --tune schedule=4): as
      RouterCount's worker, every injector lane its own
A ray at a router with replica lanes (foam_params.replica_bits) is classified by its
pixel's class too (ray.h foam_replica_class): without replica_ray, RouterCountPlan's
fit put that into the per-child cost (replica routers are the wide ones) and came out
with a per-call cost of about -1350, under every 2-child replica router's measured 1657.
Types kept from fits made before replica_ray have none (0 in the model).
where a worker's own lanes are its whole share of the injector lanes
(foam_inject_chunk in codelets/include/foam/lanes.h): RouterCount sums them for
RouterPlan, RouterForward writes their headers, and RouterPlan reads none of them.
The reduced pooled fit (costs.py) had one per-call cost per type, measured on
routers of 4 to 16 children and at most 32 injector lanes; a router under the root
with 256 direct lanes spent 14 times that in every worker before the lanes were
shared out.

--keep TYPE=OLD.json takes TYPE's fits and quality from an earlier OUT.json instead of
fitting it here (its recordings are noted beside it): for a type whose code did not
change where the new recordings fit it worse. RouterForward's per-call features
(children, own lanes, rays) miss its lanes' integer divides, which it runs only while
the upward credit is oversubscribed or, at the root, the allowance rationed: on garden
with 512 injectors its fit over every recording had a median error of 20 %. Since
session 61 its fit has a term for each state (short_lane, ration_lane): on garden,
the 1 M scene and bicycle at degree 2 (28,992 worker runs) the median error fell
from 5.2 % to 3.4 % and every router shape came to within 0.90-1.09 of measured
(the degree 2 root 1.14 and its 16-child routers 0.83 without them).
"""
import csv
import json
import os
import re
import struct
import subprocess
import sys

import numpy as np

from ipu_mix import objdump, weight

# foam_params fields (codelets/include/foam/layout.h): offset and struct format. Since
# session 56 fanout and inject_lanes are 16 bits (the fits before it read 32-bit
# fields at 28, 36 and 44).
FANOUT, INJECT_LANES, MAX_IN_FLIGHT = (26, "<H"), (30, "<H"), (36, "<I")
# foam_params.replicas.replica_bits (a router's union member): 16 bytes, any non-zero
# where a child's shard has replica tiles on the router's lanes or under it.
REPLICA_BITS = (52, 16)
# foam_router_ctl's shares (RouterPlan for RouterForward): share_avail, share_wanted,
# then share_room, share_asked; a worker divides its lanes' shares of the credit only
# while share_wanted > share_avail, of the root's allowance only while share_asked >
# share_room (answerInjectors in router.cpp).
SHARE_CREDIT, SHARE_ALLOWANCE = (4412, "<II"), (4424, "<II")
TYPES = ("RouterCount", "RouterForward", "RouterPlan", "RouterCountPlan")
WORKERS = 6  # FOAM_WORKERS


def points(d, bin_dir, types=TYPES):
    blobs = {}
    for line in open(f"{d}/blobs.txt"):
        h, o, n = line.split()
        blobs[h] = (int(o), int(n))
    recs, cur = [], None
    for line in open(f"{d}/records.txt"):
        p = line.split()
        if p[0] == "rec":
            cur = {"i": len(recs), "tile": int(p[3]), "type": p[5], "f": {}}
            recs.append(cur)
        elif p[0] == "f" and cur is not None:
            cur["f"][p[1]] = p[4]
    meta = {}
    with open(f"{d}/blobs.bin", "rb") as bb:
        for r in recs:
            if r["type"] not in types:
                continue
            o, n = blobs[r["f"]["params"]]
            bb.seek(o)
            b = bb.read(n)
            field = lambda at: struct.unpack_from(at[1], b, at[0])[0]
            replicas = any(b[REPLICA_BITS[0]:REPLICA_BITS[0] + REPLICA_BITS[1]])
            o, n = blobs[r["f"]["ctl"]]
            bb.seek(o)
            c = bb.read(n)
            avail, wanted = struct.unpack_from(SHARE_CREDIT[1], c, SHARE_CREDIT[0])
            room, asked = struct.unpack_from(SHARE_ALLOWANCE[1], c, SHARE_ALLOWANCE[0])
            root = field(MAX_IN_FLIGHT) > 0
            meta[r["i"]] = (r["type"], root, field(FANOUT), field(INJECT_LANES), replicas,
                            wanted > avail, root and asked > room)
    # Only the types being fitted are replayed (the others are --keep'd).
    tag = "" if tuple(types) == TYPES else "_" + "_".join(types)
    sel, cg, feat = f"{d}/sel_routers{tag}.txt", f"{d}/cg_routers_instr{tag}.out", f"{d}/feat.tsv"
    with open(sel, "w") as f:
        f.write("".join(f"{i}\n" for i in meta))
    if not os.path.exists(cg):  # kept between fits, as replay-probe's features are
        subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no", "--combine-dumps=yes",
                        "--dump-instr=yes", "--dump-line=no", "--compress-pos=no", "--compress-strings=no",
                        f"--callgrind-out-file={cg}", f"{bin_dir}/replay-o2", d, "--select", sel, "--measure"],
                       check=True, capture_output=True)
    if not os.path.exists(feat):
        with open(feat, "w") as f:
            subprocess.run([f"{bin_dir}/replay-probe", d], stdout=f, stderr=subprocess.DEVNULL, check=True)
    events = {}
    with open(feat) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            i = int(r["record"])
            if i in meta:
                if r["ok"] != "1":
                    sys.exit(f"{d}: record {i} does not replay as it ran")
                events[(i, int(r["worker"]))] = (int(r["ray"]), int(r["moved"]))
    totals = weighed(cg, weights(f"{bin_dir}/replay-o2"))
    out = []
    for label, (v, ipu) in totals.items():
        m = re.match(r"r(\d+)w(\d+)$", label or "")
        if not m:
            continue
        i, w = int(m.group(1)), int(m.group(2))
        t, root, fanout, lanes, replicas, short, rationed = meta[i]
        rays, moved = events.get((i, w), (0, 0))
        if v == 0:  # a dump callgrind closed before the worker ran: no compute() runs free
            continue
        # RouterCountPlan is one worker: every lane is its own.
        own = lanes if t == "RouterCountPlan" else lanes * (w + 1) // WORKERS - lanes * w // WORKERS
        out.append((t, fanout, lanes, root, rays, moved, own, v, ipu, replicas, short, rationed))
    return out


_WEIGHTS = {}


def weights(binary):
    """address -> IPU instructions for one execution of the x86 instruction there
    (ipu_mix.weight), for the replay harness `binary`."""
    if binary not in _WEIGHTS:
        code = objdump(binary)
        addrs = sorted(code)
        nxt = {a: code[b] for a, b in zip(addrs, addrs[1:])}
        _WEIGHTS[binary] = {a: weight(fn, mn, ops, nxt.get(a)) for a, (fn, mn, ops) in code.items()}
    return _WEIGHTS[binary]


def weighed(path, w):
    """(x86 instructions, IPU instructions) per dump label ("r<record>w<worker>") of a
    callgrind file made with --dump-instr=yes --compress-pos=no: each executed
    instruction weighed as ipu_mix.py weighs it. Instructions outside the binary
    (libc) weigh 1, as ipu_mix.py counts them."""
    totals = {}
    label, skip, acc = None, False, None
    with open(path) as f:
        for line in f:
            if line.startswith("desc: Trigger: Client Request: "):
                label = line.split(": ")[-1].strip()
                acc = totals.setdefault(label, [0, 0.0])
            elif line.startswith("calls="):
                skip = True
            elif line.startswith("0x"):
                if skip:  # the inclusive cost of the call on the line after calls=
                    skip = False
                    continue
                if acc is None:
                    continue
                addr, cost = line.split()[:2]
                c = int(cost)
                acc[0] += c
                acc[1] += c * w.get(int(addr, 16), 1.0)
    return {k: (v[0], v[1]) for k, v in totals.items()}


def fit(rows, columns, column=-1):
    x = np.array([[c(r) for c in columns.values()] for r in rows], dtype=float)
    y = np.array([r[column] for r in rows], dtype=float)
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    pred = x @ coef
    err = np.abs(pred - y) / np.maximum(y, 1.0)
    return {k: round(float(v), 2) for k, v in zip(columns, coef)}, float(np.median(err)), float(np.max(err)), len(rows)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    keep = {}
    while "--keep" in argv:
        i = argv.index("--keep")
        t, path = argv[i + 1].split("=", 1)
        keep[t] = json.load(open(path))
        del argv[i:i + 2]
    out_path, bin_dir, dirs = argv[0], argv[1], argv[2:]
    fitted = tuple(t for t in TYPES if t not in keep)
    rows = [p for d in dirs for p in points(d, bin_dir, fitted)]
    per_worker = {
        "fixed": lambda r: 1.0,
        "child": lambda r: r[1],
        "lane": lambda r: r[6],
        "root_lane": lambda r: r[6] if r[3] else 0.0,
        "ray": lambda r: r[4],
        "replica_ray": lambda r: r[4] if r[9] else 0.0,
    }
    # RouterForward divides its own lanes' shares only in those states (SHARE_*).
    forward = dict(per_worker, short_lane=lambda r: r[6] if r[10] else 0.0,
                   ration_lane=lambda r: r[6] if r[11] else 0.0)
    plan = {
        "fixed": lambda r: 1.0,
        "child": lambda r: r[1],
        "lane": lambda r: r[2],
        "root_lane": lambda r: r[2] if r[3] else 0.0,
    }
    result, result_ipu, notes = {}, {}, {}
    fitted_types = (("RouterCount", per_worker), ("RouterForward", forward), ("RouterPlan", plan),
                    ("RouterCountPlan", per_worker))
    for t, cols in fitted_types:
        if t in keep:
            old = keep[t]
            result[t], result_ipu[t] = old["fit"][t], old["fit_ipu"][t]
            # A type the old file kept from yet older recordings says so still.
            notes[t] = dict(old["quality"][t])
            notes[t].setdefault("kept_from", old["recordings"])
            continue
        mine = [r for r in rows if r[0] == t]
        coef, med, worst, n = fit(mine, cols, 7)
        coef_ipu, med_ipu, worst_ipu, _ = fit(mine, cols, 8)
        result[t], result_ipu[t] = coef, coef_ipu
        notes[t] = {"worker_runs": n, "median_error": round(med, 4), "max_error": round(worst, 4),
                    "ipu_median_error": round(med_ipu, 4), "ipu_max_error": round(worst_ipu, 4),
                    "ipu_per_x86": round(sum(r[8] for r in mine) / max(sum(r[7] for r in mine), 1), 4)}
    shapes = sorted({(r[1], r[2], bool(r[3])) for r in rows})
    json.dump({"fit": result, "fit_ipu": result_ipu, "quality": notes, "routers": [list(s) for s in shapes],
               "recordings": [os.path.basename(d) for d in dirs]},
              open(out_path, "w"), indent=1)
    print(json.dumps(result, indent=1))
    print(json.dumps(result_ipu, indent=1))
    print(json.dumps(notes, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
