//! Builds the C++ side: the cxx bridge (bridge/), the device program's graph builder
//! and its bridge entry (codelets/graph/) and either the host runtime (runtime/) with
//! host-compiled vertices (codelets/vertices/) or, with feature `poplar`, links the
//! Poplar SDK and compiles the vertices with popc.
use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "build/codelet_costs.rs"]
mod codelet_costs;

fn cpp_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "cpp")).collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn main() {
    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = crate_dir.parent().unwrap().to_path_buf();
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let codelets_dir = root.join("codelets");
    let vertices_dir = codelets_dir.join("vertices");
    let runtime_dir = crate_dir.join("runtime");
    let test_codelets_dir = runtime_dir.join("tests/codelets");
    let sdk = env::var_os("CARGO_FEATURE_POPLAR").is_some();
    let selftest = env::var_os("CARGO_FEATURE_SELFTEST").is_some();

    for p in ["build.rs", "build", "src", "bridge", "runtime"] {
        println!("cargo:rerun-if-changed={}", crate_dir.join(p).display());
    }
    for p in ["include", "vertices", "graph"] {
        println!("cargo:rerun-if-changed={}", codelets_dir.join(p).display());
    }
    println!("cargo:rerun-if-env-changed=POPLAR_SDK_ENABLED");

    let mut bridges = vec!["src/lib.rs"];
    if selftest {
        bridges.push("src/selftest.rs");
    }
    let mut b = cxx_build::bridges(bridges);
    configure(&mut b, &codelets_dir);
    // The bridge names the graph builder's entry by its path from the repository root.
    b.include(&root);
    for f in cpp_files(&crate_dir.join("bridge")).into_iter().chain(cpp_files(&codelets_dir.join("graph"))) {
        b.file(f);
    }

    let mut codelets = cpp_files(&vertices_dir);
    if selftest {
        codelets.extend(cpp_files(&test_codelets_dir));
    }

    if sdk {
        let Some(sdk_root) = env::var_os("POPLAR_SDK_ENABLED").map(PathBuf::from) else {
            panic!(
                "feature `poplar` needs the Poplar SDK: source the SDK's enable.sh so that \
                 POPLAR_SDK_ENABLED names its root (no SDK exists on this machine; build without \
                 the feature to use the host runtime)"
            );
        };
        let popc = sdk_root.join("bin/popc");
        if !sdk_root.join("include/poplar/Graph.hpp").exists() || !popc.exists() {
            panic!(
                "POPLAR_SDK_ENABLED={} does not look like a Poplar SDK (no include/poplar/Graph.hpp or bin/popc)",
                sdk_root.display()
            );
        }
        let gp = out.join("foam_codelets.gp");
        let mut cmd = Command::new(&popc);
        // Code for Mk2 hardware and for the IPU Model (which runs codelets compiled
        // for the host, target "cpu"): the session builds the graph for whichever
        // device it attaches.
        cmd.args(["-O3", &format!("--target={POPC_TARGETS}"), "-I"]).arg(codelets_dir.join("include"));
        cmd.args(&codelets).arg("-o").arg(&gp);
        let st = cmd.status().unwrap_or_else(|e| panic!("cannot run {}: {e}", popc.display()));
        if !st.success() {
            panic!("popc failed ({st}) compiling {} codelet sources", codelets.len());
        }
        b.include(sdk_root.join("include"))
            .define("FOAM_POPLAR_SDK", None)
            .define("FOAM_POPC_TARGETS", format!("\"{POPC_TARGETS}\"").as_str())
            .define("FOAM_CODELETS_GP", format!("\"{}\"", gp.display()).as_str());
        println!("cargo:rustc-link-search=native={}", sdk_root.join("lib").display());
        println!("cargo:rustc-link-lib=poplar");
        println!("cargo:rustc-env=FOAM_CODELETS_GP={}", gp.display());
    } else {
        b.include(runtime_dir.join("include")).define("FOAM_CODELETS_GP", "\"foam_codelets.gp\"");
        println!("cargo:rustc-env=FOAM_CODELETS_GP=foam_codelets.gp");
        for f in cpp_files(&runtime_dir.join("src")) {
            b.file(f);
        }
        if selftest {
            for f in cpp_files(&runtime_dir.join("tests/cpp")) {
                b.file(f);
            }
        }
        // Each codelet is compiled through a wrapper that adds a link anchor; the
        // generated manifest references every anchor, so the linker keeps every
        // codelet's FOAM_HOST_VERTEX registration, lists the sources for addCodelets,
        // and gives the stack and code each vertex type measured.
        let units = out.join("codelet_units");
        fs::create_dir_all(&units).unwrap();
        let mut cb = cc::Build::new();
        configure(&mut cb, &codelets_dir);
        cb.cpp(true).include(runtime_dir.join("include"));
        for f in codelet_costs::FLAGS {
            cb.flag(f);
        }
        let mut manifest = String::from("#include <poplar_host/registry.hpp>\n#include <string>\n#include <vector>\n");
        let mut body = String::new();
        let mut seen = std::collections::BTreeSet::new();
        for (i, c) in codelets.iter().enumerate() {
            let base = c.file_name().unwrap().to_string_lossy().into_owned();
            if !seen.insert(base.clone()) {
                panic!("two codelet sources are named {base}: codelet basenames must be unique");
            }
            let anchor = format!("foam_codelet_unit_{i}");
            let wrapper = units.join(format!("{i}_{base}"));
            let text = format!("#include \"{}\"\nextern \"C\" int {anchor}() {{ return 1; }}\n", c.display());
            if fs::read_to_string(&wrapper).ok().as_deref() != Some(text.as_str()) {
                fs::write(&wrapper, text).unwrap();
            }
            cb.file(&wrapper);
            writeln!(manifest, "extern \"C\" int {anchor}();").unwrap();
            writeln!(body, "  if ({anchor}()) files.push_back(\"{base}\");").unwrap();
        }
        let objects = cb.compile_intermediates();
        let mut costs = String::new();
        for o in &objects {
            b.object(o);
            for c in codelet_costs::measure(o).unwrap_or_else(|e| panic!("measuring the codelets: {e}")) {
                writeln!(costs, "      {{\"{}\", {}, {}}},", c.vertex, c.stack, c.code).unwrap();
            }
        }
        manifest.push_str("void foam_codelet_manifest(std::vector<std::string> &files) {\n");
        manifest.push_str(&body);
        manifest.push_str("  (void)files;\n}\n");
        manifest.push_str("const std::vector<poplar_host::HostMeasure> &foam_codelet_measures() {\n");
        manifest.push_str("  static const std::vector<poplar_host::HostMeasure> m = {\n");
        manifest.push_str(&costs);
        manifest.push_str("  };\n  return m;\n}\n");
        let mpath = out.join("codelet_manifest.cpp");
        if fs::read_to_string(&mpath).ok().as_deref() != Some(manifest.as_str()) {
            fs::write(&mpath, manifest).unwrap();
        }
        b.file(&mpath);
    }
    b.compile("poplar_bridge_cpp");
}

/// The targets popc compiles the codelets for: Mk2 hardware and the IPU Model.
const POPC_TARGETS: &str = "ipu2,cpu";

/// The C++ settings shared by the bridge and the host-compiled codelets.
fn configure(b: &mut cc::Build, codelets_dir: &Path) {
    b.std("c++17")
        .opt_level(2)
        .flag("-Wall")
        .flag("-Wextra")
        .flag("-Wdouble-promotion")
        .include(codelets_dir.join("include"));
    // Half conversions in F16C instructions instead of bit twiddling (foam/half.h):
    // the host runtime converts every ray payload at every shard crossing. Only for
    // a native build on a machine that has them, so the binary runs where it was built.
    if host_has_f16c() {
        b.flag("-mf16c");
    }
}

/// Whether this build targets the machine running it and that machine has F16C.
fn host_has_f16c() -> bool {
    if env::var("TARGET").ok() != env::var("HOST").ok() {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("f16c")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
