//! `--tune KEY=VALUE`: the buffer and topology knobs of the device run, one table
//! that sets them, checks them and documents them (in `--help` and, through
//! [`markdown`], in the README, which a test holds to this table).
//!
//! A key left out takes its default: a fixed number, or what the plan sizes to the
//! scene, the camera and the tile (shard copies and result stores are planned up to
//! and from theirs). A key given fixes that value: in particular the
//! tracer links are sized to the camera only while neither `link_capacity` nor
//! `side_capacity` is tuned, because sizing shares one expected load between the
//! two, so fixing either leaves nothing to share (and a user who fixes a link size
//! means that size, not a ceiling for the plan to size under).

use anyhow::{Result, bail};

use crate::device::DeviceOptions;
use crate::device::options::{MAX_BUFFER_RAYS, MAX_ITERATIONS, TILE_BYTES};

/// One knob: its name, the numbers it takes, its default and what it sets.
pub struct Key {
    pub name: &'static str,
    /// `N` for one number, `N,..` for a list (one number per tree level).
    pub value: &'static str,
    min: u32,
    max: u32,
    /// Numbers must be powers of two (router fanouts).
    power_of_two: bool,
    /// The default when the plan does not size it; `None`: planned (see `planned`).
    fixed: Option<fn(&DeviceOptions) -> String>,
    planned: &'static str,
    pub doc: &'static str,
    set: fn(&mut DeviceOptions, &[u32]),
}

impl Key {
    fn is_list(&self) -> bool {
        self.value.ends_with(",..")
    }

    /// The default as the table shows it.
    pub fn default_text(&self) -> String {
        match self.fixed {
            Some(f) => f(&DeviceOptions::default()),
            None => self.planned.to_string(),
        }
    }

    fn range_text(&self) -> String {
        if self.power_of_two {
            format!("powers of two from {} to {}", self.min, self.max)
        } else {
            format!("{} to {}", self.min, self.max)
        }
    }
}

fn count(v: &[u32]) -> u32 {
    v[0]
}

fn list(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(",")
}

/// The highest tile count a target may give: 64 Mk2 IPUs.
const MAX_TILES: u32 = 64 * 1472;

/// What most keys are: one number of rays from 0 to [`MAX_BUFFER_RAYS`], its
/// default planned.
const ONE_NUMBER: Key = Key {
    name: "",
    value: "N",
    min: 0,
    max: MAX_BUFFER_RAYS,
    power_of_two: false,
    fixed: None,
    planned: "",
    doc: "",
    set: |_, _| {},
};

