//! Which pixels each injector emits, and in what order.
//!
//! The frame is cut into blocks. With `rows:N` or `cols:N` (the paper's scan-ordered
//! batches) a block is N whole lines and the injectors take them in turn, so the
//! schedule is the paper's. With `blocks:N` a block is an N×N square and each injector
//! owns one rectangle of the view (give or take blocks moved at its edges to even
//! the costs): its rays then cross a narrow sub-frustum, so its camera region can
//! hold that sub-frustum's shards further out. Within its part an
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

/// One sampled ray: the shards it crosses (deduplicated consecutive runs), in
/// order, and the cells it steps through in each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampledRay {
    pub shards: Vec<u16>,
    pub steps: Vec<u32>,
}

impl SampledRay {
    /// What its injector spends on it, in tenths of a cell step (see [`order`]):
    /// its steps before it first leaves the `region`'s shards (an injector hands
    /// a ray on where it leaves the region).
    pub fn cost_in(&self, region: &[usize]) -> u64 {
        6 + self.inside(region).map(|(_, &n)| 10 * n as u64 + 5).sum::<u64>()
    }

    fn inside<'a>(&'a self, region: &'a [usize]) -> impl Iterator<Item = (&'a u16, &'a u32)> + 'a {
        self.shards.iter().zip(&self.steps).take_while(|(s, _)| region.contains(&(**s as usize)))
    }
}

/// Sampled rays, one per given pixel.
pub type Sampler<'a> = dyn Fn(&[(u32, u32)]) -> Vec<SampledRay> + 'a;

/// The camera region an injector would get for the sampled paths of its rays.
pub type RegionChooser<'a> = dyn Fn(&[Vec<u16>]) -> Vec<usize> + 'a;

/// The frame's blocks per injector in the order to emit them, and the sampled paths
/// to choose camera regions from.
#[derive(Clone)]
pub struct FrameOrder {
    pub blocks: Vec<Vec<Block>>,
    /// One set of paths per injector, or a single set that every injector shares
    /// (then all of them get the same region, chosen once).
    pub paths: Vec<Vec<Vec<u16>>>,
    /// The cell steps of each path's shards, in `paths`' shape.
    pub steps: Vec<Vec<Vec<u32>>>,
    /// The cell steps the dearest injector would march in its region, all its
    /// pixels counted, as sampled (0 for scan-ordered batches, which are not cut
    /// by cost).
    pub dearest_steps: u64,
}

impl FrameOrder {
    /// Which entry of `paths` injector `i` chooses its region from.
    pub fn paths_of(&self, i: usize) -> usize {
        i.min(self.paths.len() - 1)
    }
}

/// Block slots an injector's list gets for `groups`: room for the largest group and,
/// with square blocks, for a view whose sampled cost gives some injectors up to
/// [`SLOTS_PER_SHARE`] times the even share of the blocks (see [`order`]).
pub fn slots(batch: Batch, groups: &[Vec<Block>]) -> u32 {
    let largest = groups.iter().map(Vec::len).max().unwrap_or(0);
    match batch {
        Batch::Rows(_) | Batch::Cols(_) => largest as u32,
        Batch::Blocks(_) => {
            let blocks: usize = groups.iter().map(Vec::len).sum();
            largest.max(SLOTS_PER_SHARE * blocks.div_ceil(groups.len().max(1))) as u32
        }
    }
}

