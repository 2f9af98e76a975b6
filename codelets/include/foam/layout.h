/* foam-ipu on-tile data layouts: the ONE definition of every byte that crosses
 * between the host, the exchange and the codelets.
 *
 * Plain C with fixed-width types so that C++ codelets (IPU and host builds) and
 * Rust (through bindgen, the foam-layout crate in codelets/layout) read the same bytes. Half-precision
 * fields are stored as IEEE binary16 bit patterns in uint16_t, because C has no
 * half type; codelets convert with foam/half.h.
 *
 * Every struct is 4-byte aligned and a multiple of 4 bytes: the IPU exchange moves
 * 4-byte words, and vectors of these structs travel as unsigned-char tensors.
 */
#ifndef FOAM_LAYOUT_H
#define FOAM_LAYOUT_H

#include <stdint.h>

#ifdef __cplusplus
#define FOAM_STATIC_ASSERT(c, m) static_assert(c, m)
#else
#define FOAM_STATIC_ASSERT(c, m) _Static_assert(c, m)
#endif

/* ---- limits and markers ------------------------------------------------- */

/* A shard addresses [local | halo] cells with 16-bit indices. */
#define FOAM_MAX_SHARD_ENTRIES 65535u
/* foam_params.side_class: the far shard's tiles hang on its router's lanes. */
#define FOAM_SIDE_CLASS_ALIGNED 0x80u
/* Side links per tracer tile (foam_params.side_shard). */
#define FOAM_MAX_SIDES 16u
/* Destination shard of an empty buffer slot: routers compact valid rays to the
 * head of a buffer and mark the first free slot (the "invalid tail") with it. */
#define FOAM_INVALID_SHARD 0xFFFFu
/* Destination cell of a finished ray: the destination shard owns its pixel's
 * framebuffer slice and writes the pixel instead of marching. */
#define FOAM_FINISHED_CELL 0xFFFFu
/* The destination shard of a ray a tracer worker paused inside a shard (its budget
 * ran out there; foam_paused_ray): it stays on the tile, and its slot's cell names
 * the worker that marches it on. Never a shard's id (at most 32,768 shards). */
#define FOAM_PAUSED_SHARD 0xFFFEu
/* A ray stops after this many cells, as the original renderer does. */
#define FOAM_MAX_CELL_STEPS 1024u
/* "FOAM" read as a little-endian uint32. */
#define FOAM_SHARD_MAGIC 0x4D414F46u

/* ---- scene shard (one per tracer tile) ---------------------------------- */

/* A Voronoi cell owned by this shard: its site and density. Local cells and halo
 * records are both 16 bytes with the site first, and the halo records follow the
 * cells, so the march finds any adjacency entry's site at the same stride, without
 * choosing between two arrays. Its colour and adjacency end are in foam_cell_info;
 * its view-dependent colour, if the shard carries any, in the blob's SH section
 * (foam_shard_header.sh_rest). */
typedef struct foam_cell {
  float x, y, z;  /* site */
  float density;  /* activated sigma */
} foam_cell;
FOAM_STATIC_ASSERT(sizeof(foam_cell) == 16, "foam_cell is 16 bytes");

/* A neighbour across the shard boundary: enough to build the shared face and to
 * address the ray to the cell's owner. */
typedef struct foam_halo {
  float x, y, z;  /* site */
  uint16_t shard; /* owning shard */
  uint16_t cell;  /* local index in the owning shard */
} foam_halo;
FOAM_STATIC_ASSERT(sizeof(foam_halo) == 16, "foam_halo is 16 bytes");

/* What the march reads of a local cell once it steps into it, beside foam_cell. */
typedef struct foam_cell_info {
  uint8_t r, g, b;  /* DC colour as stored in scene.ply (value / 255) */
  uint8_t pad;
  uint32_t adj_end; /* exclusive end of this cell's slice of the shard adjacency */
} foam_cell_info;
FOAM_STATIC_ASSERT(sizeof(foam_cell_info) == 8, "foam_cell_info is 8 bytes");

/* The shard blob a tracer tile holds:
 *   foam_shard_header | foam_cell[n_local] | foam_halo[n_halo] | foam_cell_info[n_local]
 *   | SH section | uint16_t adjacency[n_adj] | pad to 8
 * A blob starts 8-aligned on its tile (the codelets declare its fields so, and the
 * regions holding several pad each to 8), and so does every site, which the march
 * loads as an (x, y) pair in one 64-bit load: the IPU loads 64 bits only from
 * 8-byte boundaries.
 * Adjacency entries index [local | halo]: i < n_local is local cell i, otherwise
 * halo record i - n_local, so entry i's site is at cells_offset + 16 i either way
 * (halo_offset = cells_offset + 16 n_local). Offsets are bytes from the start of
 * the blob. The info records start at halo_offset + 16 n_halo (foam_shard_info_offset).
 * The SH section starts right after the info records and holds, for each local cell in
 * order, its 3 * sh_rest spherical-harmonic coefficients beyond DC: first the
 * red-green pairs (r_k, g_k) for k = 1..sh_rest, then the blues b_1..b_sh_rest
 * (scene.ply interleaves r, g, b per coefficient; pairs let the march multiply red
 * and green by Y_k in one f32v2 step, and two blues by (Y_k, Y_k+1) in another), as
 * binary16 (sh_f32 0) or float (sh_f32 1). Each cell's binary16 coefficients are
 * padded to 8 bytes and float ones to 4 (foam_sh_cell_bytes): the march loads two
 * red-green pairs of binary16 as one 64-bit word, which the IPU loads only from 8-byte
 * boundaries, so every cell must start on one (the section does: it follows 8-byte
 * records). Halo cells carry none: only their sites are read. With sh_rest 0 the
 * section is empty. */
