//! Rust side of the cxx bridge to the Poplar graph builder and the host runtime.
//!
//! A [`Session`] builds a graph from numbered handles (tensors, compute sets, vertices,
//! programs), compiles it into an engine on a device, runs programs, moves host tensors
//! and reports counters and per-tile memory. Every C++ error (a Poplar exception naming
//! the tile, tensor or vertex) comes back as [`Error`].

#[cxx::bridge(namespace = "foam_bridge")]
mod ffi {
    /// Execution counters since compile (or the last reset).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
    struct Counters {
        /// Execute programs run (BSP compute steps).
        compute_steps: u64,
        /// Vertex compute() calls (a MultiVertex counts once).
        vertex_runs: u64,
        /// Tensor-to-tensor Copy programs run.
        copies: u64,
        /// Copy bytes whose source and destination tiles differ.
        bytes_exchanged: u64,
        /// Copy bytes that stay on their tile.
        bytes_copied_on_tile: u64,
        /// Engine::run, readTensor and writeTensor calls.
        host_calls: u64,
        /// Sum over Executes of the busiest tile's setPerfEstimate cycles.
        estimated_cycles: u64,
        /// Bytes copied for vertex fields connected to data on other tiles (the
        /// exchange Poplar inserts; the render graph has none).
        implicit_exchange_bytes: u64,
        /// Bytes moved by Copy programs to or from data streams.
        stream_bytes: u64,
        /// Of `bytes_exchanged`, the bytes between tiles of different IPUs (over IPU-Links).
        bytes_across_ipus: u64,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum MemoryKind {
        Tensor,
        VertexState,
        Code,
        /// The six worker stacks of a tile, as deep as its deepest vertex type needs.
        Stack,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct TileMemory {
        tile: u32,
        tensor_bytes: u64,
        vertex_state_bytes: u64,
        code_bytes: u64,
        stack_bytes: u64,
    }

    /// A vertex type's cost on the IPU: one worker's stack and its code, from what
    /// the build measured on its host object (poplar_host/Report.hpp gives the
    /// factors), or the runtime's estimates for a type it did not measure.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct VertexCost {
        name: String,
        stack_bytes: u64,
        code_bytes: u64,
        measured: bool,
    }

    /// One contributor to a tile's memory: a tensor (by debug name) or a vertex type's
    /// state, code or worker stacks.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct MemoryItem {
        tile: u32,
        kind: MemoryKind,
        name: String,
        bytes: u64,
    }

