#!/usr/bin/env python3
"""How low the busiest tile of a frame could go on the chip's tiles, from a profile dump.

  tile_bound.py PROFILE [--tiles N]

PROFILE: FOAM_PROFILE_DUMP=FILE foam-ipu bench ... (src/cmd/bench/profile.rs). Each
shard's work is the modelled compute of all its tiles (its tracer and replicas) over
the frame, the injectors' work their compute summed. For a busiest tile of X ms,
every shard takes ceil(work / X) tiles, and a router besides where it takes more
than one (as a replicated shard does); the injectors share ceil(work / X) tiles;
the tree's other routers and the spill store stay. The smallest X whose tiles fit
N (1472, a Mk2) is a lower bound on the plan's busiest tile: it lets a shard take
any number of tiles (the plan: a power of two, at most 16), splits every shard's
and the injectors' work evenly (the plan's groups and regions are uneven), and
keeps each shard's work as measured (more tiles add exchange and routing). The
frame is at least that tile's work, and pays the other compute sets, the exchange
and the syncs on every iteration besides.
"""
import math
import sys
from collections import defaultdict

from profile_sets import ms, option, read_dump


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    path, tiles = argv[0], option(argv, "--tiles", 1472)
    _, roles, rows = read_dump(path)
    total = defaultdict(float)
    for _, tile, _, _, cycles in rows:
        total[tile] += ms(sum(cycles))
    work, on = defaultdict(float), defaultdict(int)
    for t, (r, s) in roles.items():
        if r == "Tracer":
            work[s] += total[t]
            on[s] += 1
    injectors = sum(total[t] for t, (r, _) in roles.items() if r == "Injector")
    groups = sum(1 for n in on.values() if n > 1)
    kept = sum(1 for r, _ in roles.values() if r in ("Router", "Spill")) - groups
    busiest = max(total.values())

    def needed(x):
        split = [math.ceil(v / x) for v in work.values()]
        return sum(split) + sum(1 for n in split if n > 1) + kept + math.ceil(injectors / x)

    lo, hi = 0.01, max(max(work.values()), injectors, 0.01)
    if needed(hi) > tiles:
        sys.exit(f"{path}: not even one tile a shard fits {tiles} tiles")
    for _ in range(60):  # needed() falls as x grows: bisect for the smallest x that fits
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if needed(mid) <= tiles else (mid, hi)
    print(f"{path}: {len(work)} shards, {sum(work.values()):.0f} ms of tracer work, {injectors:.0f} ms of injector "
          f"work, {kept} routers and spill store kept")
    print(f"busiest tile now {busiest:.1f} ms; on {tiles} tiles at least {hi:.1f} ms "
          f"({needed(hi)} tiles: every shard and the injectors split evenly)")


if __name__ == "__main__":
    main(sys.argv[1:])