/// Orders every injector's blocks for `cam` and samples the paths of its rays. With
/// square blocks the view is first re-cut among the injectors, at most `slots`
/// blocks each, so that each gets an even share of the sampled cell steps it would
/// march in the region `region` chooses for it (see [`balance`]).
pub fn order(
    groups: &[Vec<Block>],
    batch: Batch,
    cam: &Camera,
    sample: &Sampler<'_>,
    region: &RegionChooser<'_>,
    slots: u32,
) -> FrameOrder {
    match batch {
        Batch::Rows(_) | Batch::Cols(_) => {
            // Every injector's lines sweep the whole view: one region serves them all.
            let (paths, steps) = sample(&grid_samples(cam)).into_iter().map(|r| (r.shards, r.steps)).unzip();
            FrameOrder { blocks: groups.to_vec(), paths: vec![paths], steps: vec![steps], dearest_steps: 0 }
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
            let all: Vec<Block> = groups.iter().flatten().copied().collect();
            let samples: Vec<(u32, u32)> = all.iter().flat_map(|&b| (0..k * k).map(move |i| at(b, i))).collect();
            let mut sampled = sample(&samples).into_iter();
            let rays: Vec<Vec<SampledRay>> =
                all.iter().map(|_| sampled.by_ref().take((k * k) as usize).collect()).collect();
            let mut next = 0;
            let even: Vec<Vec<usize>> = groups
                .iter()
                .map(|g| {
                    next += g.len();
                    (next - g.len()..next).collect()
                })
                .collect();
            // A block's cost, in tenths of a cell step: its rays' cell steps and shard
            // visits in the region its injector gets, and making each ray (the
            // measured InjectorMarch costs, in IPU instructions: about 650 a cell
            // step, 300 a visit, 420 a ray). The regions follow the cut, so the cut
            // is made twice: on the even cut's regions, then on its own.
            let paths_of =
                |g: &[usize]| g.iter().flat_map(|&i| rays[i].iter().map(|r| r.shards.clone())).collect::<Vec<_>>();
            // A group's region, and its blocks' costs in it.
            let costed = |g: &[usize]| {
                let chosen = region(&paths_of(g));
                let cost: Vec<u64> = g.iter().map(|&i| rays[i].iter().map(|r| r.cost_in(&chosen)).sum()).collect();
                (chosen, cost)
            };
            // With them, the share of the sampled cell steps the regions march.
            let cost_under = |members: &[Vec<usize>]| {
                let mut cost = vec![0u64; all.len()];
                let (mut inside, mut steps) = (0u64, 0u64);
                for g in members {
                    let (chosen, own) = costed(g);
                    for (&i, c) in g.iter().zip(own) {
                        cost[i] = c;
                        for r in &rays[i] {
                            inside += r.inside(&chosen).map(|(_, &n)| n as u64).sum::<u64>();
                            steps += r.steps.iter().map(|&n| n as u64).sum::<u64>();
                        }
                    }
                }
                (cost, if steps == 0 { 1.0 } else { inside as f64 / steps as f64 })
            };
            // Each cut moves the regions, so re-cut on the new regions a few times and
            // keep the cut whose dearest injector costs least under its own regions.
            let dearest = |members: &[Vec<usize>], cost: &[u64]| {
                members.iter().map(|g| g.iter().map(|&i| cost[i]).sum::<u64>()).max().unwrap_or(0)
            };
            let (mut cost, share) = cost_under(&even);
            let mut best = (dearest(&even, &cost), even, cost.clone());
            // Where the regions march (nearly) every sampled step, nothing is left to
            // the tracers for a staircase's wider frusta to cost (see `balance`; garden:
            // 53.6 → 50.7 ms).
            let staircases = share >= super::options::INJECTORS_ALONE_SHARE;
            for _ in 0..BALANCE_ROUNDS {
                // Without a balanced cut, the injectors keep the cut they have.
                let Some(members) = balance(&all, &cost, n, groups.len(), slots, staircases) else { break };
                let (fresh, _) = cost_under(&members);
                let d = dearest(&members, &fresh);
                // Half the old cost and half the new: a block's cost depends on the
                // cut, and taking the new alone swings between cuts.
                cost = cost.iter().zip(&fresh).map(|(a, b)| (a + b) / 2).collect();
                if d < best.0 {
                    best = (d, members, fresh);
                }
            }
            let (_, members, fresh) = best;
            let group_cost = |g: &[usize]| {
                let (_, c) = costed(g);
                (c.iter().sum::<u64>(), c)
            };
            let (dearest, members) = refine(members, &fresh, &all, n, slots as usize, &group_cost);
            let members = deal_over_workers(members, foam_layout::FOAM_WORKERS as usize);
            let steps = members
                .iter()
                .map(|g| g.iter().flat_map(|&i| rays[i].iter().map(|r| r.steps.clone())).collect())
                .collect();
            let (blocks, paths) = members
                .iter()
                .map(|g| {
                    let mut own: Vec<(Block, usize)> = g
                        .iter()
                        .map(|&i| (all[i], rays[i].iter().map(|r| r.shards.len()).max().unwrap_or(0)))
                        .collect();
                    // Longest sampled path first; the sort is stable, so ties keep scan order.
                    own.sort_by_key(|&(_, len)| std::cmp::Reverse(len));
                    (own.into_iter().map(|(b, _)| b).collect::<Vec<_>>(), paths_of(g))
                })
                .unzip();
            // Costs are in tenths of a step, for k × k of a block's n × n pixels.
            let dearest_steps = dearest * (n * n) as u64 / (10 * (k * k) as u64);
            FrameOrder { blocks, paths, steps, dearest_steps }
        }
    }
}

