//! The device flags `render` and `bench` share: what a user chooses about a run
//! (how the scene is cut, the payload, the schedule, the backend) as flags, and the
//! buffer and topology knobs the plan sizes itself behind `--tune` ([`super::tune`]).

use anyhow::Result;

use crate::device::tree::MAX_IPUS;
use crate::device::{Backend, Batch, DeviceOptions, ShChoice};
use crate::scene::Scene;
use partition::RayLayout;

#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "Device")]
pub struct DeviceArgs {
    /// Scene shards = tracer tiles per IPU (a power of two; 1024 is the paper's), or
    /// auto: 512 on one IPU where the scene's mean shard then takes at most 40 % of a
    /// tile's room (the tiles it frees go to injectors and replicas), else 1024.
    #[arg(long, default_value = "auto", value_parser = parse_shards, value_name = "N|auto")]
    pub shards: ShardsArg,
    /// IPUs the graph spans (1, 2, 4, 8 or 16; --shards on each), or auto: the fewest
    /// that hold the scene (at --sh-degree D if one is given).
    #[arg(long, default_value = "1", value_parser = parse_ipus, value_name = "N|auto")]
    pub ipus: IpusArg,
    /// Ray payload: half (20 B, default), mixed (24 B) or fp32 (28 B).
    #[arg(long, default_value = "half", value_parser = parse_layout, value_name = "half|mixed|fp32")]
    pub layout: RayLayout,
    /// Compute/exchange iterations per host call (the paper's repeat count).
    #[arg(long, default_value_t = DeviceOptions::default().rc, value_name = "N")]
    pub rc: u32,
    /// Iterations after which an unfinished frame is given up with an error. Checked
    /// after each host call, so it stops at the first multiple of --rc at or past N.
    #[arg(long, default_value_t = DeviceOptions::default().max_iterations, value_name = "N")]
    pub max_iterations: u32,
    /// Primary-ray batches: blocks:N (N×N squares, each injector its own part of the
    /// view, longest sampled paths first) or the paper's rows:N / cols:N lines in scan
    /// order. Default blocks:8, or blocks:4 where --shards auto gives the injectors
    /// every router lane (512 injectors).
    #[arg(long, value_name = "blocks:N|rows:N|cols:N")]
    pub batch: Option<Batch>,
    /// Where the graph runs.
    #[arg(long, value_enum, default_value = "host")]
    pub backend: Backend,
    /// SH degree of the colour the tracers hold and evaluate: auto (the highest up to
    /// the scene's for which every tile fits) or 0 to 3. Binary16 coefficients, f32
    /// with --layout fp32.
    #[arg(long, default_value = "auto", value_parser = parse_sh_degree, value_name = "auto|0|1|2|3")]
    pub sh_degree: ShDegreeArg,
    /// Set a buffer or topology knob (repeatable; --help lists the keys).
    #[arg(long, value_name = "KEY=VALUE", long_help = super::tune::help())]
    pub tune: Vec<String>,
}

/// `--sh-degree`: `None` for auto.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShDegreeArg(pub Option<u8>);

pub fn parse_sh_degree(s: &str) -> Result<ShDegreeArg, String> {
    match s {
        "auto" => Ok(ShDegreeArg(None)),
        "0" | "1" | "2" | "3" => Ok(ShDegreeArg(s.parse().ok())),
        _ => Err(format!("unknown SH degree '{s}' (auto, 0, 1, 2 or 3)")),
    }
}

/// `--shards`: `None` for auto.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShardsArg(pub Option<u64>);

pub fn parse_shards(s: &str) -> Result<ShardsArg, String> {
    match s {
        "auto" => Ok(ShardsArg(None)),
        _ => s
            .parse::<u64>()
            .map(|n| ShardsArg(Some(n)))
            .map_err(|_| format!("unknown shard count '{s}' (a power of two, or auto)")),
    }
}

/// `--ipus`: `None` for auto.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpusArg(pub Option<u32>);

pub fn parse_ipus(s: &str) -> Result<IpusArg, String> {
    match s {
        "auto" => Ok(IpusArg(None)),
        _ => match s.parse::<u32>() {
            Ok(n) if n.is_power_of_two() && n <= MAX_IPUS => Ok(IpusArg(Some(n))),
            _ => Err(format!("unknown IPU count '{s}' (1, 2, 4, 8, 16 or auto)")),
        },
    }
}

/// The IPU counts `--ipus auto` tries, fewest first.
pub fn ipu_counts() -> impl Iterator<Item = u32> {
    (0..=MAX_IPUS.trailing_zeros()).map(|k| 1 << k)
}

