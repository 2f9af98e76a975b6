//! What a user can choose about the device run, with the defaults of the paper
//! (rc 20, half payload, one row per batch).

use partition::RayLayout;

/// Where the graph runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The project's host runtime of the Poplar API (every machine here).
    Host,
    /// A real IPU through the Poplar SDK (needs a build with `--features poplar`).
    Ipu,
}

/// Scan order and size of the generator's primary-ray batches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    pub columns: bool,
    pub lines: u32,
}

impl Default for Batch {
    fn default() -> Self {
        Batch { columns: false, lines: 1 }
    }
}

impl std::str::FromStr for Batch {
    type Err = String;

    /// `rows:N` or `cols:N`.
    fn from_str(s: &str) -> Result<Batch, String> {
        let (kind, n) = s.split_once(':').ok_or_else(|| format!("batch '{s}' must be rows:N or cols:N"))?;
        let columns = match kind {
            "rows" => false,
            "cols" | "columns" => true,
            _ => return Err(format!("batch '{s}' must be rows:N or cols:N")),
        };
        let lines: u32 = n.parse().map_err(|_| format!("batch '{s}': N must be a whole number"))?;
        if lines == 0 {
            return Err(format!("batch '{s}': N must be at least 1"));
        }
        Ok(Batch { columns, lines })
    }
}

impl std::fmt::Display for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", if self.columns { "cols" } else { "rows" }, self.lines)
    }
}

#[derive(Clone, Debug)]
pub struct DeviceOptions {
    pub backend: Backend,
    pub layout: RayLayout,
    /// Carry per-ray hop counters (+4 B per payload) for hop maps.
    pub hops: bool,
    /// Compute/exchange iterations per host call.
    pub rc: u32,
    pub batch: Batch,
    /// Idle iterations between batches.
    pub drain_iters: u32,
    /// Rays per link buffer (each direction of each tree edge).
    pub link_capacity: u32,
    /// Rays a tracer can hold waiting for upward credit.
    pub tracer_queue: u32,
    /// Rays per router queue (up and down each; double-buffered on the tile).
    /// `None` fills the router tile.
    pub router_queue: Option<u32>,
    /// Rays the generator's spill store holds; also the in-flight cap. `None` fills
    /// the generator tile.
    pub spill: Option<u32>,
    /// Stop a ray once its transmittance is at or below this.
    pub t_stop: f32,
    /// Tiles of the target (1472 per Mk2 IPU).
    pub tiles: u32,
    /// Host calls without any progress before the frame is declared stuck.
    pub stall_calls: u32,
}

/// Bytes a tile keeps for what is not a ray buffer (vertex state, code, small
/// tensors) when buffers are sized to fill it.
pub const TILE_RESERVE_BYTES: u32 = 32 * 1024;

impl DeviceOptions {
    /// The spill capacity: as given, or as many rays as fit the generator tile
    /// beside its two link buffers and its copy of the start shard (the largest
    /// shard), in whole multiples of 256.
    pub fn spill_capacity(&self, ray_bytes: u32, tile_bytes: u32, largest_shard: u32) -> u32 {
        self.spill.unwrap_or_else(|| {
            let links = 2 * (16 + self.link_capacity * ray_bytes);
            let free = tile_bytes.saturating_sub(TILE_RESERVE_BYTES + links + largest_shard);
            (free / ray_bytes) / 256 * 256
        })
    }
}

impl DeviceOptions {
    /// Router queue capacity: as given, or what fills a router tile beside its ten
    /// link buffers (four queues: up and down, each double-buffered), in multiples of 256.
    pub fn router_queue_capacity(&self, ray_bytes: u32, tile_bytes: u32) -> u32 {
        self.router_queue.unwrap_or_else(|| {
            let links = 2 * (FOAM_MAX_LANES) * (16 + self.link_capacity * ray_bytes);
            let free = tile_bytes.saturating_sub(TILE_RESERVE_BYTES + links);
            (free / (4 * ray_bytes)) / 256 * 256
        })
    }
}

/// Lanes of the widest router: four children and the parent.
const FOAM_MAX_LANES: u32 = partition::layout::FOAM_MAX_FANOUT + 1;

impl Default for DeviceOptions {
    fn default() -> Self {
        DeviceOptions {
            backend: Backend::Host,
            layout: RayLayout::Half,
            hops: false,
            rc: 20,
            batch: Batch::default(),
            drain_iters: 0,
            link_capacity: 512,
            tracer_queue: 2048,
            router_queue: None,
            spill: None,
            t_stop: 0.001,
            tiles: 1472,
            stall_calls: 200,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `foam-ipu partition` judges tiles with its default ray slots; that verdict must
    /// be conservative for the device's real tracer buffers (inbox, outbox, pending).
    #[test]
    fn partition_footprint_covers_the_tracer_buffers() {
        let o = DeviceOptions::default();
        assert!(2 * o.link_capacity + o.tracer_queue <= partition::FootprintParams::DEFAULT_TRACER_RAY_SLOTS);
    }

    #[test]
    fn auto_sizes_fill_but_fit_the_tile() {
        let o = DeviceOptions::default();
        for rb in [20, 24, 28, 32] {
            let q = o.router_queue_capacity(rb, 638_976);
            let bytes = 10 * (16 + o.link_capacity * rb) + 4 * q * rb;
            assert!(q >= 2048 && bytes + TILE_RESERVE_BYTES <= 638_976, "ray {rb} B: queue {q}, {bytes} B");
            let s = o.spill_capacity(rb, 638_976, 100_000);
            assert!(s >= 4096 && 2 * (16 + o.link_capacity * rb) + s * rb + 100_000 <= 638_976);
        }
        assert!("cols:2".parse::<Batch>().unwrap().columns);
        assert!("rows:0".parse::<Batch>().is_err());
    }
}
