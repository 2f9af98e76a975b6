//! The garden preset looks like a trained foam: dense surface cells, a zero-density shell,
//! symmetric true-Voronoi adjacency with about 15 neighbours per site.

use foam_ipu::synth::presets;
use foam_ipu::synth::scene_gen::{Params, generate, shell_count};

#[test]
fn garden_statistics() {
    let n = 8000;
    let p = Params {
        cells: n,
        seed: 3,
        sh_degree: 3,
        preset: "garden".into(),
    };
    let s = generate(&p, &|_| {}).unwrap();
    assert_eq!(s.len(), n);
    assert_eq!(s.sh_rest.len(), n * 45);
    assert!(s.sh_rest.iter().all(|c| c.is_finite() && c.abs() < 0.5));
    assert!(s.density.iter().all(|d| d.is_finite() && *d >= 0.0));

    let dense = s.density.iter().filter(|&&d| d > 1.0).count() as f64 / n as f64;
    assert!((0.5..0.9).contains(&dense), "dense fraction {dense}");
    let empty = s.density.iter().filter(|&&d| d < 0.01).count() as f64 / n as f64;
    assert!((0.1..0.5).contains(&empty), "empty fraction {empty}");

    let r = presets::by_name("garden").unwrap().shell_radius as f32;
    let norm = |p: &[f32; 3]| (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
    let shell: Vec<usize> = (0..n)
        .filter(|&i| norm(&s.positions[i]) > 0.9 * r)
        .collect();
    assert_eq!(shell.len(), shell_count(n));
    assert!(shell.iter().all(|&i| s.density[i] == 0.0));

    let mut ends_ok = true;
    for i in 0..n {
        let nb = s.neighbours(i);
        ends_ok &= nb.windows(2).all(|w| w[0] < w[1]);
        for &j in nb {
            assert!(
                s.neighbours(j as usize).binary_search(&(i as u32)).is_ok(),
                "{i}-{j} one-sided"
            );
        }
    }
    assert!(ends_ok);
    let mean = s.adjacency.len() as f64 / n as f64;
    assert!((12.0..18.0).contains(&mean), "mean neighbours {mean}");
    // Surface colours vary (textures), not one flat colour.
    let distinct: std::collections::HashSet<_> = s.color.iter().collect();
    assert!(distinct.len() > 500, "{} distinct colours", distinct.len());
}
