//! Morton (Z-order) codes: cells close in space get close local indices, so a ray
//! marching through a shard touches nearby records.

/// Spreads the low 21 bits of `v` to every third bit.
fn spread(v: u64) -> u64 {
    let mut x = v & 0x1f_ffff;
    x = (x | x << 32) & 0x001f_0000_0000_ffff;
    x = (x | x << 16) & 0x001f_0000_ff00_00ff;
    x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
    x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
    x = (x | x << 2) & 0x1249_2492_4924_9249;
    x
}

/// 63-bit Morton code of `p` inside the box `[lo, lo + 1/inv_extent)` per axis.
pub fn code(p: [f32; 3], lo: [f32; 3], inv_extent: [f32; 3]) -> u64 {
    const MAX: f32 = ((1 << 21) - 1) as f32;
    let q = |a: usize| (((p[a] - lo[a]) * inv_extent[a]).clamp(0.0, 1.0) * MAX) as u64;
    spread(q(0)) | spread(q(1)) << 1 | spread(q(2)) << 2
}

/// Sorts `ids` by the Morton code of their sites within their own bounding box;
/// ties (equal codes) fall back to the id, so the order is deterministic.
pub fn sort_by_morton(ids: &mut [u32], positions: &[[f32; 3]]) {
    if ids.len() < 2 {
        return;
    }
    let (lo, hi) = crate::kdtree::bounds(ids.iter().map(|&i| positions[i as usize]));
    let inv = std::array::from_fn(|a| {
        let e = hi[a] - lo[a];
        if e > 0.0 { 1.0 / e } else { 0.0 }
    });
    let mut keyed: Vec<(u64, u32)> = ids.iter().map(|&i| (code(positions[i as usize], lo, inv), i)).collect();
    keyed.sort_unstable();
    for (dst, (_, i)) in ids.iter_mut().zip(keyed) {
        *dst = i;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_interleaves() {
        assert_eq!(spread(0b11), 0b1001);
        assert_eq!(code([1.0, 0.0, 0.0], [0.0; 3], [1.0; 3]) >> 60, 0b001);
        assert_eq!(code([0.0, 0.0, 1.0], [0.0; 3], [1.0; 3]) >> 60, 0b100);
    }
}
