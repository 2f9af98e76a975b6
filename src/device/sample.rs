//! The third stage of a plan: a camera's rays sampled through the device's
//! topology — the order of the injectors' blocks and each injector's camera region
//! ([`super::blocks::order`], [`super::region::choose`]), and the paths the sampled
//! rays take beyond those regions, which plan the tracers for the camera. The
//! sample does not depend on the frame: a plan keeps the one it was made with, and
//! frames from that camera reuse it.

use partition::Partition;

use super::blocks::{Block, FrameOrder};
use super::options::DeviceOptions;
use crate::camera::Camera;
use crate::reference::SiteIndex;
use crate::scene::Scene;

/// What sampling a camera reads of a plan.
pub struct Sampling<'a> {
    pub partition: &'a Partition,
    pub sites: &'a SiteIndex,
    pub groups: &'a [Vec<Block>],
    /// Room in each injector's block list.
    pub block_slots: u32,
    pub options: &'a DeviceOptions,
    /// Each tracer's shard bytes.
    pub shard_bytes: &'a [usize],
    /// Bytes of an injector's camera region, its directory included.
    pub region_bytes: usize,
}

/// The cell every ray of `cam` starts in (nearest the camera's centre), and the shard
/// that owns it.
pub fn camera_cell(s: &Sampling<'_>, cam: &Camera) -> (u32, usize) {
    let start = s.sites.nearest(cam.position.to_array());
    (start, s.partition.owner(start))
}

#[derive(Clone)]
pub struct CameraSample {
    pub cam: Camera,
    /// The camera's cell, and the shard that owns it.
    pub start: u32,
    pub owner: usize,
    pub order: FrameOrder,
    /// The shards of each set of sampled paths' camera region.
    pub regions: Vec<Vec<usize>>,
    /// The region budget the regions were chosen for.
    region_bytes: usize,
}

impl CameraSample {
    /// Samples `cam`'s rays through `s`.
    pub fn take(scene: &Scene, cam: &Camera, s: &Sampling<'_>) -> CameraSample {
        let (start, owner) = camera_cell(s, cam);
        let tracer = crate::reference::Tracer::new(scene);
        let owner_of = |c: u32| s.partition.owner(c);
        let budget = s.region_bytes - size_of::<foam_layout::foam_region_header>();
        let region =
            |paths: &[Vec<u16>]| super::region::choose(paths, owner, s.shard_bytes, budget, super::plan::REGION_SHARDS);
        let order = super::blocks::order(
            s.groups,
            s.options.batch,
            cam,
            &|samples: &[(u32, u32)]| {
                super::region::sample_paths(&tracer, &owner_of, cam, start, s.options.t_stop, samples)
            },
            &region,
            s.block_slots,
        );
        let regions = order.paths.iter().map(|paths| region(paths)).collect();
        CameraSample { cam: *cam, start, owner, order, regions, region_bytes: s.region_bytes }
    }

    /// The share of the sampled rays' cell steps that their injectors march in
    /// their camera regions (the rest is the tracers').
    pub fn injector_share(&self) -> f64 {
        let (mut inside, mut all) = (0u64, 0u64);
        for (_, steps, first) in self.split_paths() {
            all += steps.iter().map(|&n| n as u64).sum::<u64>();
            inside += steps[..first].iter().map(|&n| n as u64).sum::<u64>();
        }
        if all == 0 { 1.0 } else { inside as f64 / all as f64 }
    }

