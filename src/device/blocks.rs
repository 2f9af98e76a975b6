//! Which pixels each injector emits, and in what order.
//!
//! The frame is cut into blocks. With `rows:N` or `cols:N` (the paper's scan-ordered
//! batches) a block is N whole lines and the injectors take them in turn, so the
//! schedule is the paper's. With `blocks:N` a block is an N×N square and each injector
//! owns one rectangle of the view: its rays then cross a narrow sub-frustum, so its
//! camera region can hold that sub-frustum's shards further out. Within its part an
//! injector emits the blocks whose sampled ray crosses the most shards first: those
//! rays take the most iterations, and started last they would be the frame's tail.

use crate::camera::Camera;

use super::options::Batch;

/// A block, named by its top-left pixel (layout.h foam_block).
pub type Block = (u16, u16);

/// Bytes of a block list with room for `slots` blocks: a count and the blocks.
pub fn list_bytes(slots: u32) -> usize {
    4 + slots as usize * size_of::<foam_layout::foam_block>()
}

/// The blocks of a `width` × `height` frame, grouped per injector. The grouping
/// depends only on the frame size, so the plan sizes the block lists once.
pub fn groups(batch: Batch, width: u32, height: u32, injectors: u32) -> Vec<Vec<Block>> {
    let (bw, bh) = batch.block_size(width, height);
    let (nx, ny) = (width.div_ceil(bw), height.div_ceil(bh));
    let g = injectors.max(1);
    let mut out = vec![Vec::new(); g as usize];
    let block = |bx: u32, by: u32| ((bx * bw) as u16, (by * bh) as u16);
    match batch {
        Batch::Rows(_) | Batch::Cols(_) => {
            for i in 0..nx * ny {
                let (bx, by) = if matches!(batch, Batch::Rows(_)) { (0, i) } else { (i, 0) };
                out[(i % g) as usize].push(block(bx, by));
            }
        }
        Batch::Blocks(_) => {
            // gx × gy rectangles of the block grid, as close to square as g allows.
            let gx = (1..=g)
                .filter(|d| g.is_multiple_of(*d))
                .min_by(|&a, &b| {
                    let skew = |d: u32| (nx as f64 / d as f64 - ny as f64 / (g / d) as f64).abs();
                    skew(a).total_cmp(&skew(b)).then(a.cmp(&b))
                })
                .unwrap_or(1);
            let gy = g / gx;
            for by in 0..ny {
                for bx in 0..nx {
                    let group = (by * gy / ny) * gx + bx * gx / nx;
                    out[group as usize].push(block(bx, by));
                }
            }
        }
    }
    out
}

/// Sampled paths: the shards each given pixel's ray crosses, in order.
pub type Sampler<'a> = dyn Fn(&[(u32, u32)]) -> Vec<Vec<u16>> + 'a;

/// The frame's blocks per injector in the order to emit them, and the sampled paths
/// to choose camera regions from.
#[derive(Clone)]
pub struct FrameOrder {
    pub blocks: Vec<Vec<Block>>,
    /// One set of paths per injector, or a single set that every injector shares
    /// (then all of them get the same region, chosen once).
    pub paths: Vec<Vec<Vec<u16>>>,
}

impl FrameOrder {
    /// Which entry of `paths` injector `i` chooses its region from.
    pub fn paths_of(&self, i: usize) -> usize {
        i.min(self.paths.len() - 1)
    }
}

/// Orders every injector's blocks for `cam` and samples the paths of its rays.
pub fn order(groups: &[Vec<Block>], batch: Batch, cam: &Camera, sample: &Sampler<'_>) -> FrameOrder {
    match batch {
        Batch::Rows(_) | Batch::Cols(_) => {
            // Every injector's lines sweep the whole view: one region serves them all.
            FrameOrder { blocks: groups.to_vec(), paths: vec![sample(&grid_samples(cam))] }
        }
        Batch::Blocks(n) => {
            // k × k sampled pixels per block, about SAMPLE_SPACING apart: the paths
            // also choose the camera regions and the tracers' shard copies, which
            // need a few samples per shard the view crosses.
            let k = n.div_ceil(SAMPLE_SPACING);
            let at = |(x, y): Block, i: u32| {
                let (sx, sy) = (x as u32 + (2 * (i % k) + 1) * n / (2 * k), y as u32 + (2 * (i / k) + 1) * n / (2 * k));
                (sx.min(cam.width - 1), sy.min(cam.height - 1))
            };
            let samples: Vec<(u32, u32)> = groups.iter().flatten().flat_map(|&b| (0..k * k).map(move |i| at(b, i))).collect();
            let mut paths = sample(&samples).into_iter();
            let (blocks, paths) = groups
                .iter()
                .map(|g| {
                    let mut own: Vec<(Block, usize)> = Vec::with_capacity(g.len());
                    let mut all = Vec::with_capacity(g.len() * (k * k) as usize);
                    for &b in g {
                        let mine: Vec<Vec<u16>> = paths.by_ref().take((k * k) as usize).collect();
                        own.push((b, mine.iter().map(Vec::len).max().unwrap_or(0)));
                        all.extend(mine);
                    }
                    // Longest sampled path first; the sort is stable, so ties keep scan order.
                    own.sort_by_key(|&(_, len)| std::cmp::Reverse(len));
                    (own.into_iter().map(|(b, _)| b).collect::<Vec<_>>(), all)
                })
                .unzip();
            FrameOrder { blocks, paths }
        }
    }
}

