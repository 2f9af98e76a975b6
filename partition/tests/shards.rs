//! Properties of partitions and packed shards on in-memory lattices.

use partition::fixtures::{Bcc, OwnedScene, bcc};
use partition::{Method, Partition, blob_len, build_shard, pack_all, partition, unpack_shard};

fn scene(m: u32) -> OwnedScene {
    bcc(Bcc { m, jitter: 0.2, warp: true, shuffle: true })
}

/// Every cell in exactly one shard, at the place owner/local_index say.
fn check_assignment(n: usize, part: &Partition) {
    let mut seen = vec![false; n];
    for s in 0..part.shards() {
        for (i, &g) in part.cells(s).iter().enumerate() {
            assert!(!std::mem::replace(&mut seen[g as usize], true), "cell {g} in two shards");
            assert_eq!((part.owner(g), part.local_index(g)), (s, i));
        }
    }
    assert!(seen.iter().all(|&b| b), "a cell is in no shard");
}

fn check_balance(part: &Partition) {
    let sizes: Vec<usize> = (0..part.shards()).map(|s| part.cells(s).len()).collect();
    let (min, max) = (*sizes.iter().min().unwrap(), *sizes.iter().max().unwrap());
    assert!(min > 0);
    assert!(max as f64 / min as f64 <= 1.0 + 1.0 / min as f64, "max {max} min {min}");
}

/// Every cross-shard neighbour is a halo record with the right owner and local index,
/// and every halo record is somebody's neighbour.
fn check_halo(s: &OwnedScene, part: &Partition) {
    let r = s.as_ref();
    for id in 0..part.shards() {
        let shard = build_shard(&r, part, id).unwrap();
        let n_local = shard.cells.len();
        let mut used = vec![false; shard.halo.len()];
        for (i, &g) in shard.cells.iter().enumerate() {
            let start = if i == 0 { 0 } else { shard.adjacency_end[i - 1] as usize };
            let local = &shard.adjacency[start..shard.adjacency_end[i] as usize];
            for (&nb, &a) in r.neighbours(g as usize).iter().zip(local) {
                let a = a as usize;
                if part.owner(nb) == id {
                    assert!(a < n_local && shard.cells[a] == nb);
                } else {
                    let h = shard.halo[a - n_local];
                    used[a - n_local] = true;
                    assert_eq!(h.global, nb);
                    assert_eq!(h.shard as usize, part.owner(nb));
                    assert_eq!(part.cells(h.shard as usize)[h.cell as usize], nb);
                }
            }
        }
        assert!(used.iter().all(|&u| u), "shard {id} has a halo cell nobody neighbours");
        let mut owners: Vec<u16> = shard.halo.iter().map(|h| h.shard).collect();
        owners.sort();
        owners.dedup();
        assert_eq!(owners, shard.neighbour_shards);
    }
}

/// Unpacks all blobs, checks their records against the scene and rebuilds the global
/// adjacency from shard-local indices and halo records alone.
fn check_round_trip(s: &OwnedScene, part: &Partition) {
    let r = s.as_ref();
    let packed = pack_all(&r, part, &|| {}).unwrap();
    let shards: Vec<_> = packed.iter().map(|p| unpack_shard(&p.blob).unwrap()).collect();
    let mut rebuilt: Vec<Vec<u32>> = vec![Vec::new(); s.len()];
    for (id, sh) in shards.iter().enumerate() {
        assert_eq!(sh.header.shard_id as usize, id);
        assert_eq!(sh.header.depth as u32, part.depth);
        let p = &packed[id];
        assert_eq!(p.blob.len(), blob_len(sh.cells.len(), sh.halo.len(), sh.adjacency.len()));
        assert_eq!(p.blob.len() % 8, 0);
        assert_eq!(
            (p.counts.local, p.counts.halo, p.counts.adjacency),
            (sh.header.n_local, sh.header.n_halo, sh.header.n_adj)
        );
        let global = |e: u16| -> u32 {
            let e = e as usize;
            if e < sh.cells.len() {
                part.cells(id)[e]
            } else {
                let h = sh.halo[e - sh.cells.len()];
                // The halo's site is the owner's own record of that cell.
                let owner_cell = shards[h.shard as usize].cells[h.cell as usize];
                assert_eq!([h.x, h.y, h.z], [owner_cell.x, owner_cell.y, owner_cell.z]);
                part.cells(h.shard as usize)[h.cell as usize]
            }
        };
        for (i, c) in sh.cells.iter().enumerate() {
            let g = part.cells(id)[i] as usize;
            assert_eq!([c.x, c.y, c.z], s.positions[g]);
            assert_eq!(c.density, s.density[g]);
            let info = sh.info[i];
            assert_eq!([info.r, info.g, info.b], s.color[g]);
            rebuilt[g] = sh.neighbours(i).iter().map(|&e| global(e)).collect();
        }
    }
    for (g, list) in rebuilt.iter().enumerate() {
        assert_eq!(list.as_slice(), r.neighbours(g), "cell {g}");
    }
}