/// Every key, in the order the table lists them: the tree's shape, its lanes, the
/// tracers' links and stores, the other tiles' stores, the schedule.
pub const KEYS: &[Key] = &[
    Key {
        name: "tiles",
        min: 1,
        max: MAX_TILES,
        fixed: Some(|o| o.tiles.to_string()),
        doc: "Tiles per IPU of the target (1472 on a Mk2); the tiles the tree leaves free split the heaviest shards in two.",
        set: |o, v| o.tiles = count(v),
        ..ONE_NUMBER
    },
    Key {
        name: "fanout",
        value: "F,..",
        min: 2,
        max: foam_layout::FOAM_MAX_FANOUT,
        power_of_two: true,
        fixed: Some(|o| list(&o.fanout)),
        doc: "Router children per tree level from the tracers up; the last repeats and the top router takes the shard bits left (4 is the paper's quadtree). On several IPUs the default takes as few levels as 16-wide routers allow (2048 shards: 16,8,16).",
        set: |o, v| o.fanout = v.to_vec(),
        ..ONE_NUMBER
    },
    Key {
        name: "injectors",
        min: 1,
        max: foam_layout::FOAM_MAX_INJECTORS,
        fixed: Some(|o| o.injectors.to_string()),
        doc: "Injector tiles emitting primary rays, each on a lane of the root of its own; at most: on one IPU the injectors get the share of the free tiles that the camera's sample says their regions march (the rest goes to replicas of hot shards), as far as the target has tiles and the root room for their lanes; bench prints how many. Left to the plan, 256, or 512 where --shards auto takes 512 shards. Leaves split to fit a scene keep the tiles of 32 first.",
        set: |o, v| o.injectors = count(v),
        ..ONE_NUMBER
    },
    Key {
        name: "inject_capacity",
        min: 1,
        planned: "2048 / injectors in multiples of 16 (8 from 129 injectors on), at most 128 (16 with 81, 8 with 256 and 512)",
        doc: "Rays per injector-lane buffer to the root. The exchange copies every lane whole each iteration and the root takes them all in, so they are narrow; the queue behind paces emission (injector_queue). Left to the plan, more than 16 injectors share the 16 lanes' rays (in multiples of 16, or 8 where the share is less), so that the root keeps its room for queues and the exchange stays narrow: an injector emits a few rays an iteration.",
        set: |o, v| o.inject_capacity = Some(count(v)),
        ..ONE_NUMBER
    },
    Key {
        name: "injector_queue",
        min: 1,
        max: 65535,
        planned: "inject_capacity if given, else 12288 / injectors, at most 384, at least 32 (48 with 256)",
        doc: "Rays each injector holds emitted and not yet dealt out to its lanes: what the root lets it emit per iteration, at most.",
        set: |o, v| o.injector_queue = Some(count(v)),
        ..ONE_NUMBER
    },
    Key {
        name: "direct_capacity",
        planned: "2048 / injectors in multiples of 16 (8 with 129 to 256 injectors, 4 beyond), at most 128 (16 with 81, 8 with 256, 4 with 512)",
        doc: "Rays per buffer of each injector's direct lanes to routers under the root (see direct_share), which carry primary rays past the root (0: no direct lanes). Left to the plan, more than 16 injectors share the 16 lanes' rays into each router (in multiples of 16, 8 where the share is 8 to 15, or 4 beyond 256 injectors: each direct lane carries a part of an injector's rays).",
        set: |o, v| o.direct_capacity = Some(count(v)),
        ..ONE_NUMBER
    },
    Key {
        name: "direct_share",
        max: 100,
        fixed: Some(|o| o.direct_share.to_string()),
        doc: "Percent of an injector's sampled rays that must head for a router under the root (in some view) for the injector to keep a direct lane to it; its other rays take its lane to the root. 0: a direct lane to every router under the root.",
        set: |o, v| o.direct_share = count(v),
        ..ONE_NUMBER
    },
    Key {
        name: "link_capacity",
        value: "N,..",
        min: 1,
        planned: "256,384,256 (half payload; the same bytes for the others), tracer edges sized to the camera",
        doc: "Rays per tree-link buffer by level: tracer edges, then the edges above each router level; the last repeats up to the spill store. Fixes the tracer links' sizes (no sizing to the camera).",
        set: |o, v| o.link_capacity = v.to_vec(),
        ..ONE_NUMBER
    },
    Key {
        name: "side_links",
        max: foam_layout::FOAM_MAX_SIDES,
        fixed: Some(|o| o.side_links.to_string()),
        doc: "Side links per tracer: direct edges to the neighbouring shards the camera's sampled rays cross into most (by shared faces when the links are tuned); 0: every ray takes the tree.",
        set: |o, v| o.side_links = count(v),
        ..ONE_NUMBER
    },
    Key {
        name: "side_capacity",
        min: 1,
        planned: "32, sized to the camera with the tracer edges",
        doc: "Rays per side-link buffer, each direction. Fixes the tracer links' sizes (no sizing to the camera).",
        set: |o, v| o.side_capacity = count(v),
        ..ONE_NUMBER
    },
    Key {
        name: "copies",
        max: foam_layout::FOAM_REGION_MAX_SHARDS,
        fixed: Some(|o| o.copies.to_string()),
        doc: "Most copies of neighbouring shards a tracer holds to march rays on through without the routers; chosen from the camera's sampled rays, as many as fit the tile (0: none).",
        set: |o, v| o.copies = count(v),
        ..ONE_NUMBER
    },
    Key {
        name: "replicas",
        fixed: Some(|o| o.replicas.to_string()),
        doc: "Hot shards get replicas on the tiles the tree leaves free (2 to 16 tiles holding the shard; a ray goes to the tile its pixel picks) until no tile's share of the camera's sampled load (its cell steps, and 5 for each ray it takes in) is over this many times the mean tracer's, as far as the free tiles go (0: none).",
        set: |o, v| o.replicas = count(v),
        ..ONE_NUMBER
    },
    Key {
        name: "replica_lanes",
        max: foam_layout::FOAM_MAX_LANES,
        planned: "32 on one IPU where the camera regions march under 55 % of the sampled steps (after any cut by load), else 0",
        doc: "A hot shard's replicas hang on lanes of its tracer's router, after its children, a tile each, up to this many child lanes a router (at most 32); 0: under a router of their own in the tracer's place (a tile more a shard, a router hop more a ray). The image is the same.",
        set: |o, v| o.replica_lanes = Some(count(v)),
        ..ONE_NUMBER
    },
    Key {
        name: "load_cut",
        max: 100,
        planned: "95 where the camera regions march under 60 % of the sampled steps, on one IPU (with lean tracers where the heaviest shard leaves under a fifth of its tile's room: lean_queue); else none",
        doc: "Percent of a tile's room for its shard that the scene's cells nobody looks at may fill when the plan cuts the scene again so that the cell steps of the camera's sampled rays balance over the tracers (shards where the rays gather get fewer cells; the injectors then keep all the free tiles). The cut by bytes stays where the new one does not fit (0: never).",
        set: |o, v| o.load_cut = Some(count(v)),
        ..ONE_NUMBER
    },
    Key {
        name: "results",
        fixed: Some(|o| o.results.to_string()),
        doc: "Finished rays a tracer keeps where they finish instead of sending them to their pixel's home tracer, split over its six workers; grown where the sampled rays end and the tile has room, and where the camera's sample expects fewer to end, what it expects (at least 8 a worker): the host reads every store whole after each frame (0: all go home).",
        set: |o, v| o.results = count(v),
        ..ONE_NUMBER
    },
    Key {
        name: "idle_credit",
        max: u16::MAX as u32,
        fixed: Some(|o| o.idle_credit.to_string()),
        doc: "Rays of upward credit a router grants each child beyond what the child asked for, while its queue has room for that on every child: a quiet child's ray goes up in the step it arrives instead of two steps later (0: only what was asked).",
        set: |o, v| o.idle_credit = count(v),
        ..ONE_NUMBER
    },
    Key {
        name: "tracer_queue",
        min: 1,
        fixed: Some(|o| o.tracer_queue.to_string()),
        doc: "Rays a tracer holds while it waits for credit to send them up.",
        set: |o, v| o.tracer_queue = count(v),
        ..ONE_NUMBER
    },
    Key {
        name: "lean_queue",
        min: 1,
        planned: "256 where the camera regions march under 60 % of the sampled steps but the heaviest shard leaves under a fifth of its tile's room, on one IPU, with load_cut not tuned (the scene is then cut by load at 95 %); else none",
        doc: "Cut by load with lean tracers: the shards nobody looks at get the room of a tracer whose pending store holds this many rays and whose result store one ray per worker; every tracer's pending store then takes what its tile has left, up to tracer_queue, its result store what the camera's sampled rays end there, and the injectors the camera regions' share of the free tiles after the cut. For scenes the cut by bytes leaves nearly full (the bicycle scene at SH degree 1 and 2).",
        set: |o, v| o.lean_queue = Some(count(v)),
        ..ONE_NUMBER
    },
    Key {
        name: "router_queue",
        min: 1,
        planned: "as many as fit the router tile",
        doc: "Rays per router queue (up and down, each double-buffered).",
        set: |o, v| o.router_queue = Some(count(v)),
        ..ONE_NUMBER
    },
    Key {
        name: "spill",
        min: 1,
        planned: "as many as fit the spill tile",
        doc: "Rays the spill store above the root holds; also the cap on rays in flight.",
        set: |o, v| o.spill = Some(count(v)),
        ..ONE_NUMBER
    },
    Key {
        name: "region_kib",
        max: TILE_BYTES / 1024,
        planned: "the largest region the camera's sampled rays choose in all the injector tile has left (at least the largest shard)",
        doc: "KiB of each injector tile for copies of the shards its rays cross first, which it marches them through (at least the largest shard). Every region is written whole for each new camera.",
        set: |o, v| o.region_bytes = Some(count(v) * 1024),
        ..ONE_NUMBER
    },
    Key {
        name: "march_budget",
        planned: "the dearest injector's sampled cell steps over 160 iterations of its six workers (150 where the camera regions march 99 % of the sampled steps or more, 220 where the shards were cut by load, 230 where they were cut by load with lean tracers; 80 and 175 where the view is cut in blocks of 4 or less); where the hottest tracer tile's sampled steps at the tracers' budget take 2 times as many iterations or more, the tracers' pace: the dearest injector's steps times the tracers' budget over the hottest tracer tile's",
        doc: "Cell steps an injector's worker marches per iteration, each step counted by its faces (one of 15 faces is one) and each shard visit as 0.58 of a step and each ray as 0.63, before it leaves the rest of its rays for the next (0: no limit).",
        set: |o, v| o.march_budget = Some(count(v)),
        ..ONE_NUMBER
    },
    Key {
        name: "tracer_budget",
        planned: "the injectors' budget (as planned, before any pace set by the tracers) times (1 + the camera regions' share of the sampled cell steps) / 2; the injectors' own where the shards were cut by load and the view is in blocks of more than 4; at least what marches the hottest tracer tile's sampled steps in 480 iterations",
        doc: "Cell steps a tracer's worker marches per iteration, each step counted by its faces (one of 15 faces is one) and each shard visit as 0.58 of a step and each ray as 0.63, before it holds the rest of its rays for the next (0: no limit).",
        set: |o, v| o.tracer_budget = Some(count(v)),
        ..ONE_NUMBER
    },
    Key {
        name: "drain",
        max: MAX_ITERATIONS,
        fixed: Some(|o| o.drain_iters.to_string()),
        doc: "Idle iterations after each batch (the paper's schedule; 0: batches follow each other within an iteration).",
        set: |o, v| o.drain_iters = count(v),
        ..ONE_NUMBER
    },
    Key {
        name: "ends_on_device",
        max: 1,
        fixed: Some(|o| (o.ends_on_device as u32).to_string()),
        doc: "1: a host call's loop ends as soon as the frame's last pixel is counted (every tracer's count of finished pixels goes to the spill store each step, and RepeatWhileTrue tests the store's steps left), so the frame takes the iterations it needs; 0: every call runs --rc iterations (the paper's Repeat), and the frame ends at a multiple of --rc. The image is the same.",
        set: |o, v| o.ends_on_device = count(v) == 1,
        ..ONE_NUMBER
    },
    Key {
        name: "schedule",
        max: 4,
        planned: "4 where the shards were cut by load and the camera regions march under 75 % of the sampled steps after the cut (3 there with more than 256 injectors, whose lanes the root would count in one worker); else 2",
        doc: "Which compute set runs each vertex. 4: two sets (3's order, with the routers counting and planning in one worker beside the march, and the injectors dealing and emitting in one vertex after it), so a step waits for no set where only the routers plan; 3: three sets (the tracers and injectors march beside the routers' count, the routers plan, the tracers send beside the routers' forward), so a step waits for count only where it outlasts the march and for the larger of forward and send; 2: four sets (the routers count, they plan, the tracers and injectors march beside the routers' forward, they send), so a step waits for the busiest forwarding router only where it outlasts the march; 1: three sets, the injectors marching beside the tracers and the routers forwarding after; 0: three sets, the injectors marching in a set of their own. The image is the same.",
        set: |o, v| o.schedule = Some(crate::device::Schedule::ALL[count(v) as usize]),
        ..ONE_NUMBER
    },
];

