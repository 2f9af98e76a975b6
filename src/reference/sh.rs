//! Real spherical harmonics in the 3DGS basis (degree ≤ 3), as the original evaluates them:
//! `rgb = max(0, 0.5 + Σ_k Y_k(dir)·c_k)`. The scene stores the DC part already mapped to
//! `0.5 + C0·c_0` and quantised to u8, so here `rgb = max(0, u8/255 + Σ_{k≥1} Y_k·c_k)`.

use glam::Vec3;

// The original's constants (3DGS), from layout.h, where the device's march reads them.
use foam_layout as l;
const C1: f32 = l::FOAM_SH_C1 as f32;
const C2: [f32; 5] = [
    l::FOAM_SH_C2_0 as f32,
    l::FOAM_SH_C2_1 as f32,
    l::FOAM_SH_C2_2 as f32,
    l::FOAM_SH_C2_3 as f32,
    l::FOAM_SH_C2_4 as f32,
];
const C3: [f32; 7] = [
    l::FOAM_SH_C3_0 as f32,
    l::FOAM_SH_C3_1 as f32,
    l::FOAM_SH_C3_2 as f32,
    l::FOAM_SH_C3_3 as f32,
    l::FOAM_SH_C3_4 as f32,
    l::FOAM_SH_C3_5 as f32,
    l::FOAM_SH_C3_6 as f32,
];

/// Colour of a DC-only cell (or of any cell at SH degree 0): the stored byte over 255,
/// as the device's march (codelets/include/foam/march.h, foam_cell_rgb) computes it.
#[inline]
pub fn dc_rgb(c: [u8; 3]) -> [f32; 3] {
    [c[0] as f32 / 255.0, c[1] as f32 / 255.0, c[2] as f32 / 255.0]
}

/// The basis values Y_1..Y_{(d+1)²−1} for a unit direction (Y_0 is folded into the DC
/// byte). Unused entries are zero.
pub fn basis(dir: Vec3, degree: u8) -> [f32; 15] {
    let (x, y, z) = (dir.x, dir.y, dir.z);
    let mut b = [0.0f32; 15];
    if degree >= 1 {
        b[0] = -C1 * y;
        b[1] = C1 * z;
        b[2] = -C1 * x;
    }
    let (xx, yy, zz) = (x * x, y * y, z * z);
    let (xy, yz, xz) = (x * y, y * z, x * z);
    if degree >= 2 {
        b[3] = C2[0] * xy;
        b[4] = C2[1] * yz;
        b[5] = C2[2] * (2.0 * zz - xx - yy);
        b[6] = C2[3] * xz;
        b[7] = C2[4] * (xx - yy);
    }
    if degree >= 3 {
        b[8] = C3[0] * y * (3.0 * xx - yy);
        b[9] = C3[1] * xy * z;
        b[10] = C3[2] * y * (4.0 * zz - xx - yy);
        b[11] = C3[3] * z * (2.0 * zz - 3.0 * xx - 3.0 * yy);
        b[12] = C3[4] * x * (4.0 * zz - xx - yy);
        b[13] = C3[5] * z * (xx - yy);
        b[14] = C3[6] * x * (xx - 3.0 * yy);
    }
    b
}

/// View-dependent colour: `coeffs` are the site's `sh_rest` floats in the file's order
/// (`3·(k−1)+c` is coefficient k of channel c); only the first `n_coeffs` (k = 1..=n) are used.
#[inline]
pub fn sh_rgb(dc: [u8; 3], coeffs: &[f32], basis: &[f32; 15], n_coeffs: usize) -> [f32; 3] {
    let mut rgb = dc_rgb(dc);
    for (k, &y) in basis.iter().enumerate().take(n_coeffs) {
        for (c, v) in rgb.iter_mut().enumerate() {
            *v += y * coeffs[3 * k + c];
        }
    }
    rgb.map(|v| v.max(0.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The basis is orthonormal on the sphere with norm 1/(4π)·... check orthogonality
    /// numerically: ∫ Y_i Y_j dΩ = δ_ij (the 3DGS basis is orthonormal up to sign).
    #[test]
    #[allow(clippy::needless_range_loop)]
    fn basis_is_orthonormal() {
        let n = 400;
        let mut gram = [[0.0f64; 15]; 15];
        for i in 0..n {
            let cos_t = 1.0 - 2.0 * (i as f64 + 0.5) / n as f64;
            for j in 0..2 * n {
                let phi = std::f64::consts::PI * (j as f64 + 0.5) / n as f64;
                let s = (1.0 - cos_t * cos_t).sqrt();
                let d = Vec3::new((s * phi.cos()) as f32, (s * phi.sin()) as f32, cos_t as f32);
                let b = basis(d, 3);
                let w = 4.0 * std::f64::consts::PI / (2 * n * n) as f64;
                for a in 0..15 {
                    for c in 0..15 {
                        gram[a][c] += w * b[a] as f64 * b[c] as f64;
                    }
                }
            }
        }
        for a in 0..15 {
            for c in 0..15 {
                let want = if a == c { 1.0 } else { 0.0 };
                assert!((gram[a][c] - want).abs() < 2e-3, "gram[{a}][{c}] = {}", gram[a][c]);
            }
        }
    }

    #[test]
    fn degree_limits_and_clamp() {
        let d = Vec3::new(0.0, 0.6, 0.8);
        let b1 = basis(d, 1);
        assert_eq!(&b1[3..], &[0.0; 12]);
        assert!((b1[0] + C1 * 0.6).abs() < 1e-7);
        let coeffs = [-10.0f32; 45];
        assert_eq!(sh_rgb([255, 0, 128], &coeffs, &b1, 0), dc_rgb([255, 0, 128]));
        // Negative results are clamped to zero like the original.
        let rgb = sh_rgb([0, 0, 0], &coeffs, &basis(Vec3::Z, 1), 3);
        assert_eq!(rgb, [0.0; 3]);
    }
}
