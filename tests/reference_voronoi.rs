//! The exit-face walk on a true Voronoi diagram (a synth scene): every segment the tracer
//! reports must lie in the cell whose site is nearest (brute force), and segments must
//! follow each other without gaps.

use foam_ipu::camera::Camera;
use foam_ipu::reference::{SiteIndex, Tracer};
use foam_ipu::synth::scene_gen::{Params, generate};
use glam::{DVec3, Vec3};

fn nearest_brute(pos: &[[f32; 3]], x: Vec3) -> (usize, f32) {
    let d2 = |p: &[f32; 3]| (Vec3::from_array(*p) - x).length_squared();
    let best = (0..pos.len()).min_by(|&a, &b| d2(&pos[a]).total_cmp(&d2(&pos[b]))).unwrap();
    (best, d2(&pos[best]))
}

#[test]
fn segments_lie_in_the_nearest_sites_cell() {
    let params = Params { cells: 3000, seed: 11, sh_degree: 0, preset: "garden".into() };
    let scene = generate(&params, &|_| {}).unwrap();
    let cam = Camera::look_at(16, 12, 60.0, DVec3::new(0.3, -4.4, 1.6), DVec3::new(0.0, 0.0, 0.8), DVec3::Z).unwrap();
    let tracer = Tracer::new(&scene);
    let start = SiteIndex::new(&scene).unwrap().nearest(cam.position.to_array());
    let mut segments = 0;
    for j in 0..cam.height {
        for i in 0..cam.width {
            let (o, d) = cam.pixel_ray(i, j);
            let mut last_t = 0.0f32;
            tracer.walk(start, o, d, 0.0, 1024, |cell, t0, t1| {
                assert_eq!(t0, last_t, "pixel ({i},{j}): gap before cell {cell}");
                last_t = t1;
                let x = o + d * (0.5 * (t0 + t1));
                let (best, best_d2) = nearest_brute(&scene.positions, x);
                let mine = (Vec3::from_array(scene.positions[cell as usize]) - x).length_squared();
                // Equal distances (a tie) are fine; anything else must be the nearest site.
                assert!(
                    best == cell as usize || mine <= best_d2 * (1.0 + 1e-4) + 1e-9,
                    "pixel ({i},{j}): segment [{t0}, {t1}] in cell {cell}, nearest site is {best}"
                );
                segments += 1;
                true
            });
        }
    }
    assert!(segments > 16 * 12 * 5, "rays should cross several cells ({segments} segments)");
}
