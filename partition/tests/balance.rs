//! Cutting by shard bytes: on a scene whose cells weigh unevenly the two halves of
//! every split hold the same bytes, not the same cells; the counts are the packer's;
//! and the choice between the paper's cut and the balanced one.

use partition::fixtures::{Bcc, OwnedScene, bcc};
use partition::{
    BALANCE_TOLERANCE, Balance, Counted, MAX_ROUNDS, Method, ShardCounts, balance_bytes, balance_load, count_shards,
    cut, pack_all, partition,
};

/// Sites along x (with a little jitter across), each the neighbour of the sites up to
/// k places away along the line, k = 24 left of the middle and 2 right of it: a left
/// cell brings its shard 120 bytes, a right one 32.
fn skewed(n: u32) -> OwnedScene {
    let reach = |i: u32| if i < n / 2 { 24 } else { 2 };
    let lists: Vec<Vec<u32>> = (0..n)
        .map(|i| {
            let lo = i.saturating_sub(24);
            let hi = (i + 24).min(n - 1);
            (lo..=hi).filter(|&j| j != i && i.abs_diff(j) <= reach(i).min(reach(j))).collect()
        })
        .collect();
    let positions =
        (0..n).map(|i| [i as f32 / n as f32, ((i * 7) % 13) as f32 * 1e-4, ((i * 5) % 11) as f32 * 1e-4]).collect();
    OwnedScene::from_lists(positions, &lists)
}

fn counted(s: &OwnedScene, shards: u64) -> Counted {
    let partition = partition(&s.as_ref(), shards, Method::Kdtree).unwrap();
    let counts = count_shards(&s.as_ref(), &partition);
    Counted { partition, counts }
}

fn bytes(counts: &[ShardCounts]) -> Vec<f64> {
    counts.iter().map(|c| c.bytes as f64).collect()
}

/// Largest relative difference between the two halves of any k-d node.
fn worst_halves(bytes: &[f64]) -> f64 {
    let mut worst: f64 = 0.0;
    let mut width = bytes.len();
    while width >= 2 {
        for node in bytes.chunks(width) {
            let (a, b): (f64, f64) = (node[..width / 2].iter().sum(), node[width / 2..].iter().sum());
            worst = worst.max((a - b).abs() / ((a + b) / 2.0));
        }
        width /= 2;
    }
    worst
}

#[test]
fn counts_are_what_packing_finds() {
    for (s, shards) in [(skewed(3000), 8), (bcc(Bcc { m: 12, jitter: 0.2, warp: true, shuffle: true }), 32)] {
        let c = counted(&s, shards);
        let packed = pack_all(&s.as_ref(), &c.partition, &|| {}).unwrap();
        let from_packing: Vec<ShardCounts> = packed.iter().map(|p| p.counts).collect();
        assert_eq!(c.counts, from_packing);
        let balanced = balance_bytes(&s.as_ref(), c, &vec![1; shards as usize], MAX_ROUNDS, &|_| {}).unwrap();
        let packed = pack_all(&s.as_ref(), &balanced.partition, &|| {}).unwrap();
        assert_eq!(balanced.counts, packed.iter().map(|p| p.counts).collect::<Vec<_>>());
    }
}

#[test]
fn byte_balanced_halves_hold_equal_bytes() {
    let s = skewed(4000);
    for shards in [2, 8] {
        let cells = counted(&s, shards);
        // Equal cell counts: the dense half is much heavier than the sparse one.
        assert!(worst_halves(&bytes(&cells.counts)) > 0.5, "{:?}", bytes(&cells.counts));
        let balanced = balance_bytes(&s.as_ref(), cells, &vec![1; shards as usize], MAX_ROUNDS, &|_| {}).unwrap();
        let b = bytes(&balanced.counts);
        assert!(worst_halves(&b) <= BALANCE_TOLERANCE, "{shards} shards: {b:?}");
        let locals: Vec<u32> = balanced.counts.iter().map(|c| c.local).collect();
        assert!(locals[0] < locals[shards as usize - 1], "the dense end gets fewer cells: {locals:?}");
        // Still a partition: every cell once, in Morton order per shard as packed.
        let mut all: Vec<u32> = balanced.partition.order.clone();
        all.sort_unstable();
        assert!(all.iter().copied().eq(0..4000));
    }
}