/// The keys whose values fix the tracer links' sizes: with either given, the plan
/// does not size the links to the camera.
const LINK_SIZE_KEYS: [&str; 2] = ["link_capacity", "side_capacity"];

/// One `--tune` value, checked.
pub struct Setting {
    pub key: &'static Key,
    pub values: Vec<u32>,
}

/// `KEY=VALUE` checked against the table: a known key, numbers, in range.
pub fn parse(text: &str) -> Result<Setting> {
    let Some((name, value)) = text.split_once('=') else {
        bail!("--tune {text}: expected KEY=VALUE (the keys are listed in --help)");
    };
    let Some(key) = KEYS.iter().find(|k| k.name == name) else {
        let names: Vec<&str> = KEYS.iter().map(|k| k.name).collect();
        bail!("--tune {text}: unknown key '{name}' (keys: {})", names.join(", "));
    };
    let parts: Vec<&str> = if key.is_list() { value.split(',').collect() } else { vec![value] };
    let mut values = Vec::with_capacity(parts.len());
    for part in parts {
        let Ok(v) = part.parse::<u32>() else {
            let what = if key.is_list() { "numbers separated by ','" } else { "one whole number" };
            bail!("--tune {text}: '{part}' is not a whole number ({name} takes {what})");
        };
        if v < key.min || v > key.max || (key.power_of_two && !v.is_power_of_two()) {
            bail!("--tune {text}: {v} is out of range ({name} takes {})", key.range_text());
        }
        values.push(v);
    }
    Ok(Setting { key, values })
}