typedef struct foam_shard_header {
  uint32_t magic;    /* FOAM_SHARD_MAGIC */
  uint16_t shard_id;
  uint16_t depth;    /* k-d tree depth: shard ids have this many bits */
  uint32_t n_local;
  uint32_t n_halo;
  uint32_t n_adj;
  uint32_t cells_offset;
  uint32_t halo_offset;
  uint32_t adj_offset;
  uint32_t total_bytes; /* whole blob, padded to a multiple of 8 */
  uint16_t sh_rest;     /* SH coefficients per channel beyond DC: 0, 3, 8 or 15 (degree 0..3) */
  uint16_t sh_f32;      /* 1: SH coefficients are float, 0: binary16 */
} foam_shard_header;
FOAM_STATIC_ASSERT(sizeof(foam_shard_header) == 40, "foam_shard_header is 40 bytes");
FOAM_STATIC_ASSERT((sizeof(foam_shard_header) & 7u) == 0, "the cells after the header start 8-aligned");

/* Byte offset of a shard blob's foam_cell_info records. */
static inline uint32_t foam_shard_info_offset(const foam_shard_header *h) {
  return h->halo_offset + h->n_halo * (uint32_t)sizeof(foam_halo);
}

/* Bytes of one local cell's SH coefficients in the SH section (partition's
 * ShPayload::cell_bytes is the host's side of this). */
static inline uint32_t foam_sh_cell_bytes(uint32_t sh_rest, uint32_t sh_f32) {
  return sh_f32 ? 12u * sh_rest : (6u * sh_rest + 7u) & ~7u;
}

/* Most SH coefficients per channel beyond DC (degree 3). */
#define FOAM_SH_MAX_REST 15u
/* The real SH basis constants of the original (3DGS), for degrees 1 to 3: the
 * device's march and the host's reference renderer both read them from here. */
#define FOAM_SH_C1 0.4886025119029199
#define FOAM_SH_C2_0 1.0925484305920792
#define FOAM_SH_C2_1 -1.0925484305920792
#define FOAM_SH_C2_2 0.31539156525252005
#define FOAM_SH_C2_3 -1.0925484305920792
#define FOAM_SH_C2_4 0.5462742152960396
#define FOAM_SH_C3_0 -0.5900435899266435
#define FOAM_SH_C3_1 2.890611442640554
#define FOAM_SH_C3_2 -0.4570457994644658
#define FOAM_SH_C3_3 0.3731763325901154
#define FOAM_SH_C3_4 -0.4570457994644658
#define FOAM_SH_C3_5 1.445305721320277
#define FOAM_SH_C3_6 -0.5900435899266435

/* ---- camera (broadcast to every tile, changed only between drained frames) -- */

typedef struct foam_camera {
  float c2w[12];        /* row-major 3x4 [R | origin], OpenCV axes (x right, y down, z forward) */
  float fx, fy, cx, cy; /* pinhole intrinsics in pixels; pixel centres at +0.5 */
  uint32_t width, height;
  float t_stop;         /* a ray stops once transmittance T <= t_stop */
  uint16_t start_shard; /* shard and local cell holding the site nearest the camera */
  uint16_t start_cell;
  /* The framebuffer is dealt out pixel by pixel over the leaves of the k-d tree:
   * pixel p lives in slot p / homes of the shard with id (p % homes) << home_shift
   * (foam_home): the leaf's shard, or the first half of a split leaf. Rays finish in
   * scan order, roughly, so contiguous slices would send a whole row's finished
   * rays to two tracers under one router. */
  uint32_t slice_pixels; /* framebuffer slots per tracer */
  uint32_t frame;        /* frame number, for sanity checks */
  uint32_t homes;        /* tracers holding framebuffer slices: the k-d tree's leaves */
  uint32_t home_shift;   /* 1 if some leaf is split (shard ids have a bit more), else 0 */
} foam_camera;
FOAM_STATIC_ASSERT(sizeof(foam_camera) == 96, "foam_camera is 96 bytes");

/* ---- camera region (injector tiles) -------------------------------------------
 * Copies of the shards an injector's rays cross first, written by the host with
 * each camera:
 *   foam_region_header | shard blob | shard blob | ...
 * The injector marches its new primary rays through them before they enter the
 * tree, so the shards every primary ray crosses first are not a queue of their
 * own (paper §5.4: the camera's shard serialises the frame). Shards are listed in
 * ascending id order, and the entries past `count` hold FOAM_INVALID_SHARD (above
 * every id), so the injector finds one by eight fixed halvings of all 256 entries
 * (march.h foam_region_find_fixed). Offsets are bytes from the region start. */
