//! The code only the Poplar SDK compiles, compiled here on every test run: every
//! codelet with popc's macro sets against the stand-in SDK headers
//! (sdk-standin/README.md), the bridge's FOAM_POPLAR_SDK paths against the runtime's
//! Poplar headers, and the stacks the codelets declare to popc against what the
//! runtime measures and counts.
use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cpp_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    v.sort();
    v
}

fn compiler() -> String {
    std::env::var("CXX").unwrap_or_else(|_| "g++".into())
}

/// Compiles `file` for syntax only with `args`; the compiler's output on failure.
fn syntax_check(file: &Path, args: &[String]) -> Result<(), String> {
    let out = Command::new(compiler())
        .args(["-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror"])
        .args(args)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", compiler()));
    if out.status.success() { Ok(()) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
}

fn root() -> PathBuf {
    crate_dir().parent().unwrap().to_path_buf()
}

fn codelets() -> Vec<PathBuf> {
    let mut all = cpp_files(&root().join("codelets/vertices"));
    all.extend(cpp_files(&crate_dir().join("runtime/tests/codelets")));
    all
}

/// popc defines __POPC__ for every target and __IPU__ only for IPU targets: a
/// codelet must compile both ways without the host runtime's headers.
#[test]
fn every_codelet_compiles_with_popc_macro_sets() {
    let include = |p: PathBuf| format!("-I{}", p.display());
    let base = vec![include(crate_dir().join("sdk-standin/include")), include(root().join("codelets/include"))];
    let mut failures = Vec::new();
    for file in codelets() {
        for (target, extra) in [
            ("an IPU target (-D__POPC__ -D__IPU__)", &["-D__POPC__", "-D__IPU__"][..]),
            ("--target=cpu (-D__POPC__)", &["-D__POPC__"][..]),
        ] {
            let mut args = base.clone();
            args.extend(extra.iter().map(|s| s.to_string()));
            if let Err(e) = syntax_check(&file, &args) {
                failures.push(format!("{} for {target}:\n{e}", file.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(codelets().len() >= 6);
}

/// The bridge and the graph builder as a build with the `poplar` feature compiles
/// them (FOAM_POPLAR_SDK), with the runtime's Poplar headers standing in for the SDK's.
#[test]
fn bridge_sdk_paths_compile() {
    let root = root();
    let out = PathBuf::from(env!("OUT_DIR"));
    let args: Vec<String> = vec![
        "-DFOAM_POPLAR_SDK".into(),
        "-DFOAM_CODELETS_GP=\"foam_codelets.gp\"".into(),
        "-DFOAM_POPC_TARGETS=\"ipu2,cpu\"".into(),
        format!("-I{}", crate_dir().join("runtime/include").display()),
        format!("-I{}", root.join("codelets/include").display()),
        format!("-I{}", root.display()),
        format!("-I{}", out.join("cxxbridge/include").display()),
        format!("-I{}", out.join("cxxbridge/crate").display()),
    ];
    let mut files = cpp_files(&crate_dir().join("bridge"));
    files.extend(cpp_files(&root.join("codelets/graph")));
    assert!(files.len() >= 3);
    let failures: Vec<String> =
        files.iter().filter_map(|f| syntax_check(f, &args).err().map(|e| format!("{}:\n{e}", f.display()))).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Each project vertex declares a stack to popc (foam/stacks.h) at least as deep as
/// the one the runtime counts for it, and not stale by more than 256 bytes.
#[test]
fn declared_stacks_cover_the_measured_ones() {
    let header = std::fs::read_to_string(root().join("codelets/include/foam/stacks.h")).unwrap();
    let declared: Vec<(String, u64)> = header
        .lines()
        .filter_map(|l| l.strip_prefix("#define FOAM_STACK_"))
        .map(|l| {
            let (name, bytes) = l.split_once(' ').unwrap();
            (name.to_string(), bytes.trim().parse().unwrap())
        })
        .collect();
    let costs = poplar_bridge::vertex_costs();
    let project: Vec<_> = costs.iter().filter(|c| !c.name.starts_with("Test")).collect();
    assert!(project.len() >= 11, "{costs:?}");
    for c in &project {
        assert!(c.measured, "{} was not measured by the build", c.name);
        let d = declared.iter().find(|d| d.0 == c.name).map(|d| d.1);
        let d = d.unwrap_or_else(|| panic!("{} declares no stack in foam/stacks.h", c.name));
        assert!(
            c.stack_bytes <= d && d <= c.stack_bytes + 256,
            "{}: foam/stacks.h declares {d} B but the runtime counts {} B per worker; set it to {} \
             (the measure rounded up to 64)",
            c.name,
            c.stack_bytes,
            c.stack_bytes.div_ceil(64) * 64
        );
    }
    assert_eq!(declared.len(), project.len(), "foam/stacks.h declares a vertex type that does not exist");
}