fn check_all(m: u32, shards: u64) {
    let s = scene(m);
    let part = partition(&s.as_ref(), shards, Method::Kdtree).unwrap();
    assert_eq!(part.shards() as u64, shards);
    assert_eq!(1u64 << part.depth, shards);
    check_assignment(s.len(), &part);
    check_balance(&part);
    check_halo(&s, &part);
    check_round_trip(&s, &part);
}

#[test]
fn four_shards() {
    check_all(9, 4); // 1458 cells
}

#[test]
fn sixty_four_shards() {
    check_all(20, 64); // 16,000 cells
}

#[test]
fn thousand_twenty_four_shards() {
    check_all(30, 1024); // 54,000 cells, ~52.7 per shard
}

#[test]
fn uneven_counts_split_floor_and_ceil() {
    // 2·7³ = 686 cells into 64 shards: 10 or 11 each.
    let s = scene(7);
    let part = partition(&s.as_ref(), 64, Method::Kdtree).unwrap();
    check_balance(&part);
    let sizes: Vec<usize> = (0..64).map(|i| part.cells(i).len()).collect();
    assert!(sizes.iter().all(|&n| n == 10 || n == 11), "{sizes:?}");
    assert_eq!(sizes.iter().sum::<usize>(), 686);
}

#[test]
fn shard_id_bits_are_the_tree_path() {
    // The first split (top bit) and the second (next bit, inside each half) each cut
    // their node with a plane: one half lies entirely on one side on some axis.
    let s = scene(12);
    let part = partition(&s.as_ref(), 16, Method::Kdtree).unwrap();
    let bbox = |range: std::ops::Range<usize>| {
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for sh in range {
            for &g in part.cells(sh) {
                for a in 0..3 {
                    lo[a] = lo[a].min(s.positions[g as usize][a]);
                    hi[a] = hi[a].max(s.positions[g as usize][a]);
                }
            }
        }
        (lo, hi)
    };
    let separated = |a: std::ops::Range<usize>, b: std::ops::Range<usize>| {
        let ((_, ahi), (blo, _)) = (bbox(a), bbox(b));
        (0..3).any(|ax| ahi[ax] <= blo[ax])
    };
    assert!(separated(0..8, 8..16));
    assert!(separated(0..4, 4..8));
    assert!(separated(8..12, 12..16));
    assert!(separated(14..15, 15..16));
}

#[test]
fn deterministic_and_independent_of_thread_count() {
    let s = scene(16);
    let a = partition(&s.as_ref(), 256, Method::Kdtree).unwrap();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let b = pool.install(|| partition(&s.as_ref(), 256, Method::Kdtree).unwrap());
    assert_eq!(a.order, b.order);
    let pa = pack_all(&s.as_ref(), &a, &|| {}).unwrap();
    let pb = pool.install(|| pack_all(&s.as_ref(), &b, &|| {}).unwrap());
    assert!(pa.iter().zip(&pb).all(|(x, y)| x.blob == y.blob));
}

#[test]
fn coincident_sites_still_split_evenly() {
    // Ties on every coordinate break by id.
    let lists: Vec<Vec<u32>> = (0..100u32).map(|i| vec![(i + 1) % 100, (i + 99) % 100]).collect();
    let s = OwnedScene::from_lists(vec![[1.0, 2.0, 3.0]; 100], &lists);
    let part = partition(&s.as_ref(), 8, Method::Kdtree).unwrap();
    check_assignment(100, &part);
    check_balance(&part);
    check_round_trip(&s, &part);
}