#define FOAM_REGION_MAX_SHARDS 256
typedef struct foam_region_header {
  uint32_t count;       /* shards held */
  uint32_t total_bytes; /* header and blobs */
  uint16_t shard[FOAM_REGION_MAX_SHARDS];
  uint32_t offset[FOAM_REGION_MAX_SHARDS];
} foam_region_header;
FOAM_STATIC_ASSERT(sizeof(foam_region_header) == 1544, "foam_region_header is 1544 bytes");
FOAM_STATIC_ASSERT((sizeof(foam_region_header) & 7u) == 0, "the blobs after the directory start 8-aligned");

/* ---- block list (injector tiles) ---------------------------------------------
 * The pixels an injector emits, as blocks of block_w x block_h pixels (foam_params)
 * in the order the host chose for the frame (longest sampled paths first):
 *   uint32_t count | foam_block x block_slots
 * A block is named by its top-left pixel; pixels outside the frame are skipped. */
typedef struct foam_block {
  uint16_t x, y;
} foam_block;
FOAM_STATIC_ASSERT(sizeof(foam_block) == 4, "foam_block is 4 bytes");

/* A shard visit's share of a worker's march budget, in 1/256 of a cell step: what
 * a visit costs beyond its steps (opening the shard, finding it among the tile's
 * copies, rounding the ray's fields: about 251 IPU instructions in the measured cost
 * table) against a cell step with its ~15 neighbours tested (about 580): 148 while a
 * visit wrote and read the ray's payload and took 364, scaled by the measured costs
 * since. */
#define FOAM_BUDGET_VISIT_Q8 102
/* FOAM_BUDGET_VISIT_Q8 and FOAM_BUDGET_RAY_Q8 for an injector, scaled from the same
 * 148 and 160 by its own costs: a visit about 236 IPU instructions (it finds its
 * shard among up to 256 by fixed halvings), a ray about 474 at SH degree 2 (its
 * payload's one write, march.h foam_march_copies) where it took 372. A ray has cost
 * about 441 since the march builds the rays it marches first from their pixel words
 * (ray.h foam_ray_primary); the weight that follows, 190, made nine modelled frames
 * 0.7 ms longer in all (docs/performance-log.md, session 76), so 204 stays. */
#define FOAM_BUDGET_INJECTOR_VISIT_Q8 96
#define FOAM_BUDGET_INJECTOR_RAY_Q8 204
/* A cell step's share of the budget, in 1/256 of a step with 15 faces: what the step
 * costs itself and what each face tested adds (about 145 and 30 IPU instructions in
 * the measured cost table). With steps alone, the tiles at their budget took 860 to
 * 1,160 cycles a step as their cells had fewer or more faces, and an iteration waits
 * for the dearest. */
#define FOAM_BUDGET_STEP_Q8 62
#define FOAM_BUDGET_FACE_Q8 13
/* A ray marched on, in 1/256 of a step of 15 faces: loading it, rebuilding its
 * camera ray and SH basis, and writing its payload once as it leaves the march
 * (about 490 to 520 IPU instructions in the measured cost table, beyond its visit;
 * 160 for the 410 to 440 before that write moved here from every visit). */
#define FOAM_BUDGET_RAY_Q8 189
/* The largest march budget (foam_params.march_budget, steps a worker per step): the
 * march counts it in 1/256 of a step in 32 bits and compares a step's spending as a
 * signed difference (march.h foam_budget_limit), so it must stay far below 2^23. */
#define FOAM_MAX_MARCH_BUDGET 65536u

/* ---- framebuffer slice ---------------------------------------------------- */

/* One pixel of a tracer's framebuffer slice. `writes` counts how many finished
 * rays landed here: a complete frame has exactly one per pixel. */
typedef struct foam_pixel {
  float r, g, b;     /* composited colour, not yet over a background */
  float opacity;     /* 1 - T */
  float depth;       /* 50% transmittance quantile distance, -1 if never reached */
  uint16_t router_hops, tracer_hops; /* filled when hop counting is on */
  uint32_t writes;
} foam_pixel;
FOAM_STATIC_ASSERT(sizeof(foam_pixel) == 28, "foam_pixel is 28 bytes");

/* A finished ray kept by the tracer it finished on. Delivering every finished ray
 * to its pixel's home tracer costs a trip through the router tree, mostly across
 * the root; so each tracer keeps a result store and writes the rays that finish
 * on it there, as long as there is room. Only the rest travel home. The host reads
 * the stores with the slices, and of each worker's part as many slots as the worker
 * counted (foam_tracer_ctl.work[w][FOAM_TW_RESULTS]): the frame start does not clear
 * the stores. `pixel` is the pixel index + 1 (never 0 in a counted slot). */
typedef struct foam_result {
  uint32_t pixel;
  float r, g, b, opacity, depth;
  uint16_t router_hops, tracer_hops;
} foam_result;
FOAM_STATIC_ASSERT(sizeof(foam_result) == 28, "foam_result is 28 bytes");

/* ---- ray payloads (paper Tab. 1) -------------------------------------------
 * All three layouts start with the destination, so routers read one uint16_t at
 * offset 0 and move `ray bytes` without knowing the layout. Origins and
 * directions are rebuilt on the tile from foam_camera and the pixel (x, y). */

