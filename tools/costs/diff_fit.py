#!/usr/bin/env python3
"""What a codelet change added per event, measured as a difference.

  diff_fit.py TYPE EVENTS FEAT.tsv OLD.out NEW.out [FEAT.tsv OLD.out NEW.out ...] [--json OUT]

TYPE: a vertex type (InjectorMarch); EVENTS: its events to fit on, comma-separated
(visit,held). Each triple: the features of a recording made by the new code
(`replay-probe DIR > FEAT.tsv`), and the same selected records replayed under
callgrind by the old code's replay-o2 (OLD.out) and the new code's (NEW.out), as
README "How the constants were measured" does. Fits every worker run's difference
(new minus old instructions) on the events by least squares, without a constant (a
run that takes none of them takes the same code), and prints the x86 instructions
each event added (negative: removed), per recording and pooled; --json writes the
pooled fit in the form constants.py's DIFF.json takes.
"""
import json
import sys

import numpy as np

import costs


def runs(feat, old, new, vertex, events):
    """(events, new minus old instructions) of every worker run measured by both."""
    features = {f"r{r['record']}w{r['worker']}": r for r in costs.read_features(feat) if r["type"] == vertex}
    before, _ = costs.read_callgrind(old)
    after, _ = costs.read_callgrind(new)
    rows = [(features[k], after[k] - before[k]) for k in before if k in after and k in features]
    return np.array([[r[e] for e in events] for r, _ in rows], float), np.array([d for _, d in rows], float)


def fit(x, y):
    c, _, _, _ = np.linalg.lstsq(x, y, rcond=None)
    return c, float(np.abs(y - x @ c).max()) if len(y) else 0.0


def main(argv):
    out = argv[argv.index("--json") + 1] if "--json" in argv else None
    args = [a for i, a in enumerate(argv) if a != "--json" and (i == 0 or argv[i - 1] != "--json")]
    if len(args) < 5 or (len(args) - 2) % 3:
        sys.exit(__doc__)
    vertex, events = args[0], args[1].split(",")
    xs, ys = [], []
    for i in range(2, len(args), 3):
        x, y = runs(args[i], args[i + 1], args[i + 2], vertex, events)
        c, worst = fit(x, y)
        print(f"{args[i]}: {len(y)} runs, {y.sum():+.0f} instructions;",
              ", ".join(f"{e} {v:+.2f}" for e, v in zip(events, c)), f"(largest residual {worst:.0f})")
        xs.append(x)
        ys.append(y)
    x, y = np.vstack(xs), np.concatenate(ys)
    c, worst = fit(x, y)
    print(f"pooled: {len(y)} runs, {y.sum():+.0f} instructions;",
          ", ".join(f"{e} {v:+.2f}" for e, v in zip(events, c)), f"(largest residual {worst:.0f})")
    if out:
        totals = {e: int(x[:, k].sum()) for k, e in enumerate(events)}
        result = {"runs": len(y), "instructions_added": int(y.sum()), "event_totals": totals,
                  "difference": {vertex: {e: round(float(v), 2) for e, v in zip(events, c)}}}
        with open(out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