    /// Per-tile memory: tiles that hold anything, ascending; items largest first per tile.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct MemoryReport {
        num_tiles: u32,
        bytes_per_tile: u64,
        tiles: Vec<TileMemory>,
        items: Vec<MemoryItem>,
    }

    /// One tile of the render graph (see codelets/graph/spec.h).
    #[derive(Debug, Clone)]
    struct RenderNode {
        /// 0 tracer, 1 router, 2 spill store, 3 injector.
        role: u8,
        tile: u32,
        /// foam_params bytes with the [lanes] fields zero: the builder derives
        /// them from the edges.
        params: Vec<u8>,
        shard_offset: usize,
        shard_bytes: usize,
        /// Tracers: the foam_region_header of the neighbours' shards it holds copies
        /// of (empty: none); the graph builder appends their blobs from `shards`.
        copies: Vec<u8>,
    }

    /// A link between two tiles, one buffer each way (see codelets/graph/spec.h).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct RenderEdge {
        /// 0 tree (child to parent), 1 side link (tracer to tracer), 2 an
        /// injector's lane to the root, 3 an injector's direct lane to a router
        /// under the root.
        kind: u8,
        from: u32,
        to: u32,
        /// The lane it takes among its end's edges of its kind, at each end.
        from_lane: u32,
        to_lane: u32,
        /// Rays per buffer.
        capacity: u32,
    }

    /// One vertex of the frame start's reset: the node whose tile runs it and the
    /// bytes it zeroes (codelets/graph/tile_bytes.h zeroedAtFrameStart).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct ResetVertex {
        node: u32,
        bytes: u64,
    }

    /// The bytes of each tensor a tile of the render graph holds (0 where its role
    /// has none), as codelets/graph/tile_bytes.h computes them for the graph
    /// builder to allocate.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    struct TileBytes {
        params: usize,
        stats: usize,
        ctl: usize,
        camera: usize,
        status: usize,
        /// Its edge up (a router: every lane's buffers, children, injectors, parent).
        inbox: usize,
        outbox: usize,
        /// A tracer's side links.
        side_in: usize,
        side_out: usize,
        /// An injector's direct lanes.
        direct_in: usize,
        direct_out: usize,
        /// Rays waiting: pending store, router queues, spill store, held rays.
        store: usize,
        pixels: usize,
        results: usize,
        shard: usize,
        copies: usize,
        region: usize,
        blocks: usize,
        /// The spill store's word of finished pixels from every tracer.
        finishes: usize,
    }

    /// What sizes a tile beyond its foam_params (codelets/graph/tile_bytes.h).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    struct TileContents {
        slice_pixels: u32,
        shard_bytes: usize,
        /// A tracer's shard copies: their directory and blobs.
        copies_bytes: usize,
        region_bytes: usize,
    }

    /// The device plan handed to the C++ render graph builder.
    #[derive(Debug, Clone)]
    struct RenderSpec {
        nodes: Vec<RenderNode>,
        edges: Vec<RenderEdge>,
        /// Every tracer's packed shard, back to back.
        shards: Vec<u8>,
        ray_bytes: u32,
        slice_pixels: u32,
        /// Bytes of each injector's camera region (foam_region_header + shard blobs).
        region_bytes: usize,
        rc: u32,
        /// Whether a host call's loop ends once the frame is finished
        /// (codelets/graph/spec.h `endsOnDevice`) or runs all `rc` iterations.
        ends_on_device: bool,
        /// Which compute set runs each vertex (codelets/graph/spec.h, Schedule): 0
        /// apart, 1 injectors' march merged with the tracers', 2 and the routers'
        /// forward beside it, in four sets.
        schedule: u8,
    }

    unsafe extern "C++" {
        include!("poplar-bridge/bridge/session.h");
        include!("codelets/graph/render_bridge.h");

        type Session;

        fn new_session(num_ipus: u32, tiles_per_ipu: u32) -> Result<UniquePtr<Session>>;
        /// The codelet bundle path for Graph::addCodelets (host: "foam_codelets.gp").
        fn codelets_gp() -> String;
        /// Every vertex type compiled into the host runtime (none with the SDK).
        fn vertex_costs() -> Vec<VertexCost>;

        fn add_codelets(self: Pin<&mut Session>, path: &str) -> Result<()>;
        fn add_variable(self: Pin<&mut Session>, ty: &str, shape: &[usize], name: &str) -> Result<u32>;
        fn set_initial_bytes(self: Pin<&mut Session>, t: u32, bytes: &[u8]) -> Result<()>;
        fn slice(self: Pin<&mut Session>, t: u32, begin: usize, end: usize, dim: u32) -> Result<u32>;
        fn index(self: Pin<&mut Session>, t: u32, i: usize) -> Result<u32>;
        fn reshape(self: Pin<&mut Session>, t: u32, shape: &[usize]) -> Result<u32>;
        fn concat(self: Pin<&mut Session>, ts: &[u32], dim: u32) -> Result<u32>;
        fn num_elements(self: &Session, t: u32) -> Result<usize>;
        fn set_tile_mapping(self: Pin<&mut Session>, t: u32, tile: u32) -> Result<()>;
        fn add_compute_set(self: Pin<&mut Session>, name: &str) -> Result<u32>;
        fn add_vertex(self: Pin<&mut Session>, cs: u32, ty: &str, tile: u32) -> Result<u32>;
        fn connect(self: Pin<&mut Session>, v: u32, field: &str, t: u32) -> Result<()>;
        fn set_field_u32(self: Pin<&mut Session>, v: u32, field: &str, value: u32) -> Result<()>;
        fn set_field_i32(self: Pin<&mut Session>, v: u32, field: &str, value: i32) -> Result<()>;
        fn set_field_f32(self: Pin<&mut Session>, v: u32, field: &str, value: f32) -> Result<()>;
        fn set_perf_estimate(self: Pin<&mut Session>, v: u32, cycles: u64) -> Result<()>;
        fn create_host_write(self: Pin<&mut Session>, handle: &str, t: u32) -> Result<()>;
        fn create_host_read(self: Pin<&mut Session>, handle: &str, t: u32) -> Result<()>;

        fn prog_execute(self: Pin<&mut Session>, cs: u32) -> Result<u32>;
        fn prog_copy(self: Pin<&mut Session>, src: u32, dst: u32) -> Result<u32>;
        fn prog_sequence(self: Pin<&mut Session>, progs: &[u32]) -> Result<u32>;
        fn prog_repeat(self: Pin<&mut Session>, count: u32, body: u32) -> Result<u32>;
        fn prog_repeat_while_true(self: Pin<&mut Session>, cond: u32, predicate: u32, body: u32) -> Result<u32>;
        fn prog_sync(self: Pin<&mut Session>) -> Result<u32>;

        fn graph_memory_report(self: &Session) -> Result<MemoryReport>;
        fn compile(self: Pin<&mut Session>, progs: &[u32]) -> Result<()>;
        fn compile_cached(self: Pin<&mut Session>, progs: &[u32], path: &str) -> Result<()>;
        fn run(self: Pin<&mut Session>, prog: u32) -> Result<()>;
        fn write_tensor(self: Pin<&mut Session>, handle: &str, bytes: &[u8]) -> Result<()>;
        fn read_tensor(self: Pin<&mut Session>, handle: &str, bytes: &mut [u8]) -> Result<()>;
        fn counters(self: &Session) -> Result<Counters>;
        fn reset_counters(self: Pin<&mut Session>) -> Result<()>;
        fn memory_report(self: &Session) -> Result<MemoryReport>;
        fn num_tiles(self: &Session) -> u32;

        /// Builds the render graph into the session; returns the program handles
        /// [frame start, Repeat(rc){compute; exchange}].
        fn build_render_graph(session: Pin<&mut Session>, spec: &RenderSpec) -> Result<Vec<u32>>;
        /// Every node's tensor bytes as build_render_graph allocates them (the
        /// spec's shard bytes are not read), or why the spec is not a device.
        fn spec_tile_bytes(spec: &RenderSpec) -> Result<Vec<TileBytes>>;
        /// The frame start's zeroing vertices as build_render_graph adds them, in node
        /// order.
        fn spec_reset_vertices(spec: &RenderSpec) -> Result<Vec<ResetVertex>>;
        /// The compute sets of a step under `schedule` (spec.h Schedule), then the set
        /// that runs each vertex: TracerMarch, TracerSend, RouterCount, RouterPlan,
        /// RouterForward, SpillStore, Injector, InjectorMarch, InjectorSend (the graph
        /// builder's own table, render_graph.h stepLayout).
        fn step_layout(schedule: u8) -> Result<Vec<u8>>;
        /// A tile of `role` (0 tracer .. 3 injector) with these foam_params bytes,
        /// [lanes] fields set, and contents.
        fn role_tile_bytes(role: u8, params: &[u8], contents: &TileContents) -> Result<TileBytes>;
        fn bytes_per_tile(self: &Session) -> u32;
    }
}