/// Cuts `blocks` (n × n squares, named by their corners) into `g` groups of the block
/// grid, each of at most `slots` blocks, so that the summed `cost` of each is as close
/// to an even share as it can be: each group is cut in two along one axis, each side
/// getting groups in proportion to its cost, where the dearer side's cost a group is
/// least. A cut follows whole lines of
/// blocks wherever one keeps both sides within their slots, and ends partway along a
/// line (a staircase) only where none does, so that a cut always exists: with whole
/// lines only, 147 blocks in 7 rows of 21 had no cut into two halves of at most 76
/// (garden, 256 injectors), and the whole view fell back to equal rectangles.
/// Staircases are the last resort because they widen an injector's frustum: cutting
/// partway wherever it matched the share better evened the injectors out further but
/// cost the tracers more than it saved (1 M scene 78.1 → 84.9 ms, bicycle 209.2 →
/// 234.9). With `staircases`, for views whose regions leave the tracers nothing, a
/// staircase competes with whole lines on its miss alone. Returns each group's indices
/// into `blocks` in scan order, or `None` if the blocks do not fit `g` × `slots`.
///
/// An injector's time is its rays' cell steps in its camera region, and views are
/// uneven (sky, near walls, deep corridors): with rectangles of equal size the
/// busiest injector of a frame did 1.6x the median's cell steps.
pub fn balance(
    blocks: &[Block],
    cost: &[u64],
    n: u32,
    g: usize,
    slots: u32,
    staircases: bool,
) -> Option<Vec<Vec<usize>>> {
    if blocks.len() > g.max(1) * slots as usize {
        return None;
    }
    let cutter = Cutter { blocks, cost, n, slots: slots as usize, staircases };
    let mut out = Vec::with_capacity(g);
    cutter.cut((0..blocks.len()).collect(), g.max(1), &mut out);
    Some(out)
}

/// What [`balance`] cuts by.
struct Cutter<'a> {
    blocks: &'a [Block],
    cost: &'a [u64],
    n: u32,
    slots: usize,
    staircases: bool,
}

impl Cutter<'_> {
    /// Cuts `items` (at most `g` × slots) into `g` groups, appended to `out`.
    fn cut(&self, items: Vec<usize>, g: usize, out: &mut Vec<Vec<usize>>) {
        let (blocks, cost, slots) = (self.blocks, self.cost, self.slots);
        if g == 1 || items.len() <= 1 {
            let mut items = items;
            items.sort_by_key(|&i| (blocks[i].1, blocks[i].0));
            out.push(items);
            out.extend(std::iter::repeat_n(Vec::new(), g - 1));
            return;
        }
        let coord =
            |i: usize, axis: usize| if axis == 0 { blocks[i].0 as u32 / self.n } else { blocks[i].1 as u32 / self.n };
        let extent = |axis: usize| {
            let lo = items.iter().map(|&i| coord(i, axis)).min().unwrap_or(0);
            items.iter().map(|&i| coord(i, axis)).max().unwrap_or(0) - lo
        };
        // Either side, whichever cut leaves the dearer side's injectors the least
        // each; the longer side on a tie, so that groups (and their frusta) stay near
        // square.
        let axes = if extent(0) >= extent(1) { [0, 1] } else { [1, 0] };
        let total: u64 = items.iter().map(|&i| cost[i]).sum();
        // The first `left` blocks along the axis (across it within a line) go to the
        // first g1 groups, g1 in proportion to their cost: a cut on whole lines then
        // need not land on the middle, which at a few blocks an injector it rarely
        // could (halving g at every level, the 1 M scene's dearest injector was
        // sampled at 1.56x the median). Best: (partway along a line unless
        // staircases are as good as lines, the dearer side's cost an injector,
        // axis order, left, g1).
        let along = |axis: usize| {
            let mut along = items.clone();
            along.sort_by_key(|&i| (coord(i, axis), coord(i, 1 - axis)));
            along
        };
        let mut best: Option<(bool, Share, usize, usize, usize)> = None;
        for (rank, axis) in axes.into_iter().enumerate() {
            let along = along(axis);
            let mut left_cost = 0u64;
            for left in 1..along.len() {
                left_cost += cost[along[left - 1]];
                let partway = !self.staircases && coord(along[left - 1], axis) == coord(along[left], axis);
                // The injectors the cost gives the left side, rounded down and up.
                let even = (left_cost as u128 * g as u128 / total.max(1) as u128) as usize;
                for g1 in even.clamp(1, g - 1)..=(even + 1).clamp(1, g - 1) {
                    let g2 = g - g1;
                    if left > g1 * slots || along.len() - left > g2 * slots {
                        continue;
                    }
                    let worst = Share::new(left_cost, g1).max(Share::new(total - left_cost, g2));
                    let key = (partway, worst, rank, left, g1);
                    if best.is_none_or(|b| key < b) {
                        best = Some(key);
                    }
                }
            }
        }
        let (_, _, rank, left, g1) = best.expect("blocks within g x slots have a cut within the slots");
        let g2 = g - g1;
        let mut along = along(axes[rank]);
        let right = along.split_off(left);
        self.cut(along, g1, out);
        self.cut(right, g2, out);
    }
}