pub fn parse_layout(s: &str) -> Result<RayLayout, String> {
    match s {
        "half" => Ok(RayLayout::Half),
        "mixed" => Ok(RayLayout::Mixed),
        "fp32" => Ok(RayLayout::Fp32),
        _ => Err(format!("unknown layout '{s}' (half, mixed or fp32)")),
    }
}

impl DeviceArgs {
    /// The options these flags choose, `--tune` applied, checked within their
    /// bounds (cheap: before any work).
    pub fn options(&self) -> Result<DeviceOptions> {
        let chosen = DeviceOptions {
            backend: self.backend,
            layout: self.layout,
            rc: self.rc,
            max_iterations: self.max_iterations,
            batch: self.batch.unwrap_or_default(),
            sh_degree: self.sh_degree.0,
            ipus: self.ipus.0.unwrap_or(1),
            ..DeviceOptions::default()
        };
        let o = super::tune::apply(chosen, &self.tune)?;
        o.check_bounds().map_err(anyhow::Error::msg)?;
        Ok(o)
    }
}

impl DeviceArgs {
    /// Fixes `options.ipus` (for `--ipus auto` the fewest IPUs whose shards fit, said
    /// on stderr) and the SH degree the scene is cut at there; returns the shards of
    /// all IPUs (`--shards` on each) and that degree.
    pub fn resolve_ipus(
        &self,
        scene: &Scene,
        options: &mut DeviceOptions,
        width: u32,
        height: u32,
    ) -> Result<(u64, ShChoice)> {
        let fit = |o: &mut DeviceOptions| {
            let shards = self.shards_for(scene, o, width, height);
            let steps = crate::cmd::progress::Steps::new();
            let sh = crate::device::resolve_sh_degree(scene, shards, o, width, height, &steps);
            steps.finish();
            sh.map(|sh| (shards, sh))
        };
        if self.ipus.0.is_some() {
            return Ok(fit(options)?);
        }
        let mut last = None;
        for n in ipu_counts() {
            let mut o = DeviceOptions { ipus: n, ..options.clone() };
            match fit(&mut o) {
                Ok((shards, sh)) => {
                    eprintln!(
                        "--ipus auto: the scene fits on {n} IPU{} ({shards} shards, SH degree {})",
                        if n == 1 { "" } else { "s" },
                        sh.degree
                    );
                    *options = o;
                    return Ok((shards, sh));
                }
                Err(e) => last = Some(e),
            }
        }
        let e = last.expect("at least one IPU count is tried");
        let each = self.shards.0.unwrap_or(crate::device::plan::SHARDS);
        anyhow::bail!("--ipus auto: the scene does not fit {MAX_IPUS} IPUs of {each} shards each: {e}")
    }

    /// The shards of all IPUs for a plan to cut (which chooses the SH degree itself):
    /// [`resolve_ipus`](Self::resolve_ipus) only when the IPU count is auto.
    pub fn shards_on_ipus(&self, scene: &Scene, options: &mut DeviceOptions, width: u32, height: u32) -> Result<u64> {
        match self.ipus.0 {
            Some(_) => Ok(self.shards_for(scene, options, width, height)),
            None => Ok(self.resolve_ipus(scene, options, width, height)?.0),
        }
    }

    /// The shards of all `options.ipus` IPUs: `--shards` on each, or left to the plan
    /// ([`crate::device::auto_shards`]; bench and the stats say how many).
    ///
    /// Where auto takes [`FEW_SHARDS`](crate::device::plan::FEW_SHARDS), the injectors
    /// may take every lane the routers have (unless `--tune injectors` says
    /// otherwise): half the tracers leave the tiles for them, and the injectors bind
    /// such a scene's frame. On 1024 shards the default stays 256: more took the
    /// 4.2 M bicycle scene at SH degree 0 (cut by load, all 374 free tiles to
    /// injectors) from 89.0 to 114.0 ms, its tracers then binding the frame, though
    /// the 2.1 M bicycle preset went from 103.3 to 77.3 ms.
    pub fn shards_for(&self, scene: &Scene, options: &mut DeviceOptions, width: u32, height: u32) -> u64 {
        if let Some(n) = self.shards.0 {
            return n.saturating_mul(options.ipus as u64);
        }
        let steps = crate::cmd::progress::Steps::new();
        let shards = crate::device::auto_shards(scene, options, width, height, &steps);
        steps.finish();
        if shards == crate::device::plan::FEW_SHARDS && !super::tune::tuned(&self.tune, "injectors") {
            options.injectors = foam_layout::FOAM_MAX_INJECTORS;
            if self.batch.is_none() {
                options.batch = Batch::FINE;
            }
        }
        shards
    }
}
