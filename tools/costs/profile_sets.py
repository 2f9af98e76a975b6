#!/usr/bin/env python3
"""Where a modelled frame's compute goes, from a profile dump alone (no fit needed).

  profile_sets.py PROFILE [--top N]

PROFILE: FOAM_PROFILE_DUMP=FILE foam-ipu bench ... (src/cmd/bench/profile.rs): each
tile's role, then per iteration each active tile's modelled cycles in every compute
set. Prints, per compute set, its share of the frame (the busiest tile of each
iteration, summed) and which roles were that busiest tile; per role, its tiles'
frame totals (max, mean, 90th percentile); and the N tiles with the largest totals.
The exchange and the syncs are not in the dump: bench prints them.
"""
import sys
from collections import Counter, defaultdict

CLOCK_HZ = 1.33e9


def ms(cycles):
    return cycles / CLOCK_HZ * 1e3


def option(argv, name, default):
    """The integer after `name` in argv, or `default`."""
    return int(argv[argv.index(name) + 1]) if name in argv else default


def read_dump(path):
    """A profile dump as (compute sets, {tile: (role, shard)} with shard -1 for a tile
    holding none, [(iteration, tile, rays in, cell steps, [cycles per set])])."""
    sets, tiles, rows = None, {}, []
    for line in open(path):
        w = line.split()
        if line.startswith("#"):
            sets = int(w[w.index("sets") + 1])
        elif line.startswith("tile"):
            tiles[int(w[1])] = (w[2], int(w[-1]))
        elif w:
            rows.append((int(w[0]), int(w[1]), int(w[2]), int(w[3]), [float(c) for c in w[5:5 + sets]]))
    return sets, tiles, rows


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    path, top = argv[0], option(argv, "--top", 10)
    sets, tiles, rows = read_dump(path)
    role = {t: r for t, (r, _) in tiles.items()}
    busiest = defaultdict(dict)  # iteration -> set -> (cycles, tile)
    total, steps, visits = defaultdict(float), Counter(), Counter()
    for it, tile, rays, cell_steps, cycles in rows:
        total[tile] += sum(cycles)
        visits[tile] += rays
        steps[tile] += cell_steps
        for k, c in enumerate(cycles):
            if c > busiest[it].get(k, (0.0, None))[0]:
                busiest[it][k] = (c, tile)
    print(f"{path}: {len(busiest)} iterations with work, {sets} compute sets")
    for k in range(sets):
        by_role = defaultdict(lambda: [0, 0.0])
        for per_set in busiest.values():
            c, tile = per_set.get(k, (0.0, None))
            if tile is not None:
                by_role[role[tile]][0] += 1
                by_role[role[tile]][1] += c
        spent = sum(v[1] for v in by_role.values())
        who = ", ".join(f"{r} {n} it {ms(c):.2f} ms" for r, (n, c) in sorted(by_role.items(), key=lambda x: -x[1][1]))
        print(f"  set {k}: {ms(spent):.2f} ms ({who})")
    per_role = defaultdict(list)
    for tile, t in total.items():
        per_role[role[tile]].append(ms(t))
    for r, v in sorted(per_role.items()):
        v.sort()
        print(f"  {r}: {len(v)} tiles with work, max {v[-1]:.2f} ms, mean {sum(v) / len(v):.2f}, p90 {v[int(0.9 * (len(v) - 1))]:.2f}")
    for tile in sorted(total, key=lambda t: -total[t])[:top]:
        print(f"  tile {tile} {role[tile]}: {ms(total[tile]):.1f} ms, {steps[tile]} cell steps, {visits[tile]} rays in")


if __name__ == "__main__":
    main(sys.argv[1:])