/// A group's cost under its own camera region and each of its blocks' (what
/// [`refine`] evaluates a move by).
type GroupCost<'a> = dyn Fn(&[usize]) -> (u64, Vec<u64>) + 'a;

/// The cut `members` of `blocks` (n × n squares) with blocks moved from the dearest
/// group to a cheaper neighbouring one while that lowers the dearer of the two, each
/// move's groups costed under the regions they then get (`cost`), no group over
/// `slots` blocks or left empty. `block_cost` is each block's cost under the region
/// of its group in `members` (what `cost` gives them: the cut's rounds costed them
/// already). Returns the dearest group's cost and the groups.
///
/// The cut by lines ([`balance`]) balances costs under the regions of the cut
/// before; under its own the dearest injector of the bicycle scene at SH degree 2
/// was sampled at 1.27 times the mean (1.16 to 1.21 on the costs it cut by) and
/// marched 1.34 times the mean injector's cell steps; refined, 1.22. Moving blocks
/// widens a frustum a little, as a staircase cut does ([`balance`]), but each move
/// is judged by the injectors' costs under their new regions (session 57, modelled
/// ms: degree 2 99.0 → 96.7, degree 1 94.9 → 89.1, the 1 M scene 46.5 → 44.6; the
/// views cam2 and cam3, where hot tracers bind, 111.4 → 112.2 and 91.3 → 94.1).
fn refine(
    members: Vec<Vec<usize>>,
    block_cost: &[u64],
    blocks: &[Block],
    n: u32,
    slots: usize,
    cost: &GroupCost<'_>,
) -> (u64, Vec<Vec<usize>>) {
    let mut group = vec![0usize; blocks.len()];
    for (g, m) in members.iter().enumerate() {
        for &i in m {
            group[i] = g;
        }
    }
    let costs = members
        .iter()
        .map(|m| {
            let own: Vec<u64> = m.iter().map(|&i| block_cost[i]).collect();
            (own.iter().sum(), own)
        })
        .collect();
    let at = blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
    let mut r = Refiner { blocks, n, slots, cost, at, members, group, costs };
    for _ in 0..REFINE_MOVES {
        let Some(a) = (0..r.members.len()).max_by_key(|&g| (r.costs[g].0, std::cmp::Reverse(g))) else { break };
        // Only the dearest: letting its neighbours pass a block on to theirs first,
        // so that it could give them one, evened the injectors further (degree 2:
        // the busiest 85.0 k → 80.4 k cell steps) but widened more frusta, and the
        // frame grew (96.7 → 98.0 ms at the same budgets).
        if !r.give(a) {
            break;
        }
    }
    let Refiner { mut members, costs, .. } = r;
    for m in &mut members {
        m.sort_by_key(|&i| (blocks[i].1, blocks[i].0));
    }
    (costs.iter().map(|c| c.0).max().unwrap_or(0), members)
}

