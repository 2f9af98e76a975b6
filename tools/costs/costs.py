#!/usr/bin/env python3
"""Per-operation instruction costs of the codelets, fitted on recorded vertex runs.

  costs.py select FEATURES.tsv OUT.txt [--busy N] [--idle M]
      record indices to measure: up to N busy and M idle records per vertex type
  costs.py fit FEATURES.tsv CALLGRIND.out [...pairs] [--json OUT.json]
      joins each worker's events (replay-probe) with its instructions (callgrind
      dumps of replay-o2/o3) and fits instructions per event by least squares
  costs.py shfit FEATURES.tsv WITH.out WITHOUT.out [...triples] [--json OUT.json]
      the SH colour's own instructions: each marching worker's replay-o2 count minus
      its replay-nosh count on the same record (the same walk with DC colour), fitted
      on the SH events alone, so no other term can take a share of it

FEATURES.tsv is the output of replay-probe on a record directory; CALLGRIND.out the
combined dumps of `replay-o2 DIR --select OUT.txt --measure` under callgrind.
"""
import json
import random
import sys
from collections import defaultdict

import numpy as np

# The events each vertex type's cost is fitted on (FOAM_PROBE names, foam/probe.h).
# The SH colour (march.h): per basis evaluated with SH (once per ray a worker marches
# on since session 53; per shard visit before), the basis (sh_visit, plus sh_basis per
# coefficient per channel beyond DC); per cell coloured, the dot product
# (sh_colour, plus sh_coeff per coefficient).
SH_FULL = ["sh_visit", "sh_basis", "sh_colour", "sh_coeff"]
MODELS = {
    "TracerMarch": ["ray", "held", "visit", "region_find", "step", "neighbour", "ahead", "composite", "depth",
                    "result", "pixel"] + SH_FULL,
    "InjectorMarch": ["ray", "held", "visit", "region_find", "step", "neighbour", "ahead", "composite", "depth"]
    + SH_FULL,
    "TracerSend": ["scan", "send", "link", "wait_walk", "unmarched"],
    "RouterCount": ["ray"],
    "RouterForward": ["ray", "moved"],
    "RouterPlan": [],
    "Injector": ["emit"],
    "InjectorSend": ["deal"],
    "Generator": ["arrival"],
    # The spill store as it is now: a ray from the root, and every tracer's word of
    # finished pixels summed on every call.
    "SpillStore": ["arrival", "finish_word"],
}
# Where "active" (a worker with work) is not any of the model's events: the spill store
# sums the tracers' words on every call, and only rays make it busy; TracerSend answers
# its side links on every call, and rays make it busy.
ACTIVE_EVENTS = {"SpillStore": ["arrival"], "TracerSend": ["scan", "send", "wait_walk", "unmarched"]}
# The reduced model the cost table states: per ray loaded, per ray marched on (held),
# per shard visit, per cell step, per neighbour tested, per finished ray written; with
# SH, per basis (once per ray marched on) and per cell step (sh_step: the colour folded
# into the step, as the composite is, plus sh_stepcoeff per coefficient), which the
# device counts.
REDUCED = ["ray", "held", "visit", "step", "neighbour", "result", "pixel",
           "sh_visit", "sh_basis", "sh_step", "sh_stepcoeff"]


def read_features(path):
    rows = []
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            v = line.rstrip("\n").split("\t")
            r = dict(zip(head, v))
            for k in head[5:]:
                r[k] = int(r[k])
            r["record"] = int(r["record"])
            rows.append(r)
    return rows


