//! Image metrics on RGB images in [0, 1]: PSNR as the original's test script computes it,
//! SSIM as scikit-image's `structural_similarity(gaussian_weights=True, sigma=1.5,
//! use_sample_covariance=False, data_range=1, channel_axis=2)`.

/// `20·log10(1/√mse)` over all pixels and channels; +∞ for identical images.
pub fn psnr(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let mse = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>() / a.len() as f64;
    20.0 * (1.0 / mse.sqrt()).log10()
}

/// Side of the Gaussian window: scikit-image's radius `int(3.5·σ + 0.5)` = 5 at σ = 1.5.
pub const SSIM_WINDOW: usize = 11;

fn gaussian_kernel() -> [f64; SSIM_WINDOW] {
    let sigma = 1.5f64;
    let r = (SSIM_WINDOW / 2) as f64;
    let mut k = [0.0; SSIM_WINDOW];
    for (i, v) in k.iter_mut().enumerate() {
        let x = i as f64 - r;
        *v = (-0.5 * x * x / (sigma * sigma)).exp();
    }
    let s: f64 = k.iter().sum();
    k.map(|v| v / s)
}

/// Mean SSIM of interleaved RGB images (`channels` values per pixel), averaged over the
/// channels. Only window positions fully inside the image count, as scikit-image crops
/// its padded border before averaging. `None` if the image is smaller than the window.
pub fn ssim(a: &[f64], b: &[f64], width: usize, height: usize, channels: usize) -> Option<f64> {
    assert_eq!(a.len(), width * height * channels);
    assert_eq!(a.len(), b.len());
    if width < SSIM_WINDOW || height < SSIM_WINDOW {
        return None;
    }
    let k = gaussian_kernel();
    let (c1, c2) = (0.01f64 * 0.01, 0.03f64 * 0.03);
    let (ow, oh) = (width - SSIM_WINDOW + 1, height - SSIM_WINDOW + 1);
    let mut total = 0.0;
    // Horizontally filtered rows of x, y, x², y², xy, then filtered vertically per column.
    let mut hrow = vec![[0.0f64; 5]; ow * height];
    for c in 0..channels {
        for j in 0..height {
            for i in 0..ow {
                let mut s = [0.0f64; 5];
                for (t, &w) in k.iter().enumerate() {
                    let idx = (j * width + i + t) * channels + c;
                    let (x, y) = (a[idx], b[idx]);
                    s[0] += w * x;
                    s[1] += w * y;
                    s[2] += w * x * x;
                    s[3] += w * y * y;
                    s[4] += w * x * y;
                }
                hrow[j * ow + i] = s;
            }
        }
        let mut sum = 0.0;
        for j in 0..oh {
            for i in 0..ow {
                let mut m = [0.0f64; 5];
                for (t, &w) in k.iter().enumerate() {
                    let s = &hrow[(j + t) * ow + i];
                    for q in 0..5 {
                        m[q] += w * s[q];
                    }
                }
                let (ux, uy) = (m[0], m[1]);
                let (vx, vy, vxy) = (m[2] - ux * ux, m[3] - uy * uy, m[4] - ux * uy);
                sum += ((2.0 * ux * uy + c1) * (2.0 * vxy + c2)) / ((ux * ux + uy * uy + c1) * (vx + vy + c2));
            }
        }
        total += sum / (ow * oh) as f64;
    }
    Some(total / channels as f64)
}

/// Pixel-level differences between two interleaved images.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiffStats {
    /// Largest absolute difference of any channel.
    pub max_abs: f64,
    /// Pixels where some channel differs by more than the tolerance.
    pub differing_pixels: usize,
}

pub fn diff_stats(a: &[f64], b: &[f64], channels: usize, tolerance: f64) -> DiffStats {
    let mut max_abs = 0.0f64;
    let mut differing = 0;
    for (pa, pb) in a.chunks_exact(channels).zip(b.chunks_exact(channels)) {
        let d = pa.iter().zip(pb).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
        max_abs = max_abs.max(d);
        differing += usize::from(d > tolerance);
    }
    DiffStats { max_abs, differing_pixels: differing }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_and_known_values() {
        let a: Vec<f64> = (0..16 * 12 * 3).map(|i| (i % 7) as f64 / 7.0).collect();
        assert_eq!(psnr(&a, &a), f64::INFINITY);
        assert!((ssim(&a, &a, 16, 12, 3).unwrap() - 1.0).abs() < 1e-12);
        let b: Vec<f64> = a.iter().map(|v| v + 0.1).collect();
        assert!((psnr(&a, &b) - 20.0).abs() < 1e-9);
        let d = diff_stats(&a, &b, 3, 0.0);
        assert!((d.max_abs - 0.1).abs() < 1e-12);
        assert_eq!(d.differing_pixels, 16 * 12);
        assert!(ssim(&a[..10 * 12 * 3], &b[..10 * 12 * 3], 10, 12, 3).is_none());
        assert!((gaussian_kernel().iter().sum::<f64>() - 1.0).abs() < 1e-15);
    }
}