typedef struct foam_ray_dest {
  uint16_t shard; /* destination tracer, or FOAM_INVALID_SHARD for an empty slot */
  uint16_t cell;  /* local cell to enter, or FOAM_FINISHED_CELL */
} foam_ray_dest;
FOAM_STATIC_ASSERT(sizeof(foam_ray_dest) == 4, "foam_ray_dest is 4 bytes");

/* The pixel and the ray's cell-step count share one word, because the 20-byte
 * payload has no room for a separate counter and the original renderer stops a
 * ray after FOAM_MAX_CELL_STEPS cells in total, across every shard it visits:
 *   bits 0..10 pixel column, bits 11..21 pixel row, bits 22..31 cells marched.
 * Hence images are at most 2048 x 2048 (the framebuffer of larger ones does not
 * fit the tracer tiles anyway). */
#define FOAM_PX_BITS 11u
#define FOAM_MAX_IMAGE_SIDE (1u << FOAM_PX_BITS)
#define FOAM_PX_MASK (FOAM_MAX_IMAGE_SIDE - 1u)
#define FOAM_STEPS_SHIFT (2u * FOAM_PX_BITS)

/* Default: t, T and colour in fp32. */
typedef struct foam_ray_fp32 {
  foam_ray_dest dest;
  uint32_t px; /* column | row << 11 | steps << 22 */
  float t, T;
  float r, g, b;
} foam_ray_fp32;
FOAM_STATIC_ASSERT(sizeof(foam_ray_fp32) == 28, "fp32 payload is 28 bytes");

/* Mixed: t and T in half, colour in fp32. */
typedef struct foam_ray_mixed {
  foam_ray_dest dest;
  uint32_t px;
  uint16_t t, T; /* half */
  float r, g, b;
} foam_ray_mixed;
FOAM_STATIC_ASSERT(sizeof(foam_ray_mixed) == 24, "mixed payload is 24 bytes");

/* All half + depth: the 2-byte pad needed for 4-byte exchange carries depth. */
typedef struct foam_ray_half {
  foam_ray_dest dest;
  uint32_t px;
  uint16_t t, T;    /* half */
  uint16_t r, g, b; /* half */
  uint16_t depth;   /* half; 50% quantile depth, negative if not reached yet */
} foam_ray_half;
FOAM_STATIC_ASSERT(sizeof(foam_ray_half) == 20, "half payload is 20 bytes");

/* Appended to every payload only when hop statistics are requested, so the
 * default payload stays 20 bytes. */
typedef struct foam_ray_hops {
  uint16_t router; /* router tiles visited */
  uint16_t tracer; /* tracer tiles visited */
} foam_ray_hops;
FOAM_STATIC_ASSERT(sizeof(foam_ray_hops) == 4, "hop counters are 4 bytes");

/* A ray paused inside a shard (a worker's march budget ended there): what its
 * payload rounds, in fp32, kept on the tile beside its slot (march.h). */
typedef struct foam_paused_ray {
  uint16_t shard, cell; /* where it goes on: a tracer's slot says FOAM_PAUSED_SHARD */
  float t, T;
  float r, g, b;
  float depth;
} foam_paused_ray;
FOAM_STATIC_ASSERT(sizeof(foam_paused_ray) == 28, "a paused ray's state is 28 bytes");

typedef enum foam_ray_layout {
  FOAM_LAYOUT_FP32 = 0,
  FOAM_LAYOUT_MIXED = 1,
  FOAM_LAYOUT_HALF = 2
} foam_ray_layout;

/* ---- links between tiles ----------------------------------------------------
 * Every edge of the device (codelets/graph/spec.h: tree edges child <-> parent and
 * root <-> spill store, side links tracer <-> tracer, an injector's lane to the root
 * and its direct lanes to the routers under the root) has one buffer per
 * direction: the sender fills its outbox during compute, the exchange copies it
 * whole onto the receiver's inbox. A buffer is
 *   header | capacity x ray stride
 * with rays packed at the head and the slot after the last one marked with
 * FOAM_INVALID_SHARD (when not full). Every header is 16 bytes and starts with the
 * count of rays that follow it. Back-pressure is credit based: the receiver of a
 * buffer learns from the header coming back how many rays it may send over the
 * same edge in its next compute step; a sender never exceeds it, so no ray is ever
 * dropped. */

/* The header of tree edges and side links, both ways. */
typedef struct foam_link_header {
  uint32_t count;    /* rays in this buffer */
  uint32_t credit;   /* rays the receiver may send back next step */
  uint32_t finished; /* upward links: pixels finished so far in the sender's subtree */
  uint32_t pending;  /* rays waiting at the sender (demand; statistics) */
} foam_link_header;
FOAM_STATIC_ASSERT(sizeof(foam_link_header) == 16, "foam_link_header is 16 bytes");

/* An injector's lanes (its lane to the root and its direct lanes) carry rays up
 * only; down them comes a bare foam_inject_down. Up its lane to the root the
 * injector also reports what it emitted and would emit: the root counts every ray
 * in flight from these. On direct lanes `emitted` and `next` are 0. */
