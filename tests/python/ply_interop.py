"""scene.ply interop oracle: writes scenes with plyfile the way the Radiant Foam trainer
does, and checks files written by foam-ipu by reading them back with plyfile.

  ply_interop.py gen DIR --sh-degree D --cells N --seed S
      writes DIR/arrays.json (the exact values) and DIR/plyfile_{le,be,ascii}.ply
  ply_interop.py check FILE.ply ARRAYS.json
      reads FILE.ply with plyfile; exits 1 with a message unless its elements, property
      names, types, order and every value match ARRAYS.json bit for bit
"""

import argparse
import json
import sys

import numpy as np
from plyfile import PlyData, PlyElement


def sh_len(degree):
    return 3 * ((degree + 1) ** 2 - 1)


def vertex_dtype(k):
    # The trainer's dtype: position, quantised DC colour, activated density, exclusive
    # end of the neighbour slice, then the non-DC SH floats.
    dtype = [
        ("x", np.float32), ("y", np.float32), ("z", np.float32),
        ("red", np.uint8), ("green", np.uint8), ("blue", np.uint8),
        ("density", np.float32),
        ("adjacency_offset", np.uint32),
    ]
    dtype += [("color_sh_{}".format(i), np.float32) for i in range(k)]
    return dtype


def make_arrays(n, degree, seed):
    rng = np.random.default_rng(seed)
    k = sh_len(degree)
    points = (rng.standard_normal((n, 3)) * 5).astype(np.float32)
    # Awkward but valid floats must survive byte for byte.
    specials = np.array([-0.0, 1e-40, 3.0e38, -1.5e-7], dtype=np.float32)
    points.flat[: len(specials)] = specials
    colors = rng.integers(0, 256, (n, 3), dtype=np.uint8)
    colors[0] = [0, 255, 128]
    density = np.abs(rng.standard_normal(n) * 10).astype(np.float32)
    density[rng.random(n) < 0.25] = 0.0
    sh = rng.standard_normal((n, k)).astype(np.float32)
    # A symmetric neighbour graph, each slice in arbitrary (unsorted) order as the
    # trainer's triangulation emits it.
    pairs = set()
    for i in range(n):
        for _ in range(4):
            j = i + 1 + int(rng.integers(0, 8))
            if j < n:
                pairs.add((i, j))
    slices = [[] for _ in range(n)]
    for i, j in sorted(pairs):
        slices[i].append(j)
        slices[j].append(i)
    for s in slices:
        rng.shuffle(s)
    adjacency = np.array([j for s in slices for j in s], dtype=np.uint32)
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in slices])]).astype(np.uint32)
    return points, colors, density, sh, adjacency, offsets


def write_trainer_style(path, points, colors, density, sh, adjacency, offsets, **plydata_kwargs):
    # Row tuples into a structured array, then plyfile, as the trainer's save_ply does.
    rows = []
    for i in range(points.shape[0]):
        rows.append((points[i, 0], points[i, 1], points[i, 2],
                     colors[i, 0], colors[i, 1], colors[i, 2],
                     density[i], offsets[i + 1], *[sh[i, j] for j in range(sh.shape[1])]))
    vertex = np.array(rows, dtype=vertex_dtype(sh.shape[1]))
    adj = np.array(adjacency, dtype=[("adjacency", np.uint32)])
    PlyData([PlyElement.describe(vertex, "vertex"),
             PlyElement.describe(adj, "adjacency")], **plydata_kwargs).write(path)


def f32_list(a):
    return [float(v) for v in np.asarray(a, dtype=np.float32).ravel()]


def gen(args):
    points, colors, density, sh, adjacency, offsets = make_arrays(args.cells, args.sh_degree, args.seed)
    with open(f"{args.dir}/arrays.json", "w") as f:
        json.dump({
            "sh_degree": args.sh_degree,
            "positions": f32_list(points),
            "colors": [int(c) for c in colors.ravel()],
            "density": f32_list(density),
            "sh_rest": f32_list(sh),
            "adjacency_end": [int(o) for o in offsets[1:]],
            "adjacency": [int(a) for a in adjacency],
        }, f)
    arrays = (points, colors, density, sh, adjacency, offsets)
    write_trainer_style(f"{args.dir}/plyfile_le.ply", *arrays, byte_order="<")
    write_trainer_style(f"{args.dir}/plyfile_be.ply", *arrays, byte_order=">")
    write_trainer_style(f"{args.dir}/plyfile_ascii.ply", *arrays, text=True)


def fail(msg):
    print(f"mismatch: {msg}", file=sys.stderr)
    sys.exit(1)


def same_bits(name, got, want, dtype):
    got = np.ascontiguousarray(got, dtype=dtype)
    want = np.asarray(want, dtype=dtype)
    if got.shape != want.shape:
        fail(f"{name}: shape {got.shape}, expected {want.shape}")
    if got.tobytes() != want.tobytes():
        first = int(np.flatnonzero(got.view(f"u{got.itemsize}") != want.view(f"u{want.itemsize}"))[0])
        fail(f"{name}[{first}]: {got[first]!r}, expected {want[first]!r}")


def check(args):
    with open(args.arrays) as f:
        want = json.load(f)
    k = sh_len(want["sh_degree"])
    ply = PlyData.read(args.ply)
    names = [e.name for e in ply.elements]
    if names != ["vertex", "adjacency"]:
        fail(f"elements {names}")
    v = ply["vertex"].data
    expected = [(n, np.dtype(t).str[1:]) for n, t in vertex_dtype(k)]
    got = [(n, v.dtype[n].str[1:]) for n in v.dtype.names]
    if got != expected:
        fail(f"vertex properties {got}, expected {expected}")
    a = ply["adjacency"].data
    if [(n, a.dtype[n].str[1:]) for n in a.dtype.names] != [("adjacency", "u4")]:
        fail(f"adjacency properties {a.dtype}")
    n = len(want["density"])
    pos = np.stack([v["x"], v["y"], v["z"]], axis=1)
    same_bits("positions", pos.ravel(), want["positions"], np.float32)
    rgb = np.stack([v["red"], v["green"], v["blue"]], axis=1)
    same_bits("colors", rgb.ravel(), want["colors"], np.uint8)
    same_bits("density", v["density"], want["density"], np.float32)
    same_bits("adjacency_offset", v["adjacency_offset"], want["adjacency_end"], np.uint32)
    if k:
        sh = np.stack([v[f"color_sh_{i}"] for i in range(k)], axis=1)
        same_bits("color_sh", sh.ravel(), want["sh_rest"], np.float32)
    same_bits("adjacency", a["adjacency"], want["adjacency"], np.uint32)
    if len(v) != n:
        fail(f"{len(v)} vertices, expected {n}")
    print("ok")


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("dir")
    g.add_argument("--sh-degree", type=int, required=True)
    g.add_argument("--cells", type=int, default=300)
    g.add_argument("--seed", type=int, default=0)
    c = sub.add_parser("check")
    c.add_argument("ply")
    c.add_argument("arrays")
    args = p.parse_args()
    gen(args) if args.cmd == "gen" else check(args)


if __name__ == "__main__":
    main()