#[cfg(feature = "selftest")]
pub mod selftest;

pub use ffi::{
    Counters, MemoryItem, MemoryKind, MemoryReport, RenderEdge, RenderNode, RenderSpec, ResetVertex, TileBytes,
    TileContents, TileMemory, VertexCost,
};

impl TileBytes {
    /// Every tensor's bytes.
    pub fn total(&self) -> usize {
        let TileBytes {
            params,
            stats,
            ctl,
            camera,
            status,
            inbox,
            outbox,
            side_in,
            side_out,
            direct_in,
            direct_out,
            store,
            pixels,
            results,
            shard,
            copies,
            region,
            blocks,
            finishes,
        } = *self;
        params
            + stats
            + ctl
            + camera
            + status
            + inbox
            + outbox
            + side_in
            + side_out
            + direct_in
            + direct_out
            + store
            + pixels
            + results
            + shard
            + copies
            + region
            + blocks
            + finishes
    }

    /// The bytes of its link buffers: every lane's, both ways.
    pub fn links(&self) -> usize {
        self.inbox + self.outbox + self.side_in + self.side_out + self.direct_in + self.direct_out
    }
}

/// Every node's tensor bytes as the graph builder allocates them for `spec`.
pub fn spec_tile_bytes(spec: &RenderSpec) -> Result<Vec<TileBytes>> {
    Ok(ffi::spec_tile_bytes(spec)?)
}