typedef struct foam_inject_up {
  uint32_t count;   /* rays on this lane */
  uint16_t next;    /* rays the injector would emit next step (room beside its held rays) */
  uint16_t left;    /* pixels it has yet to emit, in FOAM_LEFT_UNITs rounded up, at most
                       FOAM_LEFT_MAX: the root shares its allowance by these, so that
                       injectors with more left emit faster and all finish together */
  uint32_t emitted; /* primary rays it emitted this step, wherever they went */
  uint32_t pending; /* rays that want this lane: those on it and those held back */
} foam_inject_up;
#define FOAM_LEFT_UNIT 16u
#define FOAM_LEFT_MAX 0xFFFFu
FOAM_STATIC_ASSERT(sizeof(foam_inject_up) == 16, "foam_inject_up is 16 bytes");

typedef struct foam_inject_down {
  uint32_t count;     /* 0: nothing goes down an injector's lane */
  uint32_t credit;    /* rays the lane may carry next step */
  uint32_t reserved;
  uint32_t allowance; /* the root's lane: new rays the injector may emit next step,
                         so that every ray in flight still fits the spill store */
} foam_inject_down;
FOAM_STATIC_ASSERT(sizeof(foam_inject_down) == 16, "foam_inject_down is 16 bytes");

/* Wide routers shorten paths: with 16 children per router a 1024-shard tree has
 * three router levels instead of five. */
#define FOAM_MAX_FANOUT 16
/* foam_params.direct_lane: no direct lane to that child of the root. */
#define FOAM_NO_DIRECT_LANE 0xFFu

/* A router's lanes to its children's replicas (foam_params.replicas). */
typedef struct foam_replica_lanes {
  uint8_t replica_bits[FOAM_MAX_FANOUT];
  uint8_t replica_lane[FOAM_MAX_FANOUT];
} foam_replica_lanes;

/* What a tile knows of its role, its lanes and its stores, fixed when the graph is
 * built. The host's plan writes the role's own fields; the fields marked [lanes]
 * the graph builder derives from the spec's edges (codelets/graph/topology.cpp),
 * so a tile's lanes are always the ones its edges give it. */
