//! scene.ply write/read throughput from the page cache.
//!
//! `cargo run --release --example ply_io_bench -- [--cells 1000000] [--sh-degree 3] [--runs 5] [--keep OUT.ply]`
//!
//! Builds a random valid scene (symmetric adjacency, ~15 neighbours per site), writes it
//! to a temp file and reads it back; the file is read once untimed to warm the page
//! cache. Prints the median over the runs of: write, parse only (header check and
//! decode), and read_scene (parse plus full validation). `--keep` leaves the file at
//! OUT.ply, e.g. to time `foam-ipu info` on it.

use std::time::Instant;

use foam_ipu::scene::ply_read::parse_scene;
use foam_ipu::scene::ply_write::write_ply_file;
use foam_ipu::scene::random::random_scene;
use foam_ipu::scene::read_scene;
use foam_ipu::scene::validate::validate;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|p| args.get(p + 1))
        .map(|v| v.parse().unwrap_or_else(|_| panic!("{name} needs a number, got {v}")))
        .unwrap_or(default)
}

/// CPU seconds (user + system) of the whole process so far, from /proc/self/stat: on a
/// shared machine it shows the work done when wall time is inflated by other load.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

/// Runs `f`, pushing its wall and CPU seconds.
fn timed<T>(wall: &mut Vec<f64>, cpu: &mut Vec<f64>, f: impl FnOnce() -> T) -> T {
    let (t, c) = (Instant::now(), cpu_seconds());
    let out = f();
    wall.push(t.elapsed().as_secs_f64());
    cpu.push(cpu_seconds() - c);
    out
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let cells = arg("--cells", 1_000_000);
    let degree = arg("--sh-degree", 3) as u8;
    let runs = arg("--runs", 5).max(1);

    let t = Instant::now();
    let scene = random_scene(cells, degree, 42);
    println!(
        "scene: {cells} cells, SH degree {degree}, {} adjacency entries ({:.2}/site), built in {:.2} s",
        scene.adjacency.len(),
        scene.adjacency.len() as f64 / cells as f64,
        t.elapsed().as_secs_f64()
    );
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("bench.ply");

    let mut wall = vec![vec![]; 4];
    let mut cpu = vec![vec![]; 4];
    for run in 0..runs {
        timed(&mut wall[0], &mut cpu[0], || write_ply_file(&scene, &path))?;
        if run == 0 {
            std::fs::read(&path)?; // warm the page cache
        }
        let len = std::fs::metadata(&path)?.len();
        let (parsed, _) = timed(&mut wall[1], &mut cpu[1], || parse_scene(std::fs::File::open(&path)?, Some(len)))?;
        timed(&mut wall[2], &mut cpu[2], || validate(&parsed))?;
        drop(parsed);
        let back = timed(&mut wall[3], &mut cpu[3], || read_scene(&path))?;
        anyhow::ensure!(back == scene, "read-back scene differs from the written one");
    }
    let mb = std::fs::metadata(&path)?.len() as f64 / 1e6;
    let args: Vec<String> = std::env::args().collect();
    if let Some(keep) = args.iter().position(|a| a == "--keep").and_then(|p| args.get(p + 1)) {
        std::fs::copy(&path, keep)?;
    }
    println!("file: {mb:.1} MB; median of {runs} runs (wall time; CPU time of all threads):");
    let names = ["write", "parse (no validation)", "validate only", "read_scene (parse + validate)"];
    for ((what, w), c) in names.iter().zip(wall).zip(cpu) {
        let s = median(w);
        println!("  {what:<30} {s:>7.3} s  {:>6.2} GB/s   cpu {:>6.2} s", mb / 1e3 / s, median(c));
    }
    Ok(())
}
