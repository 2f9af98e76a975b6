#!/usr/bin/env python3
"""The modelled Mk2 frame with measured codelet costs, and where its time goes.

  frame_model.py PROFILE FIT.json FEATURES.tsv [--ratio R.json] [--rc 20] [--json OUT]
                 [--bench BENCH.json]
                 [--what-if NAME=VALUE ...]

PROFILE: every tile's work per iteration of an rc-1 run (FOAM_PROFILE_DUMP=FILE with
`foam-ipu bench`, src/cmd/bench/profile.rs). FIT.json: costs.py fit output (x86-64
instructions per event, per vertex type). FEATURES.tsv: replay-probe events of the same
scene and configuration, for the ratios the profile does not carry (neighbours per cell
step, rays marched per shard visit, ...). R.json: IPU thread instructions per x86
instruction for each vertex type (ipu_mix.py); default 1.0.

The model follows the program: per iteration three compute sets and one exchange, each
ending in a chip-wide sync. A MultiVertex takes 6 x its busiest worker's instructions
(barrel scheduling: a worker issues once every six cycles), a Vertex 6 x its
instructions; a tile's busiest worker is its mean worker times the max/mean ratio the
replays measured for that many rays.
"""
import json
import sys
from collections import defaultdict

import numpy as np

CLOCK_HZ = 1.33e9
SYNC = 300.0  # cycles per chip-wide sync
VERTEX = 100.0  # supervisor launch of a compute set's vertices on a tile
EXCHANGE_SETUP = 100.0
EXCHANGE_BPC = 4.0  # bytes per cycle a tile sends
HOST_ROUND_TRIP_S = 20e-6


def load_fit(path):
    fit = json.load(open(path))
    coef = {}
    for t, e in fit.items():
        m = e.get("reduced") or e.get("full")
        coef[t] = {k: v for k, v in m.items() if not k.startswith(("r2", "median", "p95", "big"))}
        coef[t]["_imb"] = e.get("worker_max_over_mean", {})
    return coef


def ratios(features):
    """Per vertex type, the mean of each event per other event, from a scene's replays."""
    tot = defaultdict(lambda: defaultdict(float))
    with open(features) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            v = line.rstrip("\n").split("\t")
            t = v[4]
            for k, x in zip(head[7:], v[7:]):
                tot[t][k] += float(x)
    return tot


def imbalance(imb, rays):
    """max/mean worker instructions for a tile with this many rays (replay bins)."""
    if rays <= 0:
        return 1.0
    if rays < 6:
        return 6.0 / rays  # at most `rays` workers have any
    best = 1.0
    for key, (n, v) in imb.items():
        lo = int(key.split(">=")[1])
        if rays >= lo and lo >= 6 and n >= 5:
            best = v
    return best


