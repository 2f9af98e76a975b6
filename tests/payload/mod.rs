//! What the device must compute for a ray, as an oracle independent of the codelets:
//! the reference tracer's walk (`Tracer::walk`: the same cells, the same exit
//! distances) with the original renderer's compositing written out here, and the
//! payload's rounding wherever the ray changes shard. A ray crosses from one shard to
//! the next only through its payload (layout.h), so the mixed layout rounds `t` and `T`
//! to half there and the half layout also its colour and depth; fp32 rounds nothing
//! and is the reference itself. Where the rounding moves the 50 % transmittance point
//! to another cell, the device's depth follows this, not the unrounded reference.
#![allow(dead_code)]

use foam_ipu::reference::Tracer;
use partition::RayLayout;

/// Half precision as the payload stores it: round to nearest even, saturating at the
/// largest half (foam/half.h foam_f2h).
pub fn half(x: f32) -> f32 {
    half::f16::from_f32(x.clamp(-65504.0, 65504.0)).to_f32()
}

/// A ray's state between cells, in working precision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct State {
    /// The cell entered next (meaningless once finished).
    pub cell: u32,
    pub t: f32,
    pub tt: f32,
    pub rgb: [f32; 3],
    /// < 0 until the 50 % quantile is crossed.
    pub depth: f32,
    /// Cells marched so far (the hull cell counts).
    pub steps: u32,
    pub finished: bool,
}

impl State {
    pub fn start(cell: u32) -> State {
        State { cell, t: 0.0, tt: 1.0, rgb: [0.0; 3], depth: -1.0, steps: 0, finished: false }
    }

    /// The state after a store into a `layout` payload and a load from it.
    pub fn through(mut self, layout: RayLayout) -> State {
        if layout != RayLayout::Fp32 {
            self.t = half(self.t);
            self.tt = half(self.tt);
        }
        if layout == RayLayout::Half {
            self.rgb = self.rgb.map(half);
            self.depth = half(self.depth);
        } else {
            self.depth = -1.0; // only the half payload carries depth
        }
        self
    }
}

/// The states of a ray from `start` along `origin + t·dir`: `states[k]` after k cells,
/// in working precision (a payload round trip at each change of shard, `owner` of a
/// cell, already applied), up to where it finishes (T ≤ `t_stop`, out of the scene, or
/// 1024 cells). `None` if the walk skips a cell (an exit no further than the entry:
/// the ray grazes an edge), where the oracle cannot tell where the device rounds.
pub fn states(
    tracer: &Tracer,
    owner: &dyn Fn(u32) -> usize,
    start: u32,
    origin: glam::Vec3,
    dir: glam::Vec3,
    t_stop: f32,
    layout: RayLayout,
) -> Option<Vec<State>> {
    let scene = tracer.scene;
    let mut s = State::start(start);
    let mut out = vec![s];
    let mut previous: Option<u32> = None;
    let steps = tracer.walk(start, origin, dir, 0.0, 1024, |cell, _, t1| {
        if previous.is_some_and(|p| owner(p) != owner(cell)) {
            s = s.through(layout);
        }
        if let Some(last) = out.last_mut() {
            last.cell = cell;
        }
        previous = Some(cell);
        if t1 > s.t {
            let sigma = scene.density[cell as usize];
            let alpha = 1.0 - (-sigma * (t1 - s.t)).exp();
            let w = s.tt * alpha;
            if sigma > 1e-6 {
                for (acc, &c) in s.rgb.iter_mut().zip(&scene.color[cell as usize]) {
                    *acc += w * (c as f32 / 255.0);
                }
            }
            let next = s.tt * (1.0 - alpha);
            // An empty cell has no 50 % point in it (a payload without depth may
            // arrive below the quantile with depth unset).
            if s.depth < 0.0 && next < 0.5 && sigma > 0.0 {
                s.depth = s.t + (s.tt / 0.5).ln() / sigma;
            }
            s.tt = next;
            s.t = t1;
        }
        s.steps += 1;
        s.cell = u32::MAX; // the next segment names it
        s.finished = s.tt <= t_stop || s.steps >= 1024;
        out.push(s);
        !s.finished
    });
    // The walk counts every cell, the segments only those it composited; they differ
    // by a final hull cell at most.
    if s.steps + u32::from(!s.finished) != steps || out[0].cell != start {
        return None;
    }
    if !s.finished {
        s.steps += 1; // the hull cell: no segment, the ray leaves the scene
        s.finished = true;
        out.push(s);
    }
    Some(out)
}

/// What a finished ray leaves in its pixel: colour, opacity and depth after its last
/// payload round trip.
pub fn pixel(s: &State, layout: RayLayout) -> ([f32; 3], f32, f32) {
    let p = s.through(layout);
    (p.rgb, 1.0 - p.tt, if p.depth >= 0.0 { p.depth } else { -1.0 })
}