/// [`refine`]'s cut as it goes: each group's blocks, each block's group, and each
/// group's cost (and its blocks').
struct Refiner<'a> {
    blocks: &'a [Block],
    n: u32,
    slots: usize,
    cost: &'a GroupCost<'a>,
    at: std::collections::HashMap<Block, usize>,
    members: Vec<Vec<usize>>,
    group: Vec<usize>,
    costs: Vec<(u64, Vec<u64>)>,
}

impl Refiner<'_> {
    /// The blocks beside block `i`.
    fn neighbours(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        let (x, y, n) = (self.blocks[i].0 as i64, self.blocks[i].1 as i64, self.n as i64);
        [(x - n, y), (x + n, y), (x, y - n), (x, y + n)]
            .into_iter()
            .filter(|&(a, b)| (0..=u16::MAX as i64).contains(&a) && (0..=u16::MAX as i64).contains(&b))
            .filter_map(|(a, b)| self.at.get(&(a as u16, b as u16)).copied())
    }

    /// The groups beside group `a` with room for a block, cheapest first: (cost,
    /// group, indices into `a`'s blocks beside it).
    fn beside(&self, a: usize) -> Vec<(u64, usize, Vec<usize>)> {
        let mut out: Vec<(u64, usize, Vec<usize>)> = Vec::new();
        for (k, &i) in self.members[a].iter().enumerate() {
            for j in self.neighbours(i) {
                let b = self.group[j];
                if b == a || self.members[b].len() >= self.slots {
                    continue;
                }
                match out.iter_mut().find(|e| e.1 == b) {
                    Some(e) if !e.2.contains(&k) => e.2.push(k),
                    Some(_) => {}
                    None => out.push((self.costs[b].0, b, vec![k])),
                }
            }
        }
        out.sort();
        out
    }

    /// Moves one block of group `a` to a cheaper neighbour, the block whose cost is
    /// nearest half their gap and not over it, where both then cost less than `a`
    /// did. Whether it did.
    fn give(&mut self, a: usize) -> bool {
        if self.members[a].len() <= 1 {
            return false;
        }
        for (cb, b, ks) in self.beside(a) {
            let ca = self.costs[a].0;
            if cb >= ca {
                break;
            }
            let half = (ca - cb) / 2;
            let Some(&k) = ks
                .iter()
                .filter(|&&k| self.costs[a].1[k] <= half)
                .max_by_key(|&&k| (self.costs[a].1[k], std::cmp::Reverse(k)))
            else {
                continue;
            };
            let i = self.members[a][k];
            let mut na = self.members[a].clone();
            na.remove(k);
            let mut nb = self.members[b].clone();
            nb.push(i);
            let (ea, eb) = ((self.cost)(&na), (self.cost)(&nb));
            if ea.0.max(eb.0) < ca {
                (self.members[a], self.members[b]) = (na, nb);
                (self.costs[a], self.costs[b]) = (ea, eb);
                self.group[i] = b;
                return true;
            }
        }
        false
    }
}

/// Most blocks [`refine`] moves.
const REFINE_MOVES: usize = 2000;

/// The cut's groups (neighbours in the view next to each other) dealt out to the
/// injectors so that each of a router's workers gets groups from all over the view:
/// a router gives worker w the injector lanes [n·w/6, n·(w+1)/6) whole
/// (lanes.h foam_inject_chunk), and neighbouring parts of the view send their rays
/// to the same routers, so with the groups in cut order one worker of a router
/// under the root classified up to twice the rays of the mean (the 1 M scene).
fn deal_over_workers(members: Vec<Vec<usize>>, workers: usize) -> Vec<Vec<usize>> {
    let n = members.len();
    let chunk = |w: usize| super::tree::worker_lanes(n, w, workers);
    let mut next: Vec<usize> = (0..workers).map(|w| chunk(w).start).collect();
    let mut out = vec![Vec::new(); n];
    let mut w = 0;
    for g in members {
        while next[w] == chunk(w).end {
            w = (w + 1) % workers;
        }
        out[next[w]] = g;
        next[w] += 1;
        w = (w + 1) % workers;
    }
    out
}

/// A side's cost over its injectors, compared exactly.
#[derive(Clone, Copy, Debug)]
struct Share {
    cost: u64,
    injectors: usize,
}