#[test]
fn the_paper_cut_is_kept_where_it_fits() {
    let s = skewed(4000);
    let paper = counted(&s, 8);
    let heaviest = paper.max_bytes();
    // Room for the heaviest shard of equal cell counts: that cut, unchanged.
    let kept = cut(&s.as_ref(), 8, None, heaviest, 0, &|_| {}).unwrap();
    assert_eq!(kept.balance, Balance::Cells);
    assert_eq!(kept.cut.partition.order, paper.partition.order);
    // Less room: the balanced cut, which fits.
    let tight = heaviest * 4 / 5;
    let moved = cut(&s.as_ref(), 8, None, tight, 0, &|_| {}).unwrap();
    assert_eq!(moved.balance, Balance::Bytes);
    assert!(moved.cut.max_bytes() <= tight, "{} > {tight}", moved.cut.max_bytes());
    // Asked for, each balance is used whatever the room.
    assert_eq!(cut(&s.as_ref(), 8, Some(Balance::Cells), tight, 0, &|_| {}).unwrap().balance, Balance::Cells);
    let bytes = cut(&s.as_ref(), 8, Some(Balance::Bytes), u64::MAX, 0, &|_| {}).unwrap();
    assert_eq!(bytes.balance, Balance::Bytes);
    assert!(bytes.cut.max_bytes() < heaviest);
    // No room for any cut: the paper's, left for the caller to reject.
    let none = cut(&s.as_ref(), 8, None, 1000, 0, &|_| {}).unwrap();
    assert!(none.cut.max_bytes() > 1000);
}

#[test]
fn byte_balanced_cut_is_deterministic() {
    let s = skewed(3000);
    let a = balance_bytes(&s.as_ref(), counted(&s, 16), &[1; 16], MAX_ROUNDS, &|_| {}).unwrap();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let b = pool.install(|| balance_bytes(&s.as_ref(), counted(&s, 16), &[1; 16], MAX_ROUNDS, &|_| {}).unwrap());
    assert_eq!(a.partition.order, b.partition.order);
    assert_eq!(a.counts, b.counts);
}

#[test]
fn split_leaves_take_ids_with_one_more_bit() {
    let s = skewed(4000);
    let mut per_leaf = vec![1u8; 8];
    (per_leaf[0], per_leaf[5]) = (2, 2);
    let cut = balance_bytes(&s.as_ref(), counted(&s, 8), &per_leaf, MAX_ROUNDS, &|_| {}).unwrap();
    let part = &cut.partition;
    assert_eq!((part.shards(), part.depth, part.id_bits), (10, 3, 4));
    assert_eq!(part.ids, [0, 1, 2, 4, 6, 8, 10, 11, 12, 14]);
    assert_eq!(part.shards_per_leaf(), per_leaf);
    assert!(worst_halves(&bytes(&cut.counts[..2])) <= BALANCE_TOLERANCE, "{:?}", bytes(&cut.counts));
    // Blobs name shards by their ids, and every halo record leads to its cell.
    let packed = pack_all(&s.as_ref(), part, &|| {}).unwrap();
    assert_eq!(cut.counts, packed.iter().map(|p| p.counts).collect::<Vec<_>>());
    for (i, p) in packed.iter().enumerate() {
        let u = partition::unpack_shard(&p.blob).unwrap();
        assert_eq!((u.header.shard_id, u.header.depth), (part.ids[i], 4));
        for h in &u.halo {
            let owner = part.ids.iter().position(|&id| id == h.shard).expect("a halo record names a shard's id");
            let g = part.cells(owner)[h.cell as usize];
            assert_eq!(s.positions[g as usize], [h.x, h.y, h.z]);
        }
    }
}

