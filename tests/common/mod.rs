//! Helpers shared by the end-to-end tests. Each test binary includes this with
//! `mod common;`, so not every helper is used by every binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use foam_ipu::camera::Camera;
use foam_ipu::scene::Scene;

/// The built `foam-ipu` binary.
pub fn foam_ipu() -> Command {
    Command::new(env!("CARGO_BIN_EXE_foam-ipu"))
}

/// Runs `foam-ipu ARGS` and returns its output (does not check the status).
pub fn run(args: &[&str]) -> Output {
    foam_ipu().args(args).output().expect("foam-ipu runs")
}

/// Asserts a failed run with a one-line error on stderr and no panic; returns stderr.
pub fn expect_error(args: &[&str]) -> String {
    let out = run(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "expected failure for {args:?}, stderr: {err}");
    assert!(!err.contains("panicked"), "panic for {args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "error should be one line for {args:?}: {err}");
    assert!(!err.trim_end().chars().any(char::is_control), "raw control character in the error for {args:?}: {err:?}");
    let parts: Vec<&str> = err.trim_end().split(": ").collect();
    assert!(parts.windows(2).all(|w| !w[0].ends_with(w[1])), "doubled text in the error for {args:?}: {err}");
    err
}

/// The Python interpreter with the oracle packages (plyfile, numpy, scipy, scikit-image).
/// `scripts/test` sets FOAM_PYTHON; without it the repo's `.venv` is used. Never skips:
/// a missing oracle is a failed test, so CI cannot pass without running the comparison.
pub fn python() -> Command {
    let py = std::env::var_os("FOAM_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python"));
    assert!(py.exists(), "no Python oracle at {}: run scripts/test (it creates .venv)", py.display());
    Command::new(py)
}

pub fn repo_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The shipped scene and its camera, read once per test binary.
pub fn garden() -> &'static (Scene, Camera) {
    static G: OnceLock<(Scene, Camera)> = OnceLock::new();
    G.get_or_init(|| {
        let scene = foam_ipu::scene::read_scene(&repo_path("assets/garden.ply")).unwrap();
        let cam = foam_ipu::camera::json::read_camera_json(&repo_path("assets/garden.camera.json")).unwrap();
        (scene, cam)
    })
}

/// The shipped scene and its camera as command-line arguments.
pub fn garden_arg() -> String {
    repo_path("assets/garden.ply").display().to_string()
}

pub fn garden_camera_arg() -> String {
    repo_path("assets/garden.camera.json").display().to_string()
}

/// A path as an argument.
pub fn arg(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// `base` with every buffer a few rays wide and the in-flight cap one link buffer
/// (the spill store's 8), so that back-pressure reaches every tile: a frame must
/// still lose no ray and give the image roomy buffers give.
pub fn tight_buffers(base: foam_ipu::device::DeviceOptions) -> foam_ipu::device::DeviceOptions {
    foam_ipu::device::DeviceOptions {
        link_capacity: vec![2],
        side_capacity: 2,
        tracer_queue: 3,
        router_queue: Some(4),
        spill: Some(8),
        inject_capacity: Some(2),
        direct_capacity: Some(1),
        ..base
    }
}

/// A tracer's march budget spending in 1/256 of a 15-face step (march.h
/// foam_budget_q8), in 64 bits: a worker's shard visits, cell steps, faces tested and
/// rays marched on.
pub fn budget_spent_q8(visits: u64, steps: u64, faces: u64, rays: u64) -> u64 {
    use foam_layout::{FOAM_BUDGET_RAY_Q8, FOAM_BUDGET_VISIT_Q8};
    spent_q8(FOAM_BUDGET_VISIT_Q8, FOAM_BUDGET_RAY_Q8, visits, steps, faces, rays)
}

/// [`budget_spent_q8`] of an injector's worker, whose visits and rays weigh what they
/// cost it (layout.h FOAM_BUDGET_INJECTOR_*).
pub fn injector_budget_spent_q8(visits: u64, steps: u64, faces: u64, rays: u64) -> u64 {
    use foam_layout::{FOAM_BUDGET_INJECTOR_RAY_Q8, FOAM_BUDGET_INJECTOR_VISIT_Q8};
    spent_q8(FOAM_BUDGET_INJECTOR_VISIT_Q8, FOAM_BUDGET_INJECTOR_RAY_Q8, visits, steps, faces, rays)
}

fn spent_q8(visit_q8: u32, ray_q8: u32, visits: u64, steps: u64, faces: u64, rays: u64) -> u64 {
    use foam_layout::{FOAM_BUDGET_FACE_Q8, FOAM_BUDGET_STEP_Q8};
    visits * visit_q8 as u64
        + steps * FOAM_BUDGET_STEP_Q8 as u64
        + faces * FOAM_BUDGET_FACE_Q8 as u64
        + rays * ray_q8 as u64
}