impl Share {
    fn new(cost: u64, injectors: usize) -> Self {
        Share { cost, injectors: injectors.max(1) }
    }
}

impl Ord for Share {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.cost as u128 * o.injectors as u128).cmp(&(o.cost as u128 * self.injectors as u128))
    }
}

impl PartialOrd for Share {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl PartialEq for Share {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o).is_eq()
    }
}

impl Eq for Share {}

/// Cuts of the view [`order`] tries, each on the regions of the one before.
const BALANCE_ROUNDS: usize = 8;

/// An injector's block slots, in even shares of the view's blocks. A cut keeps each
/// side within its injectors' slots, and where the sampled cost gathers in part of
/// the view (the bicycle scene at SH degree 0: sky above, the near ground below)
/// twice the even share forced cuts that missed their share: the dearest injector's
/// sampled cost was 1.53 times the mean with 2, 1.32 with 3 (no better with more).
/// A slot is 4 bytes of the injector's tile.
const SLOTS_PER_SHARE: usize = 3;

/// Pixels between a block's sampled rays, at most. A pixel's cell steps vary widely
/// (grazing rays, sky), so a block's cost wants several: with 4 (one ray in 16
/// pixels, one in a block of 4) the 1 M scene modelled 58.8 ms where 2 gave 53.2,
/// with the cut of `balance` the same. The host samples four times the rays.
const SAMPLE_SPACING: u32 = 2;

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
        // A 24 x 16 view: two rows of three blocks, a row per injector.
        let groups = vec![vec![(0u16, 0u16), (8, 0), (16, 0)], vec![(0, 8), (8, 8), (16, 8)]];
        let cam =
            Camera::look_at(24, 16, 60.0, glam::DVec3::new(0.0, 0.0, -3.0), glam::DVec3::ZERO, glam::DVec3::Y).unwrap();
        let len = |(x, _): (u32, u32)| 1 + (x as usize % 20) / 4;
        let sample = |s: &[(u32, u32)]| {
            s.iter().map(|&p| SampledRay { shards: vec![0u16; len(p)], steps: vec![1; len(p)] }).collect::<Vec<_>>()
        };
        let region = |_: &[Vec<u16>]| vec![0usize];
        let order = order(&groups, Batch::Blocks(8), &cam, &sample, &region, 6);
        // 4 × 4 samples per 8 × 8 block, at x = 1, 3, 5, 7 | 9, .., 15 | 17, .., 23:
        // paths of 1, 1, 2, 2 | 3, 3, 4, 4 | 5, 5, 1, 1 shards; a block goes by its longest.
        assert_eq!(order.blocks[0], vec![(16, 0), (8, 0), (0, 0)]);
        let lens: Vec<usize> = order.paths[0].iter().map(Vec::len).collect();
        let row = |a: usize, b: usize| [a, a, b, b].repeat(4);
        assert_eq!(lens, [row(1, 2), row(3, 4), row(5, 1)].concat());
        // The rows cost the same, and any cut between columns would not: the rows stay.
        assert_eq!(order.blocks[1], vec![(16, 8), (8, 8), (0, 8)]);
        assert_eq!(order.paths_of(1), 1);
        // Each ray costs 6 tenths and 15 a step in the region: 48 rays, 128 steps a
        // row, 2208 tenths for 16 of each block's 64 pixels.
        assert_eq!(order.dearest_steps, 2208 * 64 / 160);
        // Lines share one sample of the whole view.
        let lines = super::order(&groups, Batch::Rows(1), &cam, &sample, &region, 6);
        assert_eq!((lines.paths.len(), lines.paths_of(1)), (1, 0));
        assert_eq!(lines.blocks, groups);
        let bytes = list(&order.blocks[0], 4);
        assert_eq!(bytes.len(), 20);
        assert_eq!(&bytes[..8], &[3, 0, 0, 0, 16, 0, 0, 0]);
    }

    #[test]
    fn the_view_is_cut_by_cost_within_the_slots() {
        // Four blocks in a row, the first as dear as the other three together.
        let row = [(0u16, 0u16), (8, 0), (16, 0), (24, 0)];
        let cost = [30, 10, 10, 10];
        assert_eq!(balance(&row, &cost, 8, 2, 4, false), Some(vec![vec![0], vec![1, 2, 3]]));
        // With room for two blocks an injector, the cut must be even.
        assert_eq!(balance(&row, &cost, 8, 2, 2, false), Some(vec![vec![0, 1], vec![2, 3]]));
        // No cut gives each of two injectors one block of four.
        assert_eq!(balance(&row, &cost, 8, 2, 1, false), None);
        // 3 x 2 blocks, the dear column in the middle, over three injectors: a third
        // of the cost is 4, which no cut reaches; the left column (2) goes to one,
        // and the rest (10) is cut across rows rather than columns (8 and 2).
        let grid = [(0u16, 0u16), (8, 0), (16, 0), (0, 8), (8, 8), (16, 8)];
        let cost = [1, 4, 1, 1, 4, 1];
        let cut = balance(&grid, &cost, 8, 3, 6, false).unwrap();
        let mut sums: Vec<u64> = cut.iter().map(|g| g.iter().map(|&i| cost[i]).sum()).collect();
        sums.sort();
        assert_eq!(sums, vec![2, 5, 5]);
        let mut all: Vec<usize> = cut.concat();
        all.sort();
        assert_eq!(all, (0..6).collect::<Vec<_>>());
        assert!(cut.iter().all(|g| g.windows(2).all(|w| (grid[w[0]].1, grid[w[0]].0) < (grid[w[1]].1, grid[w[1]].0))));
    }

    /// `refine` moves a block from the dearest group to a cheaper neighbour while
    /// that lowers the dearer of the two, never past a group's slots, and keeps
    /// every block in exactly one group.
    #[test]
    fn refine_moves_blocks_off_the_dearest_group_within_the_slots() {
        // 4 x 2 blocks: the left half (10 a block) one group, the right (1) another.
        let grid: Vec<Block> = (0..8u16).map(|i| ((i % 4) * 8, (i / 4) * 8)).collect();
        let dear = |i: usize| if grid[i].0 < 16 { 10u64 } else { 1 };
        let cost = |g: &[usize]| {
            let c: Vec<u64> = g.iter().map(|&i| dear(i)).collect();
            (c.iter().sum::<u64>(), c)
        };
        let cut = vec![vec![0, 1, 4, 5], vec![2, 3, 6, 7]];
        // One block of 10 over (40 - 4) / 2 = 18 moves; then none is under 8.
        let each: Vec<u64> = (0..8).map(dear).collect();
        let (dearest, out) = refine(cut.clone(), &each, &grid, 8, 5, &cost);
        assert_eq!(dearest, 30);
        assert_eq!(out.iter().map(Vec::len).collect::<Vec<_>>(), vec![3, 5]);
        let mut all = out.concat();
        all.sort();
        assert_eq!(all, (0..8).collect::<Vec<_>>());
        // The moved block is beside the group it joined (block 1 or 5), and groups
        // stay in scan order.
        assert!(out[1].contains(&1) || out[1].contains(&5), "{out:?}");
        assert!(out.iter().all(|g| g.windows(2).all(|w| (grid[w[0]].1, grid[w[0]].0) < (grid[w[1]].1, grid[w[1]].0))));
        // With four slots a group, the cheap one is full: nothing moves.
        assert_eq!(refine(cut.clone(), &each, &grid, 8, 4, &cost), (40, cut));
    }

    /// A VGA view at 256 injectors with its left quarter ten times as dear: the plan's
    /// cut must move blocks off the dear injectors, within the slots it sized.
    #[test]
    fn a_vga_view_with_a_dear_quarter_is_balanced_over_256_injectors() {
        let (w, h, batch) = (640, 480, Batch::Blocks(8));
        let groups = groups(batch, w, h, 256);
        let cam =
            Camera::look_at(w, h, 60.0, glam::DVec3::new(0.0, 0.0, -3.0), glam::DVec3::ZERO, glam::DVec3::Y).unwrap();
        let steps = |(x, _): (u32, u32)| if x < w / 4 { 10 } else { 1 };
        let sample = |s: &[(u32, u32)]| {
            s.iter().map(|&p| SampledRay { shards: vec![0], steps: vec![steps(p)] }).collect::<Vec<_>>()
        };
        let slots = super::slots(batch, &groups);
        assert_eq!(slots, 57, "three even shares of 4800 blocks over 256 injectors (19 each, rounded up)");
        let order = order(&groups, batch, &cam, &sample, &|_: &[Vec<u16>]| vec![0usize], slots);
        // Even rectangles: an injector inside the dear quarter, 20 blocks of 64 pixels
        // at 10 steps (+ 0.6 a ray, 0.5 a visit).
        let even = 20 * 64 * 111 / 10;
        assert!(order.blocks.iter().all(|b| b.len() <= slots as usize));
        assert!(order.dearest_steps < even * 2 / 3, "dearest {} of the even cut's {even}", order.dearest_steps);
    }

    #[test]
    fn neighbouring_groups_go_to_different_router_workers() {
        // 512 groups in cut order over six workers' chunks of 85 or 86 lanes.
        let n = 512;
        let dealt = deal_over_workers((0..n).map(|g| vec![g]).collect(), 6);
        let mut seen: Vec<usize> = dealt.iter().flatten().copied().collect();
        seen.sort();
        assert_eq!(seen, (0..n).collect::<Vec<_>>(), "every group to one injector");
        let worker = |lane: usize| (0..6).find(|&w| lane < n * (w + 1) / 6).unwrap();
        let mut lane_of = vec![0; n];
        for (lane, g) in dealt.iter().enumerate() {
            lane_of[g[0]] = lane;
        }
        // Six neighbours in cut order go to six workers, up to where a chunk is full.
        for g in (0..480).step_by(6) {
            let mut ws: Vec<usize> = (g..g + 6).map(|g| worker(lane_of[g])).collect();
            ws.sort();
            assert_eq!(ws, (0..6).collect::<Vec<_>>(), "groups {g}..{}", g + 6);
        }
        // Fewer groups than workers: each its own lane.
        assert_eq!(deal_over_workers(vec![vec![1], vec![2]], 6), vec![vec![1], vec![2]]);
    }

    #[test]
    fn a_cut_ends_partway_along_a_line_only_where_no_whole_line_fits_the_slots() {
        // 7 rows of 21 blocks, 147 in all, over four injectors of 38 slots: two halves
        // of at most 76 would take 70 or 77 blocks by columns and 63 or 84 by rows,
        // so no cut along whole lines keeps within the slots (garden at 256 injectors
        // met this, and lost its whole balanced cut).
        let grid: Vec<Block> = (0..7u16).flat_map(|y| (0..21u16).map(move |x| (8 * x, 8 * y))).collect();
        let cost = vec![1u64; grid.len()];
        let cut = balance(&grid, &cost, 8, 4, 38, false).expect("a staircase cut fits");
        // Within its slots each, and near even (the halves' own cuts keep to whole lines).
        let mut sizes: Vec<usize> = cut.iter().map(Vec::len).collect();
        sizes.sort();
        assert_eq!(sizes, vec![35, 37, 37, 38]);
        let mut all: Vec<usize> = cut.concat();
        all.sort();
        assert_eq!(all, (0..grid.len()).collect::<Vec<_>>(), "every block in one group");
        // A staircase: some group holds part of a column and not all of it.
        let columns = |g: &Vec<usize>| g.iter().map(|&i| grid[i].0).collect::<std::collections::BTreeSet<_>>();
        assert!(cut.iter().any(|g| columns(g).iter().any(|&x| g.iter().filter(|&&i| grid[i].0 == x).count() < 7)));
        // Where the regions leave the tracers nothing, a staircase may win on its miss alone.
        let cut = balance(&grid, &cost, 8, 4, 38, true).unwrap();
        let mut sizes: Vec<usize> = cut.iter().map(Vec::len).collect();
        sizes.sort();
        assert_eq!(sizes, vec![36, 37, 37, 37]);
        // With room for whole lines, cuts keep to them: 4 x 2 blocks, two of four slots
        // each, are cut between whole columns or rows, never partway.
        let small: Vec<Block> = (0..2u16).flat_map(|y| (0..4u16).map(move |x| (8 * x, 8 * y))).collect();
        let cut = balance(&small, &[1; 8], 8, 2, 4, false).unwrap();
        assert_eq!(cut, vec![vec![0, 1, 4, 5], vec![2, 3, 6, 7]], "the longer side is cut, on a whole column");
    }
}