    /// Every sampled path, its shards' cell steps, and how many of its first shards
    /// lie in its injector's camera region: the injector marches those, the tracers
    /// the rest (a ray that leaves the region does not come back to it).
    fn split_paths(&self) -> impl Iterator<Item = (&[u16], &[u32], usize)> + '_ {
        let groups = self.order.paths.iter().zip(&self.order.steps).zip(&self.regions);
        groups.flat_map(|((paths, steps), region)| {
            let mut inside = vec![false; region.iter().max().map_or(0, |&s| s + 1)];
            for &s in region {
                inside[s] = true;
            }
            paths.iter().zip(steps).map(move |(path, steps)| {
                let first = path.iter().take_while(|&&s| inside.get(s as usize).copied().unwrap_or(false)).count();
                (path.as_slice(), steps.as_slice(), first)
            })
        })
    }

    /// Keeps the regions for a region of `region_bytes`, which each fits: the greedy
    /// choice picks the same shards under any budget its picks fit.
    pub fn keep_for_region(&mut self, region_bytes: usize) {
        self.region_bytes = region_bytes;
    }

    /// Whether this is the sample [`take`](Self::take) would make of `cam` through `s`.
    pub fn is_of(&self, cam: &Camera, s: &Sampling<'_>) -> bool {
        self.cam == *cam && self.region_bytes == s.region_bytes
    }

    /// The cell steps the rays of every `stride`-th pixel across and down take in
    /// each cell of `scene`, as the device's rays go (from the camera's cell until
    /// they stop): what a cut by load ([`partition::balance_load`]) balances. The
    /// injectors' steps count as the tracers' do: a camera region holds whole shards,
    /// and small ones where its rays gather let it hold more of what they cross.
    pub fn cell_loads(&self, scene: &Scene, t_stop: f32, stride: u32) -> Vec<f32> {
        use rayon::prelude::*;
        let cam = &self.cam;
        let tracer = crate::reference::Tracer::new(scene);
        let stride = stride.max(1) as usize;
        let pixels: Vec<(u32, u32)> = (stride as u32 / 2..cam.height)
            .step_by(stride)
            .flat_map(|y| (stride as u32 / 2..cam.width).step_by(stride).map(move |x| (x, y)))
            .collect();
        let cells: Vec<Vec<u32>> = pixels
            .par_iter()
            .map(|&pixel| {
                let mut out = Vec::new();
                super::region::walk_pixel(&tracer, cam, self.start, t_stop, pixel, |cell| out.push(cell));
                out
            })
            .collect();
        let mut load = vec![0f32; scene.len()];
        for &c in cells.iter().flatten() {
            load[c as usize] += 1.0;
        }
        load
    }

    /// The pixels each sampled path stands for.
    fn pixels_per_path(&self) -> f64 {
        let samples: usize = self.order.paths.iter().map(Vec::len).sum();
        self.cam.width as f64 * self.cam.height as f64 / samples.max(1) as f64
    }

    /// The cell steps each of `shards` shards' tracers march for this view, as
    /// sampled: every sampled ray's steps after it leaves its injector's region,
    /// times the pixels it stands for (as [`paths_beyond_regions`](Self::paths_beyond_regions)).
    pub fn tracer_steps(&self, shards: usize) -> Vec<f64> {
        let weight = self.pixels_per_path();
        let mut out = vec![0.0; shards];
        for (path, steps) in self.beyond_regions() {
            for (&s, &n) in path.iter().zip(steps) {
                out[s as usize] += n as f64 * weight;
            }
        }
        out
    }

    /// The part of every sampled path after it leaves its injector's region, where
    /// some is left: its shards and their cell steps.
    fn beyond_regions(&self) -> impl Iterator<Item = (&[u16], &[u32])> + '_ {
        self.split_paths()
            .filter(|(path, _, first)| path.len() > *first)
            .map(|(path, steps, first)| (&path[first..], &steps[first..]))
    }

    /// The shards each sampled ray crosses after it leaves its injector's region
    /// and the pixels each path stands for.
    pub fn paths_beyond_regions(&self) -> (Vec<Vec<u16>>, f64) {
        (self.beyond_regions().map(|(path, _)| path.to_vec()).collect(), self.pixels_per_path())
    }

    /// The cell steps of [`paths_beyond_regions`](Self::paths_beyond_regions)'
    /// paths, one count for each shard of each path.
    pub fn steps_beyond_regions(&self) -> Vec<Vec<u32>> {
        self.beyond_regions().map(|(_, steps)| steps.to_vec()).collect()
    }
}