/// Pixels between a block's sampled rays, at most.
const SAMPLE_SPACING: u32 = 4;

/// The bytes of a block list with room for `slots` blocks (layout.h foam_block).
pub fn list(blocks: &[Block], slots: u32) -> Vec<u8> {
    assert!(blocks.len() <= slots as usize, "block list over its slots");
    let mut out = Vec::with_capacity(list_bytes(slots));
    out.extend_from_slice(&(blocks.len() as u32).to_le_bytes());
    for &(x, y) in blocks {
        out.extend_from_slice(&x.to_le_bytes());
        out.extend_from_slice(&y.to_le_bytes());
    }
    out.resize(list_bytes(slots), 0);
    out
}

/// Sampled rays per frame for scan-ordered batches: enough to rank the few
/// hundred shards a region can hold.
const TARGET_SAMPLES: u32 = 4800;

/// A regular grid of about [`TARGET_SAMPLES`] pixels over the frame.
fn grid_samples(cam: &Camera) -> Vec<(u32, u32)> {
    let pixels = cam.width as u64 * cam.height as u64;
    let stride = ((pixels as f64 / TARGET_SAMPLES as f64).sqrt().floor() as u32).max(1);
    let (nx, ny) = (cam.width.div_ceil(stride), cam.height.div_ceil(stride));
    (0..nx * ny)
        .map(|k| {
            let (x, y) = ((k % nx) * stride + stride / 2, (k / nx) * stride + stride / 2);
            (x.min(cam.width - 1), y.min(cam.height - 1))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covered(groups: &[Vec<Block>], batch: Batch, w: u32, h: u32) -> Vec<u32> {
        let (bw, bh) = batch.block_size(w, h);
        let mut hits = vec![0u32; (w * h) as usize];
        for &(x, y) in groups.iter().flatten() {
            for yy in y as u32..(y as u32 + bh).min(h) {
                for xx in x as u32..(x as u32 + bw).min(w) {
                    hits[(yy * w + xx) as usize] += 1;
                }
            }
        }
        hits
    }

    #[test]
    fn every_pixel_is_in_exactly_one_block() {
        for batch in [Batch::Rows(1), Batch::Rows(3), Batch::Cols(2), Batch::Blocks(8), Batch::Blocks(7)] {
            for (w, h, g) in [(640, 480, 8), (61, 47, 3), (5, 3, 8), (1, 1, 1)] {
                let groups = groups(batch, w, h, g);
                assert_eq!(groups.len(), g as usize);
                assert!(covered(&groups, batch, w, h).iter().all(|&c| c == 1), "{batch} {w}x{h} over {g}");
            }
        }
    }

    #[test]
    fn square_blocks_split_the_view_into_rectangles_of_equal_size() {
        let g = groups(Batch::Blocks(8), 640, 480, 8);
        // 80 x 60 blocks in 4 x 2 rectangles of 20 x 30.
        assert!(g.iter().all(|b| b.len() == 600));
        assert!(g[0].iter().all(|&(x, y)| x < 160 && y < 240));
        assert!(g[7].iter().all(|&(x, y)| x >= 480 && y >= 240));
        // Lines are dealt out in turn.
        let rows = groups(Batch::Rows(1), 640, 480, 8);
        assert_eq!(&rows[1][..2], &[(0, 1), (0, 9)]);
    }

    #[test]
    fn longest_sampled_paths_go_first() {
        let groups = vec![vec![(0u16, 0u16), (8, 0), (16, 0)], vec![(0, 8)]];
        let cam = Camera::look_at(24, 16, 60.0, glam::DVec3::new(0.0, 0.0, -3.0), glam::DVec3::ZERO, glam::DVec3::Y).unwrap();
        let len = |(x, _): (u32, u32)| vec![0u16; 1 + (x as usize % 20) / 4];
        let sample = |s: &[(u32, u32)]| s.iter().map(|&p| len(p)).collect::<Vec<_>>();
        let order = order(&groups, Batch::Blocks(8), &cam, &sample);
        // 2 × 2 samples per 8 × 8 block, at x = 2, 6 | 10, 14 | 18, 22: paths of 1, 2 |
        // 3, 4 | 5, 1 shards; a block goes by its longest.
        assert_eq!(order.blocks[0], vec![(16, 0), (8, 0), (0, 0)]);
        let lens: Vec<usize> = order.paths[0].iter().map(Vec::len).collect();
        assert_eq!(lens, vec![1, 2, 1, 2, 3, 4, 3, 4, 5, 1, 5, 1]);
        assert_eq!(order.blocks[1], vec![(0, 8)]);
        assert_eq!(order.paths_of(1), 1);
        // Lines share one sample of the whole view.
        let lines = super::order(&groups, Batch::Rows(1), &cam, &sample);
        assert_eq!((lines.paths.len(), lines.paths_of(1)), (1, 0));
        assert_eq!(lines.blocks, groups);
        let bytes = list(&order.blocks[0], 4);
        assert_eq!(bytes.len(), 20);
        assert_eq!(&bytes[..8], &[3, 0, 0, 0, 16, 0, 0, 0]);
    }
}