/// The frame start's zeroing vertices for `spec`, as the graph builder adds them.
pub fn spec_reset_vertices(spec: &RenderSpec) -> Result<Vec<ResetVertex>> {
    Ok(ffi::spec_reset_vertices(spec)?)
}

/// The graph builder's step layout under `schedule` (see `ffi::step_layout`): the
/// number of compute sets a step, then each vertex's set.
pub fn step_layout(schedule: u8) -> Result<Vec<u8>> {
    Ok(ffi::step_layout(schedule)?)
}

/// The tensor bytes of a tile of `role` with `params` (a foam_params, its [lanes]
/// fields set) and `contents`.
pub fn role_tile_bytes(role: u8, params: &[u8], contents: &TileContents) -> Result<TileBytes> {
    Ok(ffi::role_tile_bytes(role, params, contents)?)
}

/// An error raised by the graph builder, the runtime or the SDK, with its message.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Error(pub String);

impl From<cxx::Exception> for Error {
    fn from(e: cxx::Exception) -> Self {
        Error(e.what().to_string())
    }
}

pub type Result<T> = std::result::Result<T, Error>;

// Host stream handles of the render graph (codelets/graph/render_graph.h).
pub const CAMERA_HANDLE: &str = "camera";
/// Every injector's camera region, in node order.
pub const REGION_HANDLE: &str = "camera_region";
/// Every injector's block list (layout.h foam_block), in node order.
pub const BLOCKS_HANDLE: &str = "blocks";
/// The spill store's foam_frame_status, then every injector's.
pub const STATUS_HANDLE: &str = "status";
pub const PIXELS_HANDLE: &str = "pixels";
pub const RESULTS_HANDLE: &str = "results";
pub const RESULT_COUNTS_HANDLE: &str = "result_counts";
pub const STATS_HANDLE: &str = "stats";
/// Per-worker work counters for the cost model, in node order: a tracer's
/// foam_tracer_ctl.work, an injector's foam_injector_ctl.work, a router's
/// foam_router_ctl.counts; nothing for the spill store.
pub const WORK_HANDLE: &str = "work";

macro_rules! handle {
    ($($(#[$m:meta])* $name:ident),*) => {$(
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub struct $name(pub u32);
    )*};
}
handle!(
    /// A tensor view in a session.
    Tensor,
    /// A compute set.
    ComputeSet,
    /// A vertex.
    Vertex,
    /// A control program.
    Program
);

/// Poplar element types, by their Poplar names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElemType {
    Bool,
    Char,
    UnsignedChar,
    Short,
    UnsignedShort,
    Half,
    Int,
    UnsignedInt,
    Float,
}

impl ElemType {
    fn name(self) -> &'static str {
        match self {
            ElemType::Bool => "BOOL",
            ElemType::Char => "CHAR",
            ElemType::UnsignedChar => "UNSIGNED_CHAR",
            ElemType::Short => "SHORT",
            ElemType::UnsignedShort => "UNSIGNED_SHORT",
            ElemType::Half => "HALF",
            ElemType::Int => "INT",
            ElemType::UnsignedInt => "UNSIGNED_INT",
            ElemType::Float => "FLOAT",
        }
    }
}

/// A graph under construction, then the engine compiled from it.
pub struct Session(cxx::UniquePtr<ffi::Session>);

/// The codelet bundle to pass to [`Session::add_codelets`] (or `Graph::addCodelets` in C++).
pub fn codelets_gp() -> String {
    ffi::codelets_gp()
}

/// The stack and code the host runtime counts for every vertex type it has (empty in
/// a build against the Poplar SDK, where popc decides them).
pub fn vertex_costs() -> Vec<VertexCost> {
    ffi::vertex_costs()
}