typedef struct foam_params {
  /* every role */
  uint32_t layout;         /* foam_ray_layout */
  uint32_t ray_bytes;      /* payload stride: 28/24/20, +4 with hop counters */
  uint32_t hops;           /* 1 when foam_ray_hops follows each payload */
  uint32_t link_capacity;  /* [lanes] rays per buffer of a router's child lanes, or of
                              the one edge of a tracer, the spill store or an injector */
  uint32_t queue_capacity; /* rays per router queue / tracer pending store / spill store / injector queue */
  /* routing */
  uint32_t shard;          /* tracer: its shard id; router: its subtree's prefix (a shard
                              is in the subtree iff id >> (level_shift + log2 fanout) == prefix) */
  uint16_t level_shift;    /* router: shard-id bits below its children (child = (id >>
                              shift) & (fanout-1)); injector [lanes]: the root's, which
                              pick its direct lane (with the root's route_bits) */
  uint16_t fanout;         /* router [lanes]: child lanes, 2..FOAM_MAX_LANES: the 2^route_bits
                              children its shard-id bits choose, then their replicas' tiles */
  uint16_t parent_capacity; /* router [lanes]: rays per buffer of the edge to its parent */
  /* router [lanes]: lanes from injectors after its child lanes (the root's from
   * every injector, and with direct lanes those of the routers under it); rays come
   * in on them, a bare foam_inject_down goes out. */
  uint16_t inject_lanes;
  uint16_t inject_capacity; /* router [lanes]: rays per buffer of its injector lanes */
  /* router: log2 of the children its shard-id bits choose between (child = (id >>
   * level_shift) & (2^route_bits - 1)); 0 for a router whose children are all tiles of
   * one shard, the id `shard` (a replicas' router of its own). Injector [lanes]: the
   * root's. */
  uint16_t route_bits;
  /* root router: never more rays injected and unfinished than this (the spill
   * store's capacity: the root's escape valve must take every ray in flight).
   * Injector: what it emits in a frame's first step, before the root's first
   * allowance can reach it (two steps: the root hears an injector's ask a step
   * after it is made, and answers a step later). The plan gives each injector its
   * share of the root's limit on a frame with nothing in flight, the injectors'
   * together within it, so the root counts these rays in flight like any others. */
  uint32_t max_in_flight;
  /* tracer */
  uint32_t result_slots;   /* result-store slots per worker (each worker of TracerMarch
                              owns a contiguous part, so results are written without sharing) */
  /* [lanes] side links: direct edges to other tracers (src/device/sides.rs chooses
   * them). A ray bound for side_shard[k] skips the router tree when link k has
   * credit, and takes the tree when it has not. Links to several tiles of one
   * replicated shard are neighbours in class order, and the ray's class picks the
   * first tried (side_class; src/device/replicas.rs places them). */
  uint32_t side_links;
  uint32_t side_capacity;  /* [lanes] rays per side-link buffer, both directions */
  union {
    uint16_t side_shard[FOAM_MAX_SIDES]; /* tracer [lanes]: the shard at the other end of each */
    /* router: the tiles of a hot shard's replicas (src/device/replicas.rs). Child c's
     * shard has 2^replica_bits[c] tiles (0: one): the child's own lane c, then lanes
     * replica_lane[c] .. replica_lane[c] + 2^replica_bits[c] - 2 after the
     * 2^route_bits children. A ray bound for it goes to the tile its pixel hashes to
     * (foam_replica_class; class 0 is lane c), so each tile marches a fixed share of
     * the shard's pixels, and no router of its own stands between them and this one.
     * Beside the tracers' side_shard: a tile is one or the other, and a tracer's room
     * (which the cut packs to the byte) stays as it was. */
    foam_replica_lanes replicas;
    /* injector [lanes]: its direct lane to the root's child k, or FOAM_NO_DIRECT_LANE,
     * where rays for that child take the lane to the root. An injector has lanes
     * only to the children its sampled rays leave its camera region for
     * (src/device/direct.rs): every router under the root takes each lane it hears
     * whole every step, and most injectors send to one or two of them. */
    uint8_t direct_lane[FOAM_MAX_FANOUT];
  };
  /* injector */
  uint16_t batch_kind;     /* pixel order inside a block: 0 rows, 1 columns */
  /* router: rays of upward credit it grants each child beyond the child's demand
   * while its queue has room for that on every child (0: the demand only). A quiet
   * child's ray then goes up in the step it arrives instead of waiting a step for
   * its demand to be heard and another for the credit to come back. */
  uint16_t idle_credit;
  uint16_t block_w, block_h; /* pixels per block; scan-order batches are blocks of whole rows or columns */
  uint32_t drain_iters;    /* idle iterations after each block */
  uint32_t block_slots;    /* entries its block list has room for */
  /* Cell steps a worker of InjectorMarch (injector) or TracerMarch (tracer) marches
   * in one step, each counted by its faces (FOAM_BUDGET_STEP_Q8 + FOAM_BUDGET_FACE_Q8 a
   * face, in 1/256 of a step of 15 faces), each shard visit as FOAM_BUDGET_VISIT_Q8
   * and each ray marched on as FOAM_BUDGET_RAY_Q8 (march.h foam_budget_q8), before
   * it leaves its remaining rays, unmarched, for the next step (0: no limit); a
   * tracer holds them at the front of its pending store (foam_tracer_ctl.held). The
   * ray its budget ends in pauses after the step that spends it (foam_paused_ray). */
  uint32_t march_budget;
  /* [lanes] direct lanes to routers under the root (direct_lane[k] to the root's
   * child k, k = (id >> level_shift) & (2^route_bits - 1)), which carry primary rays
   * past the root; 0: none */
  uint16_t direct_lanes;
  uint16_t direct_capacity; /* [lanes] rays per direct-lane buffer going up */
  /* Tests only, 0 in every plan: rays of room a tracer or the spill store counts
   * beyond its store when it grants credit, an over-grant that lets tests show the
   * overflow counters and the host's checks catch a credit violation. */
  uint32_t extra_credit;
  /* tracer [lanes]: which tile of its shard the tracer at the other end of each
   * side link is, as the routers pick them (ray.h foam_replica_class): log2 of the
   * shard's tiles << 4 | its index (0 the shard's own tracer, i the tile on the
   * i-th of its replica lanes; 0 for a shard of one tile), with
   * FOAM_SIDE_CLASS_ALIGNED where those tiles hang on lanes of the shard's router
   * (not under a replicas' router of their own). A ray bound for a replicated
   * shard takes the link to its class's tile, the one a router would send it to,
   * where this tile has that link; else, with FOAM_SIDE_CLASS_ALIGNED, the tree,
   * and without it the link its class picks modulo the links. */
  uint8_t side_class[FOAM_MAX_SIDES];
} foam_params;
FOAM_STATIC_ASSERT(sizeof(foam_params) == 128, "foam_params is 128 bytes");

/* Cumulative counters every role keeps for statistics (read once per frame). */
typedef struct foam_tile_stats {
  uint32_t rays_in;       /* tracer, injector: rays marched (tracer hops); router: rays forwarded (router hops) */
  uint32_t cell_steps;    /* tracer, injector: cells marched */
  uint32_t pixels;        /* tracer: pixels written into its slice; injector: rays emitted */
  uint32_t peak_queue;    /* highest occupancy of its queues/pending store */
  uint32_t overflow;      /* rays that found no room: must stay 0 (credits forbid it) */
  uint32_t misrouted;     /* rays delivered to the wrong tile: must stay 0 */
  uint32_t iterations;    /* compute steps seen */
  uint32_t side_sent;     /* rays sent past the router tree: a tracer's over its side links, an injector's on its direct lanes */
} foam_tile_stats;
FOAM_STATIC_ASSERT(sizeof(foam_tile_stats) == 32, "foam_tile_stats is 32 bytes");

/* Host-visible progress of the frame, kept on the spill tile (finished, spilled,
 * iterations, overflow) and on every injector (injected, iterations, total). */
typedef struct foam_frame_status {
  uint32_t injected;  /* primary rays emitted */
  uint32_t finished;  /* pixels finished, summed from every tracer's count (the spill store's finishes) */
  uint32_t spilled;   /* rays held in the spill store now */
  uint32_t iterations;
  uint32_t total;     /* pixels in the frame */
  uint32_t overflow;
  uint32_t reserved[2];
} foam_frame_status;
FOAM_STATIC_ASSERT(sizeof(foam_frame_status) == 32, "foam_frame_status is 32 bytes");