def select(args):
    feats, out = args[0], args[1]
    busy_n, idle_n = 400, 40
    if "--busy" in args:
        busy_n = int(args[args.index("--busy") + 1])
    if "--idle" in args:
        idle_n = int(args[args.index("--idle") + 1])
    rows = read_features(feats)
    busy, idle = defaultdict(set), defaultdict(set)
    for r in rows:
        if r["type"] not in MODELS:
            continue
        events = ACTIVE_EVENTS.get(r["type"], MODELS[r["type"]] or ["ray"])
        (busy if any(r[e] for e in events) else idle)[r["type"]].add(r["record"])
    rng = random.Random(1)
    chosen = set()
    for t in MODELS:
        b = sorted(busy[t])
        i = sorted(idle[t] - busy[t])
        chosen |= set(rng.sample(b, min(busy_n, len(b))))
        chosen |= set(rng.sample(i, min(idle_n, len(i))))
        print(f"{t}: {len(b)} busy, {len(i)} idle records", file=sys.stderr)
    with open(out, "w") as f:
        for k in sorted(chosen):
            print(k, file=f)
    print(f"{len(chosen)} records selected", file=sys.stderr)


def read_callgrind(path):
    """Instructions per dump label ("r<record>w<worker>") and self cost per function."""
    totals, fns = {}, defaultdict(lambda: defaultdict(int))
    label, fn, skip = None, None, False
    with open(path) as f:
        for line in f:
            if line.startswith("desc: Trigger: Client Request: "):
                label = line.split(": ")[-1].strip()
            elif line.startswith("summary: ") or line.startswith("totals: "):
                totals[label] = int(line.split()[1])
            elif line.startswith("fn="):
                fn = line[3:].strip()
            elif line.startswith("calls="):
                skip = True
            elif line[:1].isdigit() or line[:1] in "+-*":
                if skip:
                    skip = False
                    continue
                parts = line.split()
                if len(parts) >= 2 and fn is not None and label is not None:
                    fns[label][fn] += int(parts[1])
    return totals, fns


