//! Host runtime benchmark: per-vertex Execute overhead (many trivial vertices) and Copy
//! throughput (1472 tiles x 50 KB), on a full Mk2 IPU target.
//!
//!     cargo run --release -p poplar-bridge --example runtime_bench
//!
//! Threads: FOAM_THREADS (default: all cores).
use poplar_bridge::{ElemType, Session, codelets_gp};
use std::time::Instant;

const TILES: u32 = 1472;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn time_runs(s: &mut Session, prog: u32, runs: usize) -> Vec<f64> {
    s.run(prog).unwrap(); // warm-up
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            s.run(prog).unwrap();
            t.elapsed().as_secs_f64()
        })
        .collect()
}

fn vertex_overhead(per_tile: usize, repeats: u32) {
    let mut s = Session::new(1, TILES).unwrap();
    s.add_codelets(&codelets_gp()).unwrap();
    let cs = s.add_compute_set("increment").unwrap();
    for t in 0..TILES {
        let x = s.add_variable(ElemType::UnsignedInt, &[per_tile], &format!("x{t}")).unwrap();
        s.set_tile_mapping(x, t).unwrap();
        for i in 0..per_tile {
            let v = s.add_vertex(cs, "TestIncrement", t).unwrap();
            let e = s.slice(x, i, i + 1, 0).unwrap();
            s.connect(v, "x", e).unwrap();
        }
    }
    let exec = s.execute(cs).unwrap();
    let rep = s.repeat(repeats, exec).unwrap();
    s.compile(&[rep]).unwrap();
    let t = median(time_runs(&mut s, 0, 5));
    let runs = s.counters().unwrap().vertex_runs / 6; // 6 timed runs incl. warm-up
    println!(
        "execute: {} vertices x {repeats} steps: {:.1} ms per run, {:.3} us per vertex, {:.1} us per step",
        runs / repeats as u64,
        t * 1e3,
        t * 1e6 / runs as f64,
        t * 1e6 / repeats as f64
    );
}

fn copy_throughput(bytes_per_tile: usize, in_place: bool) {
    let mut s = Session::new(1, TILES).unwrap();
    let mut a = Vec::new();
    let mut b = Vec::new();
    for t in 0..TILES {
        let x = s.add_variable(ElemType::UnsignedChar, &[bytes_per_tile], &format!("a{t}")).unwrap();
        s.set_tile_mapping(x, t).unwrap();
        a.push(x);
        let y = s.add_variable(ElemType::UnsignedChar, &[bytes_per_tile], &format!("b{t}")).unwrap();
        s.set_tile_mapping(y, t).unwrap();
        b.push(y);
    }
    // Every tile sends its buffer to the next tile in one merged exchange.
    let src = s.concat(&a, 0).unwrap();
    let mut rot = if in_place { a.clone() } else { b.clone() };
    rot.rotate_left(1);
    let dst = s.concat(&rot, 0).unwrap();
    let copy = s.copy(src, dst).unwrap();
    s.compile(&[copy]).unwrap();
    let t = median(time_runs(&mut s, 0, 15));
    let bytes = s.counters().unwrap().bytes_exchanged / 16;
    println!(
        "copy{}: {TILES} tiles x {} B = {:.1} MB: {:.2} ms, {:.2} GB/s",
        if in_place { " (rotation in place, staged)" } else { "" },
        bytes_per_tile,
        bytes as f64 / 1e6,
        t * 1e3,
        bytes as f64 / t / 1e9
    );
}

fn main() {
    println!(
        "threads: {}",
        std::env::var("FOAM_THREADS")
            .unwrap_or_else(|_| format!("{} (all cores)", std::thread::available_parallelism().map_or(1, |n| n.get())))
    );
    vertex_overhead(16, 20);
    copy_throughput(50 * 1024, false);
    copy_throughput(50 * 1024, true);
}