/* ---- per-role control state (codelet-private meaning, host allocates and zeroes) -- */

#define FOAM_WORKERS 6
/* Injector tiles hang off the root on lanes after its children. Each marches its
 * share of the primary rays through a copy of the camera region, the frame's
 * busiest shards: the more of them, the less each marches. */
#define FOAM_MAX_INJECTORS 512
/* A router's child lanes: its children, and the tiles of its children's replicas
 * (foam_params.replica_bits), which need no router of their own. */
#define FOAM_MAX_LANES 32
/* Router ray categories: DOWN to child lane c, TURN to child lane c, UP. */
#define FOAM_CAT_DOWN 0
#define FOAM_CAT_TURN FOAM_MAX_LANES
#define FOAM_CAT_UP (2 * FOAM_MAX_LANES)
#define FOAM_CATS (2 * FOAM_MAX_LANES + 1)

/* A router's control block. RouterCount fills `counts` (one row per worker, so
 * workers write disjoint words); RouterPlan turns them into ranks and lane/queue
 * offsets; RouterForward moves every ray by its rank. Queues are double-buffered
 * (parity) so that forwarding never overwrites a ray not yet read.
 *
 * A root has a lane per injector (a router under it, with direct lanes, as many):
 * RouterPlan is one worker, so it never walks them. Each worker of RouterCount sums
 * its own injector lanes (foam_inject_chunk) into `lane_sums`, RouterPlan decides
 * from the sums alone how the credit and the allowance are shared (the `share_*`
 * words), and each worker of RouterForward writes its lanes' headers down from the
 * prefix of the lanes before them. */
#define FOAM_LS_DEMAND 0  /* rays the lanes want to send up (foam_inject_up pending, clamped) */
#define FOAM_LS_ASKED 1   /* root: rays the injectors ask to emit (next, clamped) */
#define FOAM_LS_WEIGHT 2  /* root: their pixels left (the allowance's weights) */
#define FOAM_LS_EMITTED 3 /* root: primary rays they emitted last step */
#define FOAM_LS_COUNT 4
typedef struct foam_router_ctl {
  uint32_t parity;         /* queue half that holds the current rays */
  uint32_t up_count, down_count;         /* rays queued now */
  uint32_t src_up_count, src_down_count; /* rays in the halves being drained this step */
  uint32_t granted[FOAM_MAX_LANES + 1]; /* credit given last step per child lane and (last) to the parent, still outstanding */
  uint32_t granted_up;                   /* credit given last step over every upward lane (children and injectors) */
  uint32_t counts[FOAM_WORKERS][FOAM_CATS];
  uint32_t base[FOAM_WORKERS][FOAM_CATS]; /* rank of each worker's first ray per category (row 0 unused: 0) */
  uint32_t send[FOAM_CATS];               /* ranks below this leave on their own lane */
  uint32_t escape[FOAM_MAX_LANES];       /* blocked turns sent up instead */
  uint32_t lane_off[FOAM_CATS];           /* lane slot of rank 0 */
  uint32_t esc_off[FOAM_MAX_LANES];      /* parent-lane slot of the first escaped turn */
  uint32_t stay_off[FOAM_CATS];           /* queue slot of the first staying rank */
  uint32_t injected;                      /* root: rays its injectors emitted this frame */
  uint32_t lane_sums[FOAM_WORKERS][FOAM_LS_COUNT]; /* RouterCount: each worker's sums over its injector lanes */
  /* RouterPlan for RouterForward: lanes share `share_avail` rays of upward credit by
   * demand when they want more (`share_wanted`), the injector lanes after the
   * children's `share_before`; the root's injectors share `share_room` rays of
   * allowance by weight (pixels left, the prefix shifted right by `share_shift`)
   * when they ask more (`share_asked`). */
  uint32_t share_avail, share_wanted, share_before;
  uint32_t share_room, share_asked, share_shift;
  uint32_t allowed_by[FOAM_WORKERS];      /* root: allowance each RouterForward worker gave last step, still outstanding */
} foam_router_ctl;
FOAM_STATIC_ASSERT(sizeof(foam_router_ctl) == 4460, "foam_router_ctl is 4460 bytes");

/* Per-worker counters of a tracer, written by TracerMarch (one row per worker). */
/* MARCHED, STEPS, NEIGHBOURS in a row: foam_march_copies adds to them (as to an
 * injector's), and RAYS after them: foam_budget_q8 reads the four. */
#define FOAM_TW_MARCHED 0
#define FOAM_TW_STEPS 1
#define FOAM_TW_NEIGHBOURS 2 /* faces tested by the march (the cost model's unit) */
#define FOAM_TW_RAYS 3       /* rays marched on, foam_march_copies (the cost model's) */
#define FOAM_TW_MISROUTED 4
#define FOAM_TW_RESULTS 5 /* result-store slots used this frame */
#define FOAM_TW_LOADED 6  /* rays loaded from the inboxes (the cost model's) */
#define FOAM_TW_PIXELS 7
#define FOAM_TW_COUNTERS 8
FOAM_STATIC_ASSERT(FOAM_TW_STEPS == FOAM_TW_MARCHED + 1 && FOAM_TW_NEIGHBOURS == FOAM_TW_MARCHED + 2 &&
                       FOAM_TW_RAYS == FOAM_TW_MARCHED + 3,
                   "foam_march_copies adds to three counters in a row, foam_budget_q8 reads four");
