//! The shipped garden scene is exactly what `foam-ipu synth` makes with the arguments
//! recorded in assets/README.md.

mod common;

#[test]
fn shipped_garden_is_regenerated_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let ply = dir.path().join("garden.ply");
    let cam = dir.path().join("garden.camera.json");
    let readme = std::fs::read_to_string(common::repo_path("assets/README.md")).unwrap();
    let args = "--cells 60000 --seed 1 --sh-degree 1 --preset garden";
    assert!(readme.contains(args), "assets/README.md no longer records {args}");
    let mut argv = vec!["synth", "-o", ply.to_str().unwrap(), "--camera-out", cam.to_str().unwrap()];
    argv.extend(args.split(' '));
    let out = common::run(&argv);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let shipped = std::fs::read(common::repo_path("assets/garden.ply")).unwrap();
    assert!(shipped.len() <= 8_000_000, "asset is {} bytes", shipped.len());
    assert!(std::fs::read(&ply).unwrap() == shipped, "assets/garden.ply differs from a fresh synth");
    assert_eq!(
        std::fs::read_to_string(&cam).unwrap(),
        std::fs::read_to_string(common::repo_path("assets/garden.camera.json")).unwrap()
    );
}
