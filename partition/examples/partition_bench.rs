//! Benchmark: partition and pack a Bicycle-sized scene (4.2 M cells, 14 neighbours per
//! interior cell) into 1024 shards, and report time and memory.
//!
//!   cargo run --release -p partition --example partition_bench [-- M [SHARDS]]
//!
//! The scene is a jittered, warped, shuffled BCC lattice of 2·M³ cells (default M = 128:
//! 4,194,304 cells) built in memory. Peak memory is read from /proc: the high-water mark
//! is reset after the scene is built, so "peak" is the scene plus everything the
//! partitioner allocates.

use std::time::Instant;

use partition::fixtures::{Bcc, bcc};
use partition::{Balance, MK2_TILE_BYTES, Method, PartitionReport, TracerFootprint, pack_all, partition};

fn status_kib(key: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let m: u32 = args.next().map(|a| a.parse().expect("M is a number")).unwrap_or(128);
    let shards: u64 = args.next().map(|a| a.parse().expect("SHARDS is a number")).unwrap_or(1024);

    let t = Instant::now();
    let scene = bcc(Bcc { m, jitter: 0.2, warp: true, shuffle: true });
    let scene_mb = scene.heap_bytes() as f64 / 1e6;
    println!(
        "scene: {} cells, {} adjacency entries, {scene_mb:.1} MB in memory (built in {:.2} s)",
        scene.len(),
        scene.adjacency.len(),
        t.elapsed().as_secs_f64()
    );
    // Reset VmHWM to the current RSS (Linux: clear_refs 5).
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let base_mb = status_kib("VmRSS:").unwrap_or(0) as f64 / 1024.0 * 1.048576;

    let r = scene.as_ref();
    let t = Instant::now();
    let part = partition(&r, shards, Method::Kdtree).expect("partition");
    let t_part = t.elapsed().as_secs_f64();
    let packed = pack_all(&r, &part, &|| {}).expect("pack");
    let t_total = t.elapsed().as_secs_f64();
    let peak_mb = status_kib("VmHWM:").unwrap_or(0) as f64 / 1024.0 * 1.048576;

    let counts: Vec<_> = packed.iter().map(|p| p.counts).collect();
    // The shard blobs alone: what else a tracer tile holds is the host tool's plan.
    let blobs_only = TracerFootprint { budget: MK2_TILE_BYTES, ..TracerFootprint::default() };
    let report = PartitionReport::new(&part, Balance::Cells, &counts, &blobs_only);
    let blob_mb = packed.iter().map(|p| p.blob.len()).sum::<usize>() as f64 / 1e6;
    println!("partition {t_part:.2} s, partition + pack {t_total:.2} s on {} threads", rayon::current_num_threads());
    println!(
        "memory: RSS before {base_mb:.1} MB, peak {peak_mb:.1} MB = {:.2}x the scene{}; blobs {blob_mb:.1} MB",
        peak_mb / scene_mb,
        if reset { "" } else { " (VmHWM not reset: includes scene construction)" }
    );
    println!(
        "shards: local {:.0}/{:.0}/{:.0}, halo {:.0}/{:.0}/{:.0}, adjacency {:.0}/{:.0}/{:.0} (min/mean/max); largest blob: shard {} at {} B of a {} B tile ({})",
        report.local.min,
        report.local.mean,
        report.local.max,
        report.halo.min,
        report.halo.mean,
        report.halo.max,
        report.adjacency.min,
        report.adjacency.mean,
        report.adjacency.max,
        report.worst_shard,
        report.max_bytes,
        report.budget_bytes,
        if report.fits { "fits alone" } else { "over budget alone" }
    );
}