typedef struct foam_tracer_ctl {
  uint32_t pending;   /* rays waiting in the pending store for credit */
  uint32_t granted;   /* credit given to the parent last step, still outstanding */
  /* Of the held rays, the prefix no worker reached this step, which TracerSend passed
   * over in place; the other `held - unread` it read and kept unmarched, each a slot
   * copy (the cost model charges them per ray). */
  uint32_t unread;
  uint32_t held;      /* of the pending rays, those left unmarched (march_budget) */
  uint32_t work[FOAM_WORKERS][FOAM_TW_COUNTERS];
  uint32_t side_granted[FOAM_MAX_SIDES]; /* credit given on each side link last step */
  /* Per worker, a word the two vertices hand each other (the tile has no room to
   * spare for two). TracerSend to TracerMarch: 1 + the pending slot of the ray the
   * worker paused inside a shard when its march_budget ran out (FOAM_PAUSED_SHARD;
   * 0: none), where TracerSend keeps it among the rays waiting for credit, past the
   * `held` ones the workers share out; the worker marches it on first next step
   * (from its fp32 state in `paused`, which TracerMarch writes), and no other worker
   * reads its slot. TracerMarch to TracerSend: the lowest of the held slots the
   * worker marched (`held` if none). The workers take the held rays from the last
   * one down, so the slots below every worker's are the held rays no worker
   * reached, which stay where they are: TracerSend counts them without reading them. */
  uint32_t handoff[FOAM_WORKERS];
  foam_paused_ray paused[FOAM_WORKERS];
} foam_tracer_ctl;
FOAM_STATIC_ASSERT(sizeof(foam_tracer_ctl) == 464, "foam_tracer_ctl is 464 bytes");

typedef struct foam_spill_ctl {
  uint32_t spill;      /* rays in the spill store */
  uint32_t granted;    /* credit given to the root last step */
  /* Iterations this host call may still run, the steps loop's predicate where the
   * frame ends on the device (spec.h RenderSpec::endsOnDevice): each call starts it
   * at the repeat count, and SpillStore counts it down, to 0 once every tracer's
   * count of finished pixels (copied to it each step) sums to the frame's, so that
   * the call ends with the frame instead of at the next multiple of the repeat count. */
  uint32_t steps_left;
  uint32_t reserved;
} foam_spill_ctl;
FOAM_STATIC_ASSERT(sizeof(foam_spill_ctl) == 16, "foam_spill_ctl is 16 bytes");

/* Per-worker counters of an injector, written by InjectorMarch (one row per worker);
 * VISITS, STEPS, NEIGHBOURS in a row as a tracer's. */
#define FOAM_IW_VISITS 0
#define FOAM_IW_STEPS 1
#define FOAM_IW_NEIGHBOURS 2
#define FOAM_IW_RAYS 3 /* rays marched */
#define FOAM_IW_COUNTERS 4
FOAM_STATIC_ASSERT(FOAM_IW_STEPS == FOAM_IW_VISITS + 1 && FOAM_IW_NEIGHBOURS == FOAM_IW_VISITS + 2 &&
                       FOAM_IW_RAYS == FOAM_IW_VISITS + 3,
                   "foam_march_copies adds to three counters in a row, foam_budget_q8 reads four");
typedef struct foam_injector_ctl {
  uint32_t next;       /* next entry of the block list */
  uint32_t block_left; /* pixels of the current block not yet emitted (0: none open) */
  uint32_t drain_left; /* idle iterations left before the next block */
  uint32_t march_begin, march_end; /* queue slots of the newest primary rays, not yet marched */
  uint32_t held;       /* marched rays no lane had credit for, first in its queue */
  uint32_t more;       /* 1 while blocks are left to emit (Injector tells InjectorSend) */
  uint32_t unmarched;  /* held rays no worker reached within its march_budget, and those
                          stopped at a shard boundary (`stopped`): they are among the
                          held ones from march_begin on, and march first */
  uint32_t work[FOAM_WORKERS][FOAM_IW_COUNTERS];
  /* Per worker, 1 + the queue slot of the ray it left inside the region when its
   * march_budget ran out (0: none): it stays with the held ones and that worker
   * marches it on first next step, from `paused`. */
  uint32_t stopped[FOAM_WORKERS];
  /* Per worker, the fp32 state of that ray, paused inside a shard after the step
   * that spent the budget (march.h foam_march_copies): its slot's payload holds the rest,
   * rounded as between tiles, and marched on from both it is the same ray. */
  foam_paused_ray paused[FOAM_WORKERS];
} foam_injector_ctl;
FOAM_STATIC_ASSERT(sizeof(foam_injector_ctl) == 320, "foam_injector_ctl is 320 bytes");

#endif /* FOAM_LAYOUT_H */