#[test]
fn leaves_split_where_balanced_shards_do_not_fit() {
    let s = skewed(4000);
    let balanced = cut(&s.as_ref(), 8, Some(Balance::Bytes), u64::MAX, 0, &|_| {}).unwrap();
    let budget = balanced.cut.max_bytes() * 3 / 4;
    // No free tiles: the balanced cut, over budget, for the caller to reject.
    let stuck = cut(&s.as_ref(), 8, None, budget, 0, &|_| {}).unwrap();
    assert_eq!(stuck.cut.partition.shards(), 8);
    assert!(stuck.cut.max_bytes() > budget);
    // Free tiles for up to 8 splits: as many as it takes, the heaviest leaves first.
    let split = cut(&s.as_ref(), 8, None, budget, 8, &|_| {}).unwrap();
    let shards = split.cut.partition.shards();
    assert!((9..=16).contains(&shards), "{shards} shards");
    assert!(split.cut.max_bytes() <= budget, "{} > {budget}", split.cut.max_bytes());
    assert_eq!(split.cut.partition.id_bits, 4);
}

/// A lattice whose cells near one corner carry all the load, as cells near a camera
/// do: cut by load, the shards there hold fewer cells than the byte cut gave them,
/// the others more, every cell is in one shard, no shard is over the budget, the
/// counts are the packer's, and the cut does not depend on the threads.
#[test]
fn a_cut_by_load_shrinks_the_loaded_shards_within_the_budget() {
    let s = bcc(Bcc { m: 14, jitter: 0.2, warp: false, shuffle: true });
    let scene = s.as_ref();
    let shards = 32u64;
    let start = counted(&s, shards);
    let mean = start.counts.iter().map(|c| c.bytes as f64).sum::<f64>() / shards as f64;
    let budget = (1.6 * mean) as u64;
    let load: Vec<f32> = s.positions.iter().map(|p| if p.iter().all(|&x| x < 4.0) { 50.0 } else { 0.0 }).collect();
    let loaded = |c: &Counted, k: usize| c.partition.cells(k).iter().any(|&g| load[g as usize] > 0.0);
    let cut = balance_load(&scene, &start, &load, (1.4 * mean, budget), 4).unwrap();
    assert!(cut.max_bytes() <= budget, "{} over {budget}", cut.max_bytes());
    let mut all = cut.partition.order.clone();
    all.sort_unstable();
    assert!(all.iter().copied().eq(0..s.len() as u32), "every cell once");
    let cells = |c: &Counted, hot: bool| -> Vec<u32> {
        (0..shards as usize).filter(|&k| loaded(c, k) == hot).map(|k| c.counts[k].local).collect()
    };
    let mean_of = |v: &[u32]| v.iter().map(|&x| x as f64).sum::<f64>() / v.len().max(1) as f64;
    let (hot_before, hot_after) = (mean_of(&cells(&start, true)), mean_of(&cells(&cut, true)));
    let (cold_before, cold_after) = (mean_of(&cells(&start, false)), mean_of(&cells(&cut, false)));
    assert!(hot_after < 0.6 * hot_before, "loaded shards shrink: {hot_before:.0} → {hot_after:.0} cells");
    assert!(cold_after > cold_before, "the others take the rest: {cold_before:.0} → {cold_after:.0} cells");
    assert!(cells(&cut, true).len() > cells(&start, true).len(), "more shards share the load");
    let packed = pack_all(&scene, &cut.partition, &|| {}).unwrap();
    assert_eq!(cut.counts, packed.iter().map(|p| p.counts).collect::<Vec<_>>());
    let again = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap()
        .install(|| balance_load(&scene, &start, &load, (1.4 * mean, budget), 4).unwrap());
    assert_eq!(again.partition.order, cut.partition.order, "the same cut on one thread");
}

/// With no load, or no room beyond the bytes the shards have, the cut by load is a
/// cut by bytes: nothing to balance, nowhere to put it.
#[test]
fn a_cut_by_load_without_load_balances_bytes() {
    let s = bcc(Bcc { m: 10, jitter: 0.2, warp: true, shuffle: false });
    let start = counted(&s, 16);
    let mean = start.counts.iter().map(|c| c.bytes as f64).sum::<f64>() / 16.0;
    let cut = balance_load(&s.as_ref(), &start, &vec![0.0; s.len()], (mean, u64::MAX), 2).unwrap();
    let b = bytes(&cut.counts);
    assert!(b.iter().all(|&x| x <= 1.3 * mean && x >= 0.7 * mean), "{b:?}");
}