def main(argv):
    prof, fitp, featp = argv[0], argv[1], argv[2]
    opts = dict(rc=20, ratio=None, json=None, bench=None)
    whatif = {}
    i = 3
    while i < len(argv):
        if argv[i] == "--rc":
            opts["rc"] = int(argv[i + 1]); i += 2
        elif argv[i] == "--ratio":
            opts["ratio"] = argv[i + 1]; i += 2
        elif argv[i] == "--bench":
            opts["bench"] = argv[i + 1]; i += 2
        elif argv[i] == "--json":
            opts["json"] = argv[i + 1]; i += 2
        elif argv[i] == "--what-if":
            k, v = argv[i + 1].split("="); whatif[k] = float(v); i += 2
        else:
            sys.exit(f"unknown argument {argv[i]}")
    c = load_fit(fitp)
    tot = ratios(featp)
    ratio = json.load(open(opts["ratio"])) if opts["ratio"] else {}
    R = lambda t: ratio.get(t, 1.0)

    # Scene ratios for what the profile does not count.
    tm, im = tot["TracerMarch"], tot["InjectorMarch"]
    per = lambda d, a, b: d[a] / d[b] if d[b] else 0.0
    tr = dict(nb=per(tm, "neighbour", "step"), held=per(tm, "held", "visit"), ray=per(tm, "ray", "visit"),
              res=per(tm, "result", "pixel") if tm["pixel"] + tm["result"] else 0.0)
    # Tracer pixels counter = results kept + pixels written home.
    frac_res = tm["result"] / (tm["result"] + tm["pixel"]) if tm["result"] + tm["pixel"] else 0.0
    ij = dict(nb=per(im, "neighbour", "step"), held=per(im, "held", "visit"))
    ts, rf = tot["TracerSend"], tot["RouterForward"]
    send_scan = dict(scan_per_ray=per(ts, "scan", "ray") if ts["ray"] else 1.0)
    scan_per_moved = per(rf, "ray", "moved") or 1.0
    # TracerSend's events come from its own records: scans per TracerMarch ray loaded.
    scan_per_load = per(ts, "scan", "ray") if ts["ray"] else (ts["scan"] / tm["ray"] if tm["ray"] else 1.0)
    send_per_scan = per(ts, "send", "scan")

    header = {}
    tiles = []
    work = defaultdict(dict)  # iteration -> tile -> (rays, steps, px)
    with open(prof) as f:
        for line in f:
            if line.startswith("#"):
                p = line[1:].split()
                header = {p[k]: int(p[k + 1]) for k in range(0, len(p), 2)}
            elif line.startswith("tile "):
                p = line.split()
                tiles.append(dict(role=p[2], level=int(p[4]), fanout=int(p[6]), inject=int(p[8]), sides=int(p[10]),
                                  sent=int(p[12])))
            else:
                it, t, rays, steps, px = map(int, line.split()[:5])
                work[it][t] = (rays, steps, px)
    n_iter = max(work) if work else 0
    if opts["bench"]:  # the iterations the run needed, idle ones at the end included
        est = json.load(open(opts["bench"]))["run"]["estimate"]
        n_iter = max(n_iter, est["iterations_needed"])
    ntiles = len(tiles)

    def march_cost(t, coef, visits, steps, nb_per_step, held, loads, res, pix, imb_key):
        """(tile cycles, thread instructions) of a MultiVertex marching."""
        var = (coef.get("ray", 0) * loads + coef.get("held", 0) * held + coef.get("visit", 0) * visits +
               coef.get("step", 0) * steps + coef.get("neighbour", 0) * steps * nb_per_step +
               coef.get("result", 0) * res + coef.get("pixel", 0) * pix)
        active = coef.get("active", 0) * min(6, loads) if loads else 0
        instr = (6 * coef["fixed"] + active + var) * R(t)
        imb = force_imb if force_imb else imbalance(coef["_imb"], loads)
        worker = (coef["fixed"] + (coef.get("active", 0) if loads else 0) + var / 6 * imb) * R(t)
        return 6 * worker, instr

    # per tile, per compute set, cycles summed over the frame (for the distribution)
    tile_cycles = np.zeros(ntiles)
    tile_instr = np.zeros(ntiles)
    per_iter = []
    busiest = []
    total_steps = 0
    plan_cycles = {}
    # The spill store sums every tracer's word of finished pixels on every call.
    words = sum(1 for tl in tiles if tl["role"] == "Tracer") * c["Generator"].get("finish_word", 0)
    for tix, tl in enumerate(tiles):
        if tl["role"] == "Router":
            plan_cycles[tix] = 6 * c["RouterPlan"]["fixed"] * R("RouterPlan") * whatif.get("plan", 1.0)
    idle = {}
    # Idle tiles still launch their vertices: fixed costs per compute set.
    for tix, tl in enumerate(tiles):
        role = tl["role"]
        if role == "Tracer":
            idle[tix] = (6 * c["TracerMarch"]["fixed"] * R("TracerMarch"), 6 * c["TracerSend"]["fixed"] * R("TracerSend"), 0.0)
        elif role == "Router":
            idle[tix] = (6 * c["RouterCount"]["fixed"] * R("RouterCount"), plan_cycles[tix],
                         6 * c["RouterForward"]["fixed"] * R("RouterForward"))
        elif role == "Injector":
            idle[tix] = (6 * c["Injector"]["fixed"] * R("Injector"), 6 * c["InjectorMarch"]["fixed"] * R("InjectorMarch"),
                         6 * c["InjectorSend"]["fixed"] * R("InjectorSend"))
        else:
            idle[tix] = (6 * (c["Generator"]["fixed"] + words) * R("Generator"), 0.0, 0.0)
    idle_arr = np.array([idle[t] for t in range(ntiles)])
    # What-ifs (idealised: iterations and traffic unchanged, work split evenly):
    #   spare=N        N free tiles given greedily to the tracers and injectors with the
    #                  most marching per frame, each replica taking an equal share
    #   imbalance=X    busiest/mean worker of a marching tile (X=1: split by cost)
    #   plan=X, exchange=X, fixed=X   scale RouterPlan, exchange bytes, other fixed costs
    share = np.ones(ntiles)
    if whatif.get("steps"):  # steps=X: X times the cell steps per visit (a denser scene, same view)
        work = {i: {t: (r, st * whatif["steps"], px) for t, (r, st, px) in w.items()} for i, w in work.items()}
    roles_spare = {1: ("Injector",), 2: ("Tracer",)}.get(int(whatif.get("spare_roles", 0)), ("Tracer", "Injector"))
    # march=X scales the cost of a cell step and of a neighbour; router=X a router's per-ray costs
    for t in ("TracerMarch", "InjectorMarch"):
        for k in ("step", "neighbour"):
            if k in c[t]:
                c[t][k] *= whatif.get("march", 1.0)
    for t in ("RouterCount", "RouterForward"):
        for k in ("ray", "moved"):
            if k in c[t]:
                c[t][k] *= whatif.get("router", 1.0)
    if whatif.get("spare"):
        load = np.zeros(ntiles)
        for it_work in work.values():
            for tix, (rays, steps, px) in it_work.items():
                if tiles[tix]["role"] in roles_spare:
                    load[tix] += steps + rays
        import heapq
        heap = [(-load[t], t) for t in range(ntiles) if load[t] > 0]
        heapq.heapify(heap)
        for _ in range(int(whatif["spare"])):
            if not heap:
                break
            l, t = heapq.heappop(heap)
            share[t] += 1
            heapq.heappush(heap, (-load[t] / share[t], t))
    if whatif.get("replicate"):
        # replicate=K: every marching tile's frame load split over ceil(load / (K x mean))
        # tiles (mean over all 1472), as replicas of its shards planned from the camera
        load = np.zeros(ntiles)
        for it_work in work.values():
            for tix, (rays, steps, px) in it_work.items():
                if tiles[tix]["role"] in ("Tracer", "Injector"):
                    load[tix] += steps + 3 * rays
        mean = load.sum() / 1472
        for t in range(ntiles):
            if load[t] > 0:
                share[t] = max(1.0, np.ceil(load[t] / (whatif["replicate"] * mean)))
    if whatif.get("budget"):
        # budget=B: a marching tile does at most B (cell steps + 3 x visits) per iteration
        # and carries the rest over (rays resume where they stopped)
        B = whatif["budget"]
        last = max(work) if work else 0
        march_t = np.array([t["role"] in ("Tracer", "Injector") for t in tiles])
        arr = np.zeros((last + 1, ntiles, 3))
        for it_, w_ in work.items():
            for tix, v in w_.items():
                arr[it_, tix] = v
        q = np.zeros((ntiles, 3))
        out = []
        it = 1
        while (it <= last or q[march_t].sum() > 1e-6) and it <= 20 * last:
            if it <= last:
                q[march_t] += arr[it, march_t] / share[march_t, None]
            size = q[:, 1] + 3 * q[:, 0]
            f = np.where(size > B, B / np.maximum(size, 1e-9), 1.0)
            done = q * f[:, None]
            q -= done
            row = arr[it].copy() if it <= last else np.zeros((ntiles, 3))
            row[march_t] = done[march_t] * share[march_t, None]
            out.append(row)
            it += 1
        work = {i + 1: {int(t): tuple(r[t]) for t in np.nonzero(r.sum(1) > 0)[0]} for i, r in enumerate(out)}
        n_iter_budget = len(out)
    force_imb = whatif.get("imbalance")
    if whatif.get("budget"):
        n_iter = max(n_iter, n_iter_budget)
    merged_max = 0.0  # one compute set per iteration: the busiest tile's three phases together
    for it in range(1, n_iter + 1):
        cs = idle_arr.copy()
        steps_it = 0
        for tix, (rays, steps, px) in work.get(it, {}).items():
            tl = tiles[tix]
            role = tl["role"]
            if share[tix] > 1:
                k = share[tix]
                steps_it += steps * (1 - 1 / k) if role in ("Tracer", "Injector") else 0
                rays, steps, px = rays / k, steps / k, px / k
            if role == "Tracer":
                res = px * frac_res
                pix = px - res
                held = rays * tr["held"]
                loads = held + pix  # rays marched on, and finished rays arriving home
                cyc, _ = march_cost("TracerMarch", c["TracerMarch"], rays, steps, tr["nb"], held, loads, res, pix, None)
                scan = loads * scan_per_load
                send = scan * send_per_scan
                cs[tix, 0] = cyc
                cs[tix, 1] = 6 * (c["TracerSend"]["fixed"] + c["TracerSend"].get("active", 0) * (scan > 0) +
                                  c["TracerSend"].get("scan", 0) * scan +
                                  c["TracerSend"].get("send", 0) * send) * R("TracerSend")
                steps_it += steps
            elif role == "Router":
                scanned = rays * scan_per_moved
                rc_, rf_ = c["RouterCount"], c["RouterForward"]
                imb = imbalance(rc_["_imb"], scanned)
                cs[tix, 0] = 6 * (rc_["fixed"] + rc_.get("active", 0) + rc_.get("ray", 0) * scanned / 6 * imb) * R("RouterCount")
                cs[tix, 2] = 6 * (rf_["fixed"] + rf_.get("active", 0) + (rf_.get("ray", 0) * scanned + rf_.get("moved", 0) * rays) / 6 *
                                  imbalance(rf_["_imb"], scanned)) * R("RouterForward")
            elif role == "Injector":
                held = rays * ij["held"]
                cyc, _ = march_cost("InjectorMarch", c["InjectorMarch"], rays, steps, ij["nb"], held, held, 0, 0, None)
                cs[tix, 0] = 6 * (c["Injector"]["fixed"] + c["Injector"].get("active", 0) * (px > 0) +
                                  c["Injector"].get("emit", 0) * px) * R("Injector")
                cs[tix, 1] = cyc
                cs[tix, 2] = 0.0
                if whatif.get("align"):  # injectors march in the tracers' compute set, emit with their send
                    cs[tix, 2] = cs[tix, 0]
                    cs[tix, 0], cs[tix, 1] = cyc, 0.0
                cs[tix, 2] += 6 * (c["InjectorSend"]["fixed"] + c["InjectorSend"].get("active", 0) * (px > 0) +
                                  c["InjectorSend"].get("deal", 0) * px) * R("InjectorSend")
                steps_it += steps
            else:
                cs[tix, 0] = 6 * (c["Generator"]["fixed"] + words + c["Generator"].get("active", 0) * (rays > 0) +
                                  c["Generator"].get("arrival", 0) * rays) * R("Generator")
        total_steps += steps_it
        tile_cycles += cs.sum(axis=1) * share  # a replicated tile's work, on all its replicas
        mx = cs.max(axis=0)
        merged_max += float(cs.sum(axis=1).max())
        arg = cs.argmax(axis=0)
        per_iter.append(mx)
        b = []
        for k in range(3):
            tix = int(arg[k])
            r = work.get(it, {}).get(tix, (0, 0, 0))
            b.append((tiles[tix]["role"], tix, r[0], r[1], r[2], float(mx[k]), float(share[tix])))
        busiest.append(b)
    per_iter = np.array(per_iter) if per_iter else np.zeros((0, 3))
    rc = opts["rc"]
    calls = -(-n_iter // rc)
    iters = calls * rc
    compute = float(per_iter.sum())
    launch_sync = iters * 3 * (VERTEX + SYNC)
    exch = iters * (EXCHANGE_SETUP + header.get("busiest_link_bytes", 0) * whatif.get("exchange", 1.0) / EXCHANGE_BPC + SYNC)
    host = calls * HOST_ROUND_TRIP_S
    frame = (compute + launch_sync + exch) / CLOCK_HZ + host
    nz = tile_cycles
    all_tiles = np.concatenate([np.full(int(share[t]), nz[t] / share[t]) for t in range(ntiles)])
    if len(all_tiles) < 1472:
        all_tiles = np.concatenate([all_tiles, np.zeros(1472 - len(all_tiles))])
    roles = np.array([t["role"] for t in tiles])
    tracer_tiles = roles == "Tracer"
    stats = lambda v: dict(mean=float(v.mean()), p50=float(np.percentile(v, 50)), p90=float(np.percentile(v, 90)),
                           p99=float(np.percentile(v, 99)), max=float(v.max()))
    top = np.argsort(-nz)[:8]
    # Which role is busiest per compute set, counted over iterations.
    who = [defaultdict(int) for _ in range(3)]
    for b in busiest:
        for k in range(3):
            who[k][b[k][0]] += 1
    # The cell-step floor: every marching instruction of the frame spread over all tiles.
    march_instr = 0.0
    mt = c["TracerMarch"]
    per_step = (mt.get("step", 0) + mt.get("neighbour", 0) * tr["nb"]) * R("TracerMarch")
    floor_cycles = total_steps * per_step / 1472
    out = dict(
        iterations_needed=n_iter, iterations=iters, host_calls=calls,
        frame_ms=frame * 1e3, compute_ms=compute / CLOCK_HZ * 1e3, launch_sync_ms=launch_sync / CLOCK_HZ * 1e3,
        exchange_ms=exch / CLOCK_HZ * 1e3, host_ms=host * 1e3,
        per_iteration_us=dict(cs1=float(per_iter[:, 0].mean() / CLOCK_HZ * 1e6), cs2=float(per_iter[:, 1].mean() / CLOCK_HZ * 1e6),
                              cs3=float(per_iter[:, 2].mean() / CLOCK_HZ * 1e6)),
        busiest_role_iterations=[dict(w) for w in who],
        # every tile of the chip: replicas on tiles of their own, tiles outside the tree idle
        tile_compute_ms_all=stats(all_tiles / CLOCK_HZ * 1e3), tile_compute_ms_tracers=stats(nz[tracer_tiles] / CLOCK_HZ * 1e3),
        # busiest tile (a replicated tile's share on one replica) over the mean of all 1472 tiles
        busiest_over_mean=float(all_tiles.max() / all_tiles.mean()),
        top_tiles=[dict(tile=int(t), role=tiles[t]["role"], level=tiles[t]["level"], ms=float(nz[t] / CLOCK_HZ * 1e3)) for t in top],
        total_cell_steps=total_steps, ipu_instr_per_step=per_step, floor_ms=floor_cycles / CLOCK_HZ * 1e3,
        exchange_bytes_busiest=header.get("busiest_link_bytes", 0),
        scene_ratios=dict(tracer=tr, injector=ij, scan_per_moved=scan_per_moved, scan_per_load=scan_per_load,
                          send_per_scan=send_per_scan, frac_results=frac_res),
        what_if=whatif, replicas=int(share.sum() - ntiles),
        compute_ms_if_one_compute_set=merged_max / CLOCK_HZ * 1e3,
        role_totals={r: dict(tiles=int((roles == r).sum()), cell_steps=int(sum(w[t][1] for w in work.values() for t in w if tiles[t]["role"] == r)),
                             compute_ms=float(nz[roles == r].sum() / CLOCK_HZ * 1e3)) for r in ("Tracer", "Injector", "Router", "Generator")},
        busiest_per_iteration=[[list(x) for x in b] for b in busiest],
    )
    text = {k: v for k, v in out.items() if k != "busiest_per_iteration"}
    print(json.dumps(text, indent=1))
    if opts["json"]:
        json.dump(out, open(opts["json"], "w"))


if __name__ == "__main__":
    main(sys.argv[1:])
