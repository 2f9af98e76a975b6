//! Bad input to the library: one error naming the problem, never a panic.

use partition::fixtures::{Bcc, OwnedScene, bcc};
use partition::{Method, PartitionError, pack_all, partition, unpack_shard};

type Corrupt<T> = Box<dyn Fn(&mut T)>;

fn small() -> OwnedScene {
    bcc(Bcc { m: 4, jitter: 0.1, warp: false, shuffle: false }) // 128 cells
}

#[test]
fn shard_counts_must_be_powers_of_two_in_range() {
    let s = small();
    for bad in [0, 1, 3, 6, 1000, 131_072, u64::MAX] {
        let e = partition(&s.as_ref(), bad, Method::Kdtree).unwrap_err();
        assert_eq!(e, PartitionError::BadShardCount(bad));
        assert!(e.to_string().contains("not a power of two between 2 and 65,536"), "{e}");
    }
    assert!(partition(&s.as_ref(), 2, Method::Kdtree).is_ok());
    assert!(partition(&s.as_ref(), 128, Method::Kdtree).is_ok());
}

#[test]
fn more_shards_than_cells() {
    let e = partition(&small().as_ref(), 256, Method::Kdtree).unwrap_err();
    assert_eq!(e.to_string(), "256 shards for 128 cells: every shard needs at least one cell");
}

#[test]
fn too_many_local_cells() {
    // A chain of 140,000 cells: 70,000 per shard.
    let n = 140_000u32;
    let lists: Vec<Vec<u32>> = (0..n).map(|i| if i + 1 < n { vec![i + 1] } else { vec![] }).collect();
    let s = OwnedScene::from_lists((0..n).map(|i| [i as f32, 0.0, 0.0]).collect(), &lists);
    let e = partition(&s.as_ref(), 2, Method::Kdtree).unwrap_err();
    assert_eq!(e.to_string(), "shard 0 holds 70000 local cells, over the 65,535 that 16-bit indices address");
}

#[test]
fn too_many_local_plus_halo_cells() {
    // Every cell neighbours its mirror image across the split: 40,000 local + 40,000 halo.
    let n = 80_000u32;
    let lists: Vec<Vec<u32>> = (0..n).map(|i| vec![n - 1 - i]).collect();
    let s = OwnedScene::from_lists((0..n).map(|i| [i as f32, 0.0, 0.0]).collect(), &lists);
    let part = partition(&s.as_ref(), 2, Method::Kdtree).unwrap();
    let e = pack_all(&s.as_ref(), &part, &|| {}).unwrap_err();
    assert_eq!(
        e.to_string(),
        "shard 0 holds 40000 local + 40000 halo = 80000 cells, over the 65,535 that 16-bit indices address"
    );
}

#[test]
fn malformed_scenes() {
    let base = small();
    let cases: Vec<(Corrupt<OwnedScene>, &str)> = vec![
        (Box::new(|s| s.adjacency[0] = 128), "scene: cell 0 lists neighbour 128 but the scene has 128 cells"),
        (Box::new(|s| s.density.pop().map(|_| ()).unwrap()), "scene: density has 127 entries for 128 cells"),
        (Box::new(|s| s.positions[3][1] = f32::NAN), "scene: cell 3 has a non-finite position"),
        (Box::new(|s| s.adjacency_end[10] = 0), "scene: adjacency_end decreases at cell 10"),
        (
            Box::new(|s| {
                s.adjacency.pop();
            }),
            "scene: adjacency_end ends at",
        ),
    ];
    for (corrupt, msg) in cases {
        let mut s = base.clone();
        corrupt(&mut s);
        let e = partition(&s.as_ref(), 4, Method::Kdtree).unwrap_err().to_string();
        assert!(e.starts_with(msg), "{e} vs {msg}");
    }
}

#[test]
fn corrupted_blobs() {
    let s = small();
    let part = partition(&s.as_ref(), 4, Method::Kdtree).unwrap();
    let blob = pack_all(&s.as_ref(), &part, &|| {}).unwrap().swap_remove(1).blob;
    assert!(unpack_shard(&blob).is_ok());
    let cases: Vec<(Corrupt<Vec<u8>>, &str)> = vec![
        (Box::new(|b| b.truncate(20)), "shard blob 1: 20 bytes, shorter than the 40-byte header"),
        (Box::new(|b| b[0] = b'X'), "shard blob 1: magic"),
        (Box::new(|b| b.truncate(b.len() - 4)), "shard blob 1: blob length is"),
        (Box::new(|b| b[8] ^= 1), "shard blob 1: halo_offset is"),
        (
            Box::new(|b| {
                let n = b.len();
                b[n - 2] = 0xff;
                b[n - 1] = 0xff;
            }),
            "shard blob 1: adjacency entry",
        ),
    ];
    for (corrupt, msg) in cases {
        let mut b = blob.clone();
        corrupt(&mut b);
        let e = unpack_shard(&b).unwrap_err().to_string();
        assert!(e.starts_with(msg), "{e} vs {msg}");
    }
}
