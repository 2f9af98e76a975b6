//! The test command's own setup: `scripts/libclang-dir` finds a libclang bindgen can
//! load the way clang-sys does, and refuses what bindgen cannot use (libclang-cpp, the
//! only libclang-named library on some machines, and files that are not ELF).

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

fn find(dirs: &[&Path]) -> Option<String> {
    let out = Command::new("bash").arg(common::repo_path("scripts/libclang-dir")).args(dirs).output().unwrap();
    out.status.success().then(|| String::from_utf8(out.stdout).unwrap().trim_end().to_string())
}

const ELF: &[u8] = b"\x7fELF\x02\x01\x01\0";

#[test]
fn libclang_is_found_as_bindgen_finds_it_and_libclang_cpp_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (cpp, text, real) = (dir.path().join("cpp"), dir.path().join("text"), dir.path().join("real"));
    for d in [&cpp, &text, &real] {
        fs::create_dir(d).unwrap();
    }
    fs::write(cpp.join("libclang-cpp.so.14"), ELF).unwrap();
    fs::write(cpp.join("libclang-cpp.so"), ELF).unwrap();
    assert_eq!(find(&[&cpp]), None, "libclang-cpp taken for libclang");
    fs::write(text.join("libclang.so"), "INPUT(libclang.so.18)\n").unwrap();
    assert_eq!(find(&[&text]), None, "a linker script taken for libclang");
    assert_eq!(find(&[dir.path().join("missing").as_path()]), None);
    for name in ["libclang.so", "libclang.so.18", "libclang-14.so", "libclang-18.so.1"] {
        let d = real.join(name.replace('.', "_"));
        fs::create_dir(&d).unwrap();
        fs::write(d.join(name), ELF).unwrap();
        assert_eq!(find(&[&cpp, &text, &d]), Some(d.display().to_string()), "{name}");
    }
}

#[test]
fn the_venv_wheel_provides_libclang() {
    // scripts/test points LIBCLANG_PATH at the pinned wheel in the .venv it makes.
    let py = common::python();
    let out = Command::new(py.get_program())
        .args(["-c", "import clang, os; print(os.path.join(os.path.dirname(clang.__file__), 'native'))"])
        .output()
        .unwrap();
    assert!(out.status.success(), "the libclang wheel is not installed: {}", String::from_utf8_lossy(&out.stderr));
    let native = String::from_utf8(out.stdout).unwrap();
    let native = Path::new(native.trim_end());
    assert_eq!(find(&[native]), Some(native.display().to_string()));
}