def lstsq(x, y):
    """Non-negative least squares (a cost is never negative), weighted by 1/sqrt(y) so
    that the many small runs and the few large ones both count. Returns the
    coefficients, R^2, and the median and 95th-percentile relative error over all
    runs and over the runs of at least 10,000 instructions."""
    from scipy.optimize import nnls
    w = 1.0 / np.sqrt(np.maximum(y, 100.0))
    coef, _ = nnls(x * w[:, None], y * w)
    pred = x @ coef
    ss_res = float(((y - pred) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum()) or 1.0
    rel = np.abs(pred - y) / np.maximum(y, 1)
    big = y >= 10000
    stats = dict(r2=1 - ss_res / ss_tot, median_rel_err=float(np.median(rel)), p95_rel_err=float(np.percentile(rel, 95)))
    if big.any():
        stats.update(big_runs=int(big.sum()), big_median_rel_err=float(np.median(rel[big])),
                     big_p95_rel_err=float(np.percentile(rel[big], 95)))
    return coef, stats


def pop_json(args):
    """args without `--json OUT`, and OUT (or None)."""
    if "--json" not in args:
        return args, None
    i = args.index("--json")
    return args[:i] + args[i + 2:], args[i + 1]


def write_json(result, out_json):
    text = json.dumps(result, indent=1)
    if out_json:
        with open(out_json, "w") as f:
            f.write(text)
    print(text)


def fit(args):
    args, out_json = pop_json(args)
    samples = defaultdict(list)  # type -> [(features row, instructions)]
    fn_share = defaultdict(lambda: defaultdict(int))
    for feats, cg in zip(args[0::2], args[1::2]):
        rows = {(r["record"], int(r["worker"])): r for r in read_features(feats)}
        totals, fns = read_callgrind(cg)
        for label, ir in totals.items():
            if not label or not label.startswith("r"):
                continue
            rec, w = label[1:].split("w")
            r = rows.get((int(rec), int(w)))
            # A dump of no instructions measured nothing (every compute() runs some):
            # the spill store's recordings each had one, its first.
            if r is None or r["type"] not in MODELS or ir == 0:
                continue
            samples[r["type"]].append((r, ir))
            for fn, c in fns[label].items():
                fn_share[r["type"]][fn] += c
    result = {}
    for t, events in MODELS.items():
        s = samples.get(t, [])
        if not s:
            continue
        y = np.array([ir for _, ir in s], dtype=float)
        entry = {"samples": len(s), "mean_instructions": float(y.mean())}
        reduced = [e for e in REDUCED if (e in events or e.startswith("sh_") and "sh_visit" in events)
                   and not (t == "InjectorMarch" and e == "ray")] or events
        for name, ev in (("full", events), ("reduced", reduced)):
            if name == "reduced" and ev == events:
                continue
            # "active": a worker that has any work sets up (camera, shard, counters) once.
            busy = ACTIVE_EVENTS.get(t, events)
            x = np.array([[1.0, float(any(r[e] for e in busy))] + [r[e] for e in ev] for r, _ in s])
            coef, stats = lstsq(x, y)
            entry[name] = {"fixed": float(coef[0]), "active": float(coef[1]),
                           **{e: float(c) for e, c in zip(ev, coef[2:])}, **stats}
        totals_fn = fn_share[t]
        all_ir = sum(totals_fn.values()) or 1
        entry["functions"] = {fn: round(c / all_ir, 4) for fn, c in
                              sorted(totals_fn.items(), key=lambda kv: -kv[1])[:12]}
        if t in ("TracerMarch", "InjectorMarch", "RouterCount", "RouterForward"):
            # The tile waits for its busiest worker: max over workers / mean, by rays per record.
            recs = defaultdict(list)
            for r, ir in s:
                recs[r["record"]].append((r, ir))
            bins = defaultdict(list)
            for ws in recs.values():
                if len(ws) != 6:
                    continue
                rays = sum(r["ray"] for r, _ in ws)
                irs = [ir for _, ir in ws]
                b = next(lo for lo in (192, 48, 12, 6, 1, 0) if rays >= lo)
                bins[b].append(max(irs) / (sum(irs) / 6))
            entry["worker_max_over_mean"] = {f"rays>={b}": [len(v), round(float(np.mean(v)), 3)]
                                             for b, v in sorted(bins.items())}
        ev_tot = {e: sum(r[e] for r, _ in s) for e in events}
        entry["event_totals"] = ev_tot
        entry["instructions_total"] = float(y.sum())
        result[t] = entry
    write_json(result, out_json)


SH_EVENTS = ["sh_visit", "sh_basis", "sh_step", "sh_stepcoeff"]


def shfit(args):
    args, out_json = pop_json(args)
    samples = defaultdict(list)  # type -> [(features row, SH instructions)]
    for feats, with_sh, without in zip(args[0::3], args[1::3], args[2::3]):
        rows = {(r["record"], int(r["worker"])): r for r in read_features(feats)}
        on, _ = read_callgrind(with_sh)
        off, _ = read_callgrind(without)
        for label, ir in on.items():
            if not label or not label.startswith("r") or label not in off:
                continue
            rec, w = label[1:].split("w")
            r = rows.get((int(rec), int(w)))
            if r is None or r["type"] not in ("TracerMarch", "InjectorMarch"):
                continue
            samples[r["type"]].append((r, ir - off[label]))
    result = {}
    for t, s in sorted(samples.items()):
        y = np.array([d for _, d in s], dtype=float)
        x = np.array([[r[e] for e in SH_EVENTS] for r, _ in s])
        busy = y > 0
        coef, stats = lstsq(x[busy], y[busy])
        result[t] = {"samples": int(busy.sum()), "method": "replay-o2 minus replay-nosh on the same records",
                     "sh_instructions_total": float(y.sum()),
                     "reduced": {**{e: float(c) for e, c in zip(SH_EVENTS, coef)}, **stats}}
    write_json(result, out_json)


if __name__ == "__main__":
    commands = {"select": select, "fit": fit, "shfit": shfit}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(__doc__, file=sys.stderr)
        sys.exit(1)
    commands[sys.argv[1]](sys.argv[2:])
