#!/usr/bin/env python3
"""The cost table the Rust model reads (src/device/costs.rs): IPU instructions per event.

  constants.py FIT.json RATIO.json LANES.json SH.json SPILL.json SEND.json MARCH.json DEAL.json [DIFF.json] > constants.json

FIT.json: `costs.py fit` over every measured scene (x86-64 instructions per event, the
reduced model). RATIO.json: IPU thread instructions per x86-64 instruction for each
vertex type (`ipu_mix.py`). LANES.json: `router_lanes.py`, the three router types'
costs per call as their children and injector (or direct) lanes grow, which the
pooled fit cannot see (it had one cost per call, from routers of at most 16 children
and 32 injector lanes), and per ray. SH.json: `costs.py shfit` of recordings at SH degrees 1 to 3 (since session 62 garden
at 1, bicycle at 2, the 1 M synth at 3), the
SH colour's own instructions (replay-o2 minus replay-nosh on the same records) fitted
on its events, whose SH terms (sh_*: per visit and per cell step, fixed and per
coefficient) the marching types take; the rest comes from FIT.json. SPILL.json: `costs.py fit`
of recordings with the spill store summing every tracer's finished pixels, its SpillStore
entry: the spill store's (measured as `Generator`) call and word summed (SPILL_EVENTS);
its rays, which those recordings never send up, keep FIT.json's Generator fit. SEND.json:
`costs.py fit` of TracerSend's own recordings (last made in session 62, when the
tracer's ctl began to say how many held rays it kept unmarched), its TracerSend entry:
every term of TracerSend, whose model has its side links, the rays waiting for credit
that it walks again, and the rays it keeps unmarched (read, and moved into the held
prefix). MARCH.json: `costs.py fit` of the marching types' own recordings (made
in session 46 for TracerMarch, the march as it pauses a ray at its budget and hands
TracerSend the held slots it reached; in session 50 for both, when the budget began
to count each cell step by its faces), its TracerMarch entry, and its InjectorMarch
entry where it has one (else FIT.json's), but for the SH terms, which SH.json keeps
(FIT.json's TracerMarch predicted 0.95 of the instructions of the 1 M scene's runs
and 0.85 of garden's in session 46; its InjectorMarch 0.98 and 1.00). DEAL.json:
`costs.py fit` of InjectorSend's own recordings (session 72, when an injector's
direct lanes became a map from the root's children), its InjectorSend entry, and
its `ratio` of InjectorSend from the same selections' instruction mix. DIFF.json
(optional): x86 instructions per event that a codelet change added (negative:
removed), measured as a difference: the same selected records of recordings made
with the new code replayed by the old and the new replay-o2 under callgrind, the
per-run differences fitted on the events (diff_fit.py; session 75: both marching
types' visits and rays, when the march stopped writing and reading a ray's payload
between shards on one tile); added to the type's terms before the ratio. Every IPU
cost is its x86 cost (rounded to 0.01) times
its type's ratio, but the routers': LANES.json fits their IPU instructions directly
(each executed x86 instruction weighed as ipu_mix.py weighs it), and their "ratio"
is the measured IPU/x86 over all their worker runs, for reference.
"""
import json
import sys

# The events the model charges, per vertex type (foam/probe.h names; "fixed": every
# worker, every call; "active": a worker with work).
EVENTS = {
    "TracerMarch": ["fixed", "active", "ray", "held", "visit", "step", "neighbour", "result"],
    "InjectorMarch": ["fixed", "active", "held", "visit", "step", "neighbour"],
    "TracerSend": ["fixed", "active", "scan", "send", "link", "wait_walk", "unmarched"],
    "Injector": ["fixed", "active", "emit"],
    "InjectorSend": ["fixed", "active", "deal"],
    "Generator": ["fixed", "active", "arrival"],
}


# The spill store's terms from SPILL.json (its other terms: FIT.json's Generator).
SPILL_EVENTS = ["fixed", "finish_word"]

# The SH terms, from SH.json, of the types that march.
SH_EVENTS = ["sh_visit", "sh_basis", "sh_step", "sh_stepcoeff"]


def reduced(fit, t):
    e = fit[t]
    return e.get("reduced") or e["full"]


def main(argv):
    if len(argv) not in (8, 9):
        sys.exit(__doc__)
    fit, ratio, lanes, sh, spill, send, march, deal = (json.load(open(p)) for p in argv[:8])
    diff = json.load(open(argv[8])) if len(argv) == 9 else {}
    ratio = {**ratio, **deal["ratio"]}
    own = {"TracerSend": send, "TracerMarch": march, "InjectorSend": deal}
    if "InjectorMarch" in march:
        own["InjectorMarch"] = march
    x86 = {t: {k: round(reduced(own.get(t, fit), t).get(k, 0.0), 2) for k in ev}
           for t, ev in EVENTS.items()}
    x86["Generator"].update({k: round(reduced(spill, "SpillStore").get(k, 0.0), 2) for k in SPILL_EVENTS})
    for t in ("TracerMarch", "InjectorMarch"):
        x86[t].update({k: round(reduced(sh, t).get(k, 0.0), 2) for k in SH_EVENTS})
    for t, terms in diff.get("difference", {}).items():
        for k, v in terms.items():
            x86[t][k] = round(x86[t][k] + v, 2)
    routers = ("RouterCount", "RouterForward", "RouterPlan", "RouterCountPlan")
    for t in routers:
        x86[t] = {k: round(v, 2) for k, v in lanes["fit"][t].items()}
    out = {
        "about": "IPU thread instructions per event, measured: x86-64 instructions per event fitted on "
                 "recorded codelet runs under callgrind (g++ 12 -O2 -mf16c, tools/costs/costs.py) times "
                 "each vertex type's IPU/x86 ratio from its instruction mix (tools/costs/ipu_mix.py); the routers' "
                 "IPU instructions fitted directly, each x86 instruction weighed the same way (router_lanes.py). "
                 "Generated by tools/costs/constants.py from tools/costs/data/; do not edit by hand.",
        "ratio": {t: (lanes["quality"][t]["ipu_per_x86"] if t in routers else ratio[t]) for t in x86},
        "x86": x86,
        "ipu": {t: ({k: round(v, 2) for k, v in lanes["fit_ipu"][t].items()} if t in routers
                    else {k: v * ratio[t] for k, v in ev.items()}) for t, ev in x86.items()},
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
