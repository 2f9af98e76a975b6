//! What the half and mixed layouts cannot hold: they keep SH coefficients and a ray's
//! distance in binary16, whose largest finite value is 65504. A value beyond it would
//! be an infinity on the tile and a wrong image; such scenes and views are refused,
//! and render with the fp32 layout as the reference does.

use glam::DVec3;

use foam_ipu::camera::Camera;
use foam_ipu::device::{DeviceOptions, DevicePlan, DeviceRenderer};
use foam_ipu::reference::{SiteIndex, TraceOptions, render_from};
use foam_ipu::scene::Scene;
use foam_ipu::synth::scene_gen::{Params, generate};
use partition::RayLayout;

fn scene(cells: usize, sh_degree: u8) -> Scene {
    generate(&Params { cells, seed: 5, sh_degree, preset: "garden".into() }, &|_| {}).unwrap()
}

fn camera(scale: f64) -> Camera {
    Camera::look_at(80, 60, 50.0, DVec3::new(0.3, -4.4, 1.6) * scale, DVec3::new(0.0, 0.0, 0.8) * scale, DVec3::Z)
        .unwrap()
}

fn opts(layout: RayLayout, sh_degree: Option<u8>) -> DeviceOptions {
    DeviceOptions { layout, sh_degree, ..DeviceOptions::default() }
}

/// A coefficient beyond binary16's range would be an infinity on the tile, and its
/// cell's colour NaN (black) where the reference's f32 gives one: the half and mixed
/// layouts refuse the scene, naming the vertex, the property and a degree below its
/// band; fp32 carries it, and so does a degree that leaves its band out. 65519 rounds
/// to binary16's largest finite value, 65504, and is accepted.
#[test]
fn coefficients_beyond_binary16_are_refused_by_the_half_layouts() {
    let mut scene = scene(3_000, 3);
    let cam = &camera(1.0);
    let stride = scene.sh_rest_len();
    let plan = |s: &Scene, layout, d| DevicePlan::new(s, 4, cam.width, cam.height, &opts(layout, d), &());
    scene.sh_rest[1234 * stride + 10] = 65519.0;
    assert_eq!(plan(&scene, RayLayout::Half, None).unwrap().sh.degree, 3);
    // color_sh_10 is coefficient 4 (of Y_4), in band 2.
    scene.sh_rest[1234 * stride + 10] = -70000.0;
    // Asked for (checked before the cut) and chosen by auto (after it), alike.
    for (layout, d) in [(RayLayout::Half, Some(3)), (RayLayout::Mixed, Some(3)), (RayLayout::Half, None)] {
        let e = plan(&scene, layout, d).err().unwrap().to_string();
        assert_eq!(
            e,
            format!(
                "vertex 1234: color_sh_10 = -7e4 is beyond binary16's range (±65504), in which the {} layout \
                 carries SH coefficients: render with --layout fp32, or at --sh-degree 1",
                layout.name()
            )
        );
    }
    plan(&scene, RayLayout::Half, Some(1)).unwrap();
    assert_eq!(plan(&scene, RayLayout::Fp32, None).unwrap().sh.degree, 3);
}

/// The garden preset's sites reach about 90 from its camera; scaled by 1,000 (the
/// density by 1/1,000, so the image is the same) a ray's distance could pass 65504.
/// The half and mixed layouts refuse the view, in a plan made for it and when a frame
/// from it starts; fp32 renders it, bit for bit the reference's image.
#[test]
fn a_view_deeper_than_binary16_is_refused_by_the_half_layouts() {
    const SCALE: f32 = 1000.0;
    let mut scene = scene(3_000, 0);
    scene.positions.iter_mut().flatten().for_each(|v| *v *= SCALE);
    scene.density.iter_mut().for_each(|v| *v /= SCALE);
    let cam = camera(f64::from(SCALE));
    let render = |layout| {
        let plan = DevicePlan::new(&scene, 4, cam.width, cam.height, &opts(layout, None), &()).unwrap();
        DeviceRenderer::new(plan).unwrap().render(&scene, &cam, &mut |_, _| {})
    };
    for layout in [RayLayout::Half, RayLayout::Mixed] {
        // A plan for the view refuses it before the cut; another plan when its frame starts.
        let planned = DevicePlan::for_camera(&scene, 4, &cam, &opts(layout, None), &()).err().unwrap().to_string();
        let e = render(layout).err().unwrap().to_string();
        assert_eq!(planned, e);
        assert!(
            e.starts_with("the scene's bounding box reaches ")
                && e.ends_with(&format!(
                    " from the camera, beyond binary16's range (65504), in which the {} layout keeps a ray's \
                     distance: render with --layout fp32",
                    layout.name()
                )),
            "{e}"
        );
    }
    let frame = render(RayLayout::Fp32).unwrap();
    let start = SiteIndex::new(&scene).unwrap().nearest(cam.position.to_array());
    let want = render_from(&scene, &cam, start, &TraceOptions::default());
    assert_eq!((frame.stats.rays_finished, frame.stats.rays_dropped), (frame.stats.rays, 0));
    assert!(frame.output.rgb.iter().zip(&want.rgb).all(|(a, b)| a.to_bits() == b.to_bits()));
    assert!(frame.output.opacity.iter().zip(&want.opacity).all(|(a, b)| a.to_bits() == b.to_bits()));
    assert!(frame.output.rgb.iter().any(|&v| v > 0.0));
}