#[test]
fn octree_is_complete_but_unbalanced() {
    let s = bcc(Bcc { m: 20, jitter: 0.2, warp: true, shuffle: false });
    let part = partition(&s.as_ref(), 64, Method::Octree).unwrap();
    assert_eq!(part.shards(), 64);
    check_assignment(s.len(), &part);
    let sizes: Vec<usize> = (0..64).map(|i| part.cells(i).len()).collect();
    let kd = partition(&s.as_ref(), 64, Method::Kdtree).unwrap();
    let kd_max = (0..64).map(|i| kd.cells(i).len()).max().unwrap();
    assert!(*sizes.iter().max().unwrap() > kd_max, "{sizes:?}");
    check_round_trip(&s, &part);
}

/// Shards carrying SH: each local cell's coefficients, red-green pairs then blues
/// (layout.h), in the section between the cells and the halos (binary16 or f32), and every other record
/// where a blob without them has it; the counts and balance see the same bytes.
#[test]
fn sh_coefficients_are_packed_after_the_cells() {
    let s = scene(6);
    let n = s.len();
    let stride = 45;
    let coeffs: Vec<f32> = (0..n * stride).map(|i| (i % 1000) as f32 * 0.001 - 0.5).collect();
    let part = partition(&s.as_ref(), 8, Method::Kdtree).unwrap();
    let plain = pack_all(&s.as_ref(), &part, &|| {}).unwrap();
    for (rest, f32) in [(3usize, false), (8, true), (15, false), (15, true)] {
        let sh = partition::ShPayload { coeffs: &coeffs, stride, rest, f32 };
        let r = partition::SceneRef { sh, ..s.as_ref() };
        let packed = pack_all(&r, &part, &|| {}).unwrap();
        let counted = partition::count_shards(&r, &part);
        for (id, (p, q)) in packed.iter().zip(&plain).enumerate() {
            let u = unpack_shard(&p.blob).unwrap();
            let v = unpack_shard(&q.blob).unwrap();
            assert_eq!((u.cells.len(), &u.halo, &u.adjacency), (v.cells.len(), &v.halo, &v.adjacency));
            assert_eq!((u.header.sh_rest as usize, u.header.sh_f32 == 1), (rest, f32));
            // header | 16 B cells | 16 B halo | 8 B infos | SH section | adjacency
            let base = u.header.halo_offset as usize + 16 * u.halo.len() + 8 * u.cells.len();
            assert_eq!(u.header.adj_offset as usize - base, sh.section_bytes(u.cells.len()));
            assert_eq!(p.blob.len(), partition::blob_len_sh(u.cells.len(), u.halo.len(), u.adjacency.len(), &sh));
            assert_eq!(counted[id].bytes as usize, p.blob.len());
            // Each cell's binary16 coefficients start on an 8-byte boundary (the march
            // loads two red-green pairs as one 64-bit word): 18 and 90 B take 24 and 96.
            let cell_bytes = match (rest, f32) {
                (3, false) => 24,
                (15, false) => 96,
                _ => 3 * rest * 4,
            };
            assert_eq!((sh.cell_bytes(), base % 8), (cell_bytes, 0));
            for (i, &g) in part.cells(id).iter().enumerate() {
                let cell = base + cell_bytes * i;
                let width = if f32 { 4 } else { 2 };
                assert!(
                    p.blob[cell + width * 3 * rest..cell + cell_bytes].iter().all(|&b| b == 0),
                    "shard {id} cell {i}: padding"
                );
                // scene.ply's index 3k + c (coefficient k, channel c) sits at slot 2k + c
                // among the red-green pairs, or at 2 * rest + k among the blues.
                for k in 0..3 * rest {
                    let (coefficient, channel) = (k / 3, k % 3);
                    let slot = if channel < 2 { 2 * coefficient + channel } else { 2 * rest + coefficient };
                    let want = coeffs[g as usize * stride + k];
                    let got = if f32 {
                        f32::from_le_bytes(p.blob[cell + 4 * slot..][..4].try_into().unwrap())
                    } else {
                        let h = u16::from_le_bytes(p.blob[cell + 2 * slot..][..2].try_into().unwrap());
                        half::f16::from_bits(h).to_f32()
                    };
                    let tol = if f32 { 0.0 } else { want.abs() * 1e-3 + 1e-4 };
                    assert!((got - want).abs() <= tol, "shard {id} cell {i} coefficient {k}: {got} for {want}");
                }
            }
        }
    }
    // A header naming a coefficient count no degree has is refused.
    let mut bad = plain[0].blob.clone();
    bad[36..38].copy_from_slice(&5u16.to_le_bytes());
    let e = unpack_shard(&bad).unwrap_err().to_string();
    assert!(e.contains("sh_rest 5"), "{e}");
}