/// What a tile reserves for `vertex_types` (each mapped to it at least once): their
/// code, and six worker stacks as deep as the deepest needs. None if one is unknown.
pub fn program_bytes(vertex_types: &[&str]) -> Option<u64> {
    let costs = vertex_costs();
    let mut code = 0;
    let mut stack = 0;
    for name in vertex_types {
        let c = costs.iter().find(|c| c.name == *name)?;
        code += c.code_bytes;
        stack = stack.max(c.stack_bytes);
    }
    Some(code + WORKER_STACKS_PER_TILE * stack)
}

/// Worker contexts per tile, each with a stack of its own.
pub const WORKER_STACKS_PER_TILE: u64 = 6;

static GRAPH_BUILDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Render graphs this process has built ([`Session::build_render_graph`] calls):
/// the expensive step (minutes of compiling on an IPU) a run of many views does once.
pub fn graph_builds() -> u64 {
    GRAPH_BUILDS.load(std::sync::atomic::Ordering::Relaxed)
}

impl Session {
    /// A Mk2 target with `num_ipus` IPUs of `tiles_per_ipu` tiles (1472 on hardware).
    pub fn new(num_ipus: u32, tiles_per_ipu: u32) -> Result<Self> {
        Ok(Session(ffi::new_session(num_ipus, tiles_per_ipu)?))
    }
    fn p(&mut self) -> std::pin::Pin<&mut ffi::Session> {
        self.0.pin_mut()
    }
    pub fn num_tiles(&self) -> u32 {
        self.0.num_tiles()
    }
    pub fn bytes_per_tile(&self) -> u32 {
        self.0.bytes_per_tile()
    }
    pub fn add_codelets(&mut self, path: &str) -> Result<()> {
        Ok(self.p().add_codelets(path)?)
    }
    pub fn add_variable(&mut self, ty: ElemType, shape: &[usize], name: &str) -> Result<Tensor> {
        Ok(Tensor(self.p().add_variable(ty.name(), shape, name)?))
    }
    /// Initial contents as raw little-endian element bytes (HALF: binary16 bit patterns).
    pub fn set_initial_bytes(&mut self, t: Tensor, bytes: &[u8]) -> Result<()> {
        Ok(self.p().set_initial_bytes(t.0, bytes)?)
    }
    pub fn slice(&mut self, t: Tensor, begin: usize, end: usize, dim: u32) -> Result<Tensor> {
        Ok(Tensor(self.p().slice(t.0, begin, end, dim)?))
    }
    pub fn index(&mut self, t: Tensor, i: usize) -> Result<Tensor> {
        Ok(Tensor(self.p().index(t.0, i)?))
    }
    pub fn reshape(&mut self, t: Tensor, shape: &[usize]) -> Result<Tensor> {
        Ok(Tensor(self.p().reshape(t.0, shape)?))
    }
    pub fn concat(&mut self, ts: &[Tensor], dim: u32) -> Result<Tensor> {
        let ids: Vec<u32> = ts.iter().map(|t| t.0).collect();
        Ok(Tensor(self.p().concat(&ids, dim)?))
    }
    pub fn num_elements(&self, t: Tensor) -> Result<usize> {
        Ok(self.0.num_elements(t.0)?)
    }
    pub fn set_tile_mapping(&mut self, t: Tensor, tile: u32) -> Result<()> {
        Ok(self.p().set_tile_mapping(t.0, tile)?)
    }
    pub fn add_compute_set(&mut self, name: &str) -> Result<ComputeSet> {
        Ok(ComputeSet(self.p().add_compute_set(name)?))
    }
    /// Adds a vertex of a registered codelet type and maps it to `tile`.
    pub fn add_vertex(&mut self, cs: ComputeSet, ty: &str, tile: u32) -> Result<Vertex> {
        Ok(Vertex(self.p().add_vertex(cs.0, ty, tile)?))
    }
    pub fn connect(&mut self, v: Vertex, field: &str, t: Tensor) -> Result<()> {
        Ok(self.p().connect(v.0, field, t.0)?)
    }
    pub fn set_field_u32(&mut self, v: Vertex, field: &str, value: u32) -> Result<()> {
        Ok(self.p().set_field_u32(v.0, field, value)?)
    }
    pub fn set_field_i32(&mut self, v: Vertex, field: &str, value: i32) -> Result<()> {
        Ok(self.p().set_field_i32(v.0, field, value)?)
    }
    pub fn set_field_f32(&mut self, v: Vertex, field: &str, value: f32) -> Result<()> {
        Ok(self.p().set_field_f32(v.0, field, value)?)
    }
    pub fn set_perf_estimate(&mut self, v: Vertex, cycles: u64) -> Result<()> {
        Ok(self.p().set_perf_estimate(v.0, cycles)?)
    }
    pub fn create_host_write(&mut self, handle: &str, t: Tensor) -> Result<()> {
        Ok(self.p().create_host_write(handle, t.0)?)
    }
    pub fn create_host_read(&mut self, handle: &str, t: Tensor) -> Result<()> {
        Ok(self.p().create_host_read(handle, t.0)?)
    }
    /// Builds the render graph of `spec`; returns [frame start, steps] programs.
    pub fn build_render_graph(&mut self, spec: &RenderSpec) -> Result<Vec<Program>> {
        GRAPH_BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(ffi::build_render_graph(self.0.pin_mut(), spec)?.into_iter().map(Program).collect())
    }
    pub fn execute(&mut self, cs: ComputeSet) -> Result<Program> {
        Ok(Program(self.p().prog_execute(cs.0)?))
    }
    pub fn copy(&mut self, src: Tensor, dst: Tensor) -> Result<Program> {
        Ok(Program(self.p().prog_copy(src.0, dst.0)?))
    }
    pub fn sequence(&mut self, progs: &[Program]) -> Result<Program> {
        let ids: Vec<u32> = progs.iter().map(|p| p.0).collect();
        Ok(Program(self.p().prog_sequence(&ids)?))
    }
    pub fn repeat(&mut self, count: u32, body: Program) -> Result<Program> {
        Ok(Program(self.p().prog_repeat(count, body.0)?))
    }
    pub fn repeat_while_true(&mut self, cond: Program, predicate: Tensor, body: Program) -> Result<Program> {
        Ok(Program(self.p().prog_repeat_while_true(cond.0, predicate.0, body.0)?))
    }
    pub fn sync(&mut self) -> Result<Program> {
        Ok(Program(self.p().prog_sync()?))
    }
    /// The per-tile memory the graph would use, also when it is over budget.
    pub fn graph_memory_report(&self) -> Result<MemoryReport> {
        Ok(self.0.graph_memory_report()?)
    }
    /// Builds the engine with `progs` (run index = position) and loads it on a device.
    pub fn compile(&mut self, progs: &[Program]) -> Result<()> {
        let ids: Vec<u32> = progs.iter().map(|p| p.0).collect();
        Ok(self.p().compile(&ids)?)
    }
    /// As [`compile`](Self::compile), keeping the compiled executable in the file
    /// `path` (Poplar's `Executable::serialize`): loaded from it when it exists, else
    /// compiled and stored there. Only the SDK stores executables: the host runtime
    /// compiles in memory and refuses to serialise.
    pub fn compile_cached(&mut self, progs: &[Program], path: &str) -> Result<()> {
        let ids: Vec<u32> = progs.iter().map(|p| p.0).collect();
        Ok(self.p().compile_cached(&ids, path)?)
    }
    pub fn run(&mut self, prog: u32) -> Result<()> {
        Ok(self.p().run(prog)?)
    }
    pub fn write_tensor(&mut self, handle: &str, bytes: &[u8]) -> Result<()> {
        Ok(self.p().write_tensor(handle, bytes)?)
    }
    pub fn read_tensor(&mut self, handle: &str, bytes: &mut [u8]) -> Result<()> {
        Ok(self.p().read_tensor(handle, bytes)?)
    }
    pub fn counters(&self) -> Result<Counters> {
        Ok(self.0.counters()?)
    }
    pub fn reset_counters(&mut self) -> Result<()> {
        Ok(self.p().reset_counters()?)
    }
    pub fn memory_report(&self) -> Result<MemoryReport> {
        Ok(self.0.memory_report()?)
    }
}