/// Whether `texts` (`--tune` values) set the key `name`, as [`parse`] reads a key.
pub fn tuned(texts: &[String], name: &str) -> bool {
    texts.iter().any(|t| t.split_once('=').is_some_and(|(n, _)| n == name))
}

/// `base` with every `--tune` value applied (each key at most once), and the
/// tracer links sized to the camera unless a link size is tuned.
pub fn apply(base: DeviceOptions, texts: &[String]) -> Result<DeviceOptions> {
    let mut o = base;
    let mut given: Vec<(&str, &str)> = Vec::new();
    for text in texts {
        let s = parse(text)?;
        if let Some((_, first)) = given.iter().find(|(n, _)| *n == s.key.name) {
            bail!("--tune {text}: {} is already tuned ({first}); give each key once", s.key.name);
        }
        given.push((s.key.name, text));
        (s.key.set)(&mut o, &s.values);
    }
    o.size_links = !given.iter().any(|(n, _)| LINK_SIZE_KEYS.contains(n));
    Ok(o)
}

/// The table as `--tune`'s long help shows it.
pub fn help() -> String {
    let mut s = String::from(
        "Set a buffer or topology knob (repeatable, each key once). A key left out takes its default: \
a fixed number, or what the plan sizes to the scene, the camera and the tile; the tracer links are \
sized to the camera unless link_capacity or side_capacity is tuned.\n",
    );
    for k in KEYS {
        s += &format!("\n  {}={}  [default: {}]\n      {}\n", k.name, k.value, k.default_text(), k.doc);
    }
    s
}

