//! `foam-ipu synth`: bad arguments, determinism across runs and thread counts.

mod common;

use std::process::Command;

fn synth_bytes(args: &[&str], threads: Option<&str>) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.ply");
    let mut cmd: Command = common::foam_ipu();
    cmd.args(["synth", "-o", out.to_str().unwrap()]).args(args);
    if let Some(t) = threads {
        cmd.env("RAYON_NUM_THREADS", t);
    }
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Progress goes to a terminal only; captured stderr stays empty.
    assert!(o.stderr.is_empty(), "unexpected stderr: {}", String::from_utf8_lossy(&o.stderr));
    std::fs::read(out).unwrap()
}

#[test]
fn same_seed_same_bytes_any_thread_count() {
    let args = ["--cells", "4000", "--seed", "9", "--sh-degree", "2"];
    let a = synth_bytes(&args, Some("1"));
    let b = synth_bytes(&args, Some("2"));
    let c = synth_bytes(&args, None);
    assert!(a == b && b == c, "synth output depends on the thread count or the run");
    let other = synth_bytes(&["--cells", "4000", "--seed", "10", "--sh-degree", "2"], None);
    assert!(other != a, "the seed has no effect");
    let text = String::from_utf8_lossy(&a[..2000]);
    assert!(text.contains("element vertex 4000\n") && text.contains("property float color_sh_23\n"));
}

#[test]
fn room_preset_runs() {
    let bytes = synth_bytes(&["--cells", "2000", "--preset", "room"], None);
    assert!(String::from_utf8_lossy(&bytes[..300]).contains("element vertex 2000\n"));
}

#[test]
fn bad_arguments_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.ply");
    let o = out.to_str().unwrap();
    let e = common::expect_error(&["synth", "-o", o, "--cells", "10"]);
    assert!(e.contains("--cells 10 is below the minimum"), "{e}");
    let e = common::expect_error(&["synth", "-o", o, "--cells", "1000000000000"]);
    assert!(e.contains("above the maximum"), "{e}");
    let e = common::expect_error(&["synth", "-o", o, "--cells", "5000", "--preset", "moon"]);
    assert!(e.contains("unknown preset \"moon\"") && e.contains("garden"), "{e}");
    let e = common::expect_error(&["synth", "-o", o, "--cells", "5000", "--sh-degree", "4"]);
    assert!(e.contains("--sh-degree 4"), "{e}");
    let e = common::expect_error(&["synth", "-o", "/nonexistent-dir/x.ply", "--cells", "5000"]);
    assert!(e.contains("cannot write /nonexistent-dir/x.ply"), "{e}");
    assert!(!out.exists(), "a failed argument check must not leave a file");
}