/// The table as the README shows it.
pub fn markdown() -> String {
    let mut s = String::from("| key | value | default | what it sets |\n|---|---|---|---|\n");
    for k in KEYS {
        s += &format!("| `{}` | {} ({}) | {} | {} |\n", k.name, k.value, k.range_text(), k.default_text(), k.doc);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The march budget's planned rule names the constants that make it: the text is
    /// written by hand (a key's `planned` is a `&'static str`), so a changed constant
    /// fails here until the text, and the README table made from it, follow.
    #[test]
    fn march_budget_planned_text_names_its_constants() {
        use crate::device::options::*;
        let key = KEYS.iter().find(|k| k.name == "march_budget").unwrap();
        let want = format!(
            "the dearest injector's sampled cell steps over {BUDGET_ITERATIONS} iterations of its six workers ({BUDGET_ITERATIONS_INJECTORS_ALONE} where the camera regions \
             march {:.0} % of the sampled steps or more, {BUDGET_ITERATIONS_LOAD_CUT} where the shards were cut by load, {BUDGET_ITERATIONS_LEAN_CUT} where they were cut by load \
             with lean tracers; {BUDGET_ITERATIONS_FINE_ALONE} and {BUDGET_ITERATIONS_FINE_LOAD_CUT} where the view is cut in blocks of 4 or less); where the hottest tracer \
             tile's sampled steps at the tracers' budget take {PACE_RATIO} times as many iterations or more, the tracers' pace: the dearest injector's steps \
             times the tracers' budget over the hottest tracer tile's",
            100.0 * INJECTORS_ALONE_SHARE
        );
        assert_eq!(key.planned, want);
    }

    /// The README's table is this one, between its markers
    /// (`FOAM_REGEN_README=1 cargo test --lib readme_table` writes it there).
    #[test]
    fn readme_table_is_the_code_table() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
        let readme = std::fs::read_to_string(path).unwrap();
        let (begin, end) = ("<!-- tune-table: begin -->\n", "<!-- tune-table: end -->");
        let start = readme.find(begin).expect("README has the tune table's begin marker") + begin.len();
        let stop = start + readme[start..].find(end).expect("README has the tune table's end marker");
        if std::env::var_os("FOAM_REGEN_README").is_some() {
            std::fs::write(path, format!("{}{}{}", &readme[..start], markdown(), &readme[stop..])).unwrap();
            return;
        }
        assert!(
            readme[start..stop] == markdown(),
            "README.md's --tune table differs from src/cmd/tune.rs (FOAM_REGEN_README=1 rewrites it):\n{}",
            markdown()
        );
    }

    #[test]
    fn every_default_is_within_its_range_and_sets_itself() {
        let o = DeviceOptions::default();
        for k in KEYS {
            if let Some(f) = k.fixed {
                let texts = [format!("{}={}", k.name, f(&o))];
                let tuned = apply(DeviceOptions::default(), &texts).unwrap_or_else(|e| panic!("{}: {e}", k.name));
                let sized = DeviceOptions { size_links: true, ..DeviceOptions::default() };
                assert_eq!(format!("{tuned:?}"), format!("{sized:?}"), "{}", k.name);
            }
        }
    }
}
