//! Codelets run one vertex at a time on the host runtime, fed states a whole frame
//! may never reach: a router's credit arithmetic (RouterCount's sums over its
//! injector lanes, RouterPlan, and RouterForward answering the injector lanes) on
//! randomised lane headers and queue states, and the marching of rays (foam/march.h through TracerMarch) cell by
//! cell against the reference tracer on packed shards.

use std::mem::size_of;

use foam_ipu::synth::rng::Rng;
use foam_layout::{
    FOAM_CAT_DOWN, FOAM_CAT_TURN, FOAM_CAT_UP, FOAM_CATS, FOAM_INVALID_SHARD, FOAM_LS_ASKED, FOAM_LS_DEMAND,
    FOAM_LS_EMITTED, FOAM_LS_WEIGHT, FOAM_MAX_LANES, FOAM_WORKERS, foam_link_header, foam_params, foam_replica_lanes,
    foam_router_ctl, foam_tile_stats,
};
use poplar_bridge::{ComputeSet, ElemType, Session, Tensor};

mod common;

fn bytes_of<T: Copy>(v: &T) -> Vec<u8> {
    // SAFETY: layout.h records are plain fixed-width fields without padding.
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), size_of::<T>()) }.to_vec()
}

fn read_as<T: Copy>(b: &[u8]) -> T {
    assert_eq!(b.len(), size_of::<T>());
    // SAFETY: as above; read_unaligned copes with any alignment.
    unsafe { std::ptr::read_unaligned(b.as_ptr().cast()) }
}

/// A whole number in 0..=n.
fn upto(rng: &mut Rng, n: u32) -> u32 {
    (rng.next_u64() % (n as u64 + 1)) as u32
}

// ---- RouterPlan -------------------------------------------------------------

const RAY_BYTES: u32 = 20;

/// Lanes as foam/lanes.h packs them: children, injector lanes (rays in, a bare
/// header out), then the parent.
fn parent_lane(p: &foam_params) -> usize {
    p.fanout as usize + p.inject_lanes as usize
}

fn lane_capacity(p: &foam_params, l: usize, out: bool) -> u32 {
    if l < p.fanout as usize {
        p.link_capacity
    } else if l < parent_lane(p) {
        if out { 0 } else { p.inject_capacity as u32 }
    } else {
        p.parent_capacity as u32
    }
}

fn lane_offset(p: &foam_params, l: usize, out: bool) -> usize {
    (0..l).map(|k| size_of::<foam_link_header>() + (lane_capacity(p, k, out) * RAY_BYTES) as usize).sum()
}

fn random_router(rng: &mut Rng) -> foam_params {
    // A tree router's 2 to 16 children, or up to 32 child lanes with replicas'.
    let fanout = if rng.next_u64().is_multiple_of(2) { 1 << (1 + upto(rng, 3)) } else { 2 + upto(rng, 30) };
    // Up to 20 injector lanes: some workers own none, some several.
    let inject_lanes = if rng.next_u64().is_multiple_of(2) { 0 } else { 1 + upto(rng, 19) };
    let (link, parent) = (1 + upto(rng, 47), 1 + upto(rng, 47));
    let queue = link.max(parent) + upto(rng, 200);
    foam_params {
        ray_bytes: RAY_BYTES,
        layout: foam_layout::foam_ray_layout_FOAM_LAYOUT_HALF,
        link_capacity: link,
        parent_capacity: parent as u16,
        queue_capacity: queue,
        fanout: fanout as u16,
        inject_lanes: inject_lanes as u16,
        inject_capacity: if inject_lanes > 0 { 1 + upto(rng, 47) as u16 } else { 0 },
        // Half the routers grant idle credit, a few rays (as planned) or more than a
        // link holds.
        idle_credit: match upto(rng, 3) {
            0 | 1 => 0,
            2 => 1 + upto(rng, 3) as u16,
            _ => 1 + upto(rng, 63) as u16,
        },
        // The root caps the rays in flight; routers under it have injector lanes too.
        max_in_flight: if inject_lanes > 0 && !rng.next_u64().is_multiple_of(3) {
            let most = if rng.next_u64().is_multiple_of(2) { 100 } else { 3000 };
            1 + upto(rng, most)
        } else {
            0
        },
        ..Default::default()
    }
}

/// One step's input to a router: its control block and its inboxes' headers.
struct RouterStep {
    ctl: foam_router_ctl,
    inbox: Vec<foam_link_header>,
    /// Rays per category this step, over all workers.
    total: [u32; FOAM_CATS as usize],
}

/// A state the protocol can reach: last step the router reserved queue room for the
/// rays now arriving and for the grants still outstanding, and every sender kept to
/// the credit it was given. Everything else is random.
fn random_step(rng: &mut Rng, p: &foam_params) -> RouterStep {
    let (f, pl, q) = (p.fanout as usize, parent_lane(p), p.queue_capacity);
    let mut c: foam_router_ctl =
        read_as(&(0..size_of::<foam_router_ctl>()).map(|_| rng.next_u64() as u8).collect::<Vec<_>>());
    c.parity = upto(rng, 1);
    // Half the steps of a router with idle credit are quiet (little queued or
    // granted), where the idle credit fits.
    let quiet = if p.idle_credit > 0 && rng.next_u64().is_multiple_of(2) { 8 } else { 1 };
    c.up_count = upto(rng, q / quiet);
    c.down_count = upto(rng, q);
    // Grants from two steps ago (arriving now) and from last step (outstanding),
    // each within its lane and together within the queue room left then.
    let (mut room_up, mut room_down) = (q - c.up_count, q - c.down_count);
    let mut arriving = vec![0u32; pl + 1];
    let first = upto(rng, pl as u32) as usize;
    c.granted_up = 0;
    for k in 0..pl {
        let l = (first + k) % pl;
        let old = upto(rng, lane_capacity(p, l, false).min(room_up) / quiet);
        room_up -= old;
        let granted = upto(rng, lane_capacity(p, l, false).min(room_up) / quiet);
        room_up -= granted;
        c.granted_up += granted;
        if l < f {
            c.granted[l] = granted;
        }
        arriving[l] = upto(rng, old);
    }
    let parent = FOAM_MAX_LANES as usize;
    let old = upto(rng, (p.parent_capacity as u32).min(room_down));
    room_down -= old;
    c.granted[parent] = upto(rng, (p.parent_capacity as u32).min(room_down));
    arriving[pl] = upto(rng, old);

    let mut total = [0u32; FOAM_CATS as usize];
    // The queues in the runs RouterForward leaves them in (RouterPlan's stay_off, the
    // first of each queue at 0): the down queue a run per child, the up queue the
    // rays going up, then the blocked turns by child. Runs may be empty.
    let starts = |rng: &mut Rng, n: u32| {
        let mut v: Vec<u32> = (0..f).map(|_| upto(rng, n)).collect();
        v.sort_unstable();
        v
    };
    let mut down = starts(rng, c.down_count);
    down[0] = 0;
    let turns = starts(rng, c.up_count);
    c.stay_off[FOAM_CAT_UP as usize] = 0;
    total[FOAM_CAT_UP as usize] += turns[0];
    for ch in 0..f {
        let end = |v: &[u32], n: u32| if ch + 1 < f { v[ch + 1] } else { n };
        c.stay_off[FOAM_CAT_DOWN as usize + ch] = down[ch];
        total[FOAM_CAT_DOWN as usize + ch] += end(&down, c.down_count) - down[ch];
        c.stay_off[FOAM_CAT_TURN as usize + ch] = turns[ch];
        total[FOAM_CAT_TURN as usize + ch] += end(&turns, c.up_count) - turns[ch];
    }
    // What children and injectors sent: each goes up or turns down into some child.
    for _ in 0..arriving[..pl].iter().sum::<u32>() {
        let k = upto(rng, p.fanout as u32) as usize;
        total[if k == f { FOAM_CAT_UP as usize } else { FOAM_CAT_TURN as usize + k }] += 1;
    }
    // What the parent sent goes down.
    for _ in 0..arriving[pl] {
        total[FOAM_CAT_DOWN as usize + upto(rng, (p.fanout as u32) - 1) as usize] += 1;
    }
    for k in 0..FOAM_CATS as usize {
        c.counts.iter_mut().for_each(|w| w[k] = 0);
        for _ in 0..total[k] {
            c.counts[upto(rng, FOAM_WORKERS - 1) as usize][k] += 1;
        }
    }
    // What no phase writes for a child the router does not have stays as the frame's
    // reset left it, 0: the categories no ray can take and their escapes.
    for ch in f..FOAM_MAX_LANES as usize {
        for k in [FOAM_CAT_DOWN as usize + ch, FOAM_CAT_TURN as usize + ch] {
            c.base.iter_mut().for_each(|w| w[k] = 0);
            (c.send[k], c.lane_off[k], c.stay_off[k]) = (0, 0, 0);
        }
        (c.escape[ch], c.esc_off[ch]) = (0, 0);
    }
    c.injected = upto(rng, 20_000);
    // The allowance RouterForward's workers gave last step, one of them all of it.
    c.allowed_by = [0; FOAM_WORKERS as usize];
    let giver = upto(rng, FOAM_WORKERS - 1) as usize;
    c.allowed_by[giver] = upto(rng, 3000);
    if p.max_in_flight > 0 && rng.next_u64().is_multiple_of(2) {
        // Some room left under the cap: what the injectors' shares are cut from.
        c.injected = upto(rng, p.max_in_flight / 2);
        c.allowed_by[giver] = upto(rng, p.max_in_flight / 4);
    }
    let inbox = (0..=pl)
        .map(|l| foam_link_header {
            count: arriving[l],
            // The receiver's credit may exceed the lane: the router clamps it. On an
            // injector lane this word is foam_inject_up's `next` and `left`.
            credit: if l < f || l == pl {
                upto(rng, lane_capacity(p, l, false) + 4)
            } else {
                let most_left = if rng.next_u64().is_multiple_of(2) { 3 } else { 0xFFFF };
                upto(rng, 2 * (p.inject_capacity as u32)) | upto(rng, most_left) << 16
            },
            finished: upto(rng, 5000),
            pending: upto(rng, 100 / quiet),
        })
        .collect();
    RouterStep { ctl: c, inbox, total }
}

/// RouterPlan's and RouterForward's output for `s`: the control block, the outbox
/// headers, and the two bytes after each lane's last ray (the empty-slot mark).
struct RouterPlanned {
    ctl: foam_router_ctl,
    out: Vec<foam_link_header>,
    tails: Vec<Option<u16>>,
    stats: foam_tile_stats,
}

/// Which of RouterPlan's limits a step ran into.
#[derive(Default, Debug)]
struct Reached {
    lane_credit: u32,
    escapes: u32,
    parent_credit: u32,
    queue_room: u32,
    in_flight_room: u32,
    weighted: u32,
    idle_credit: u32,
}

/// The invariants of one step of RouterPlan and RouterForward, from its input and
/// output; what limits the step reached is added to `reached`.
fn check_router(
    p: &foam_params,
    s: &RouterStep,
    o: &RouterPlanned,
    before: &foam_tile_stats,
    reached: &mut Reached,
) -> Result<(), String> {
    let (f, pl, q) = (p.fanout as usize, parent_lane(p), p.queue_capacity);
    let (c, n) = (&s.ctl, &o.ctl);
    let t = |k: u32| s.total[k as usize];
    let mut why = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            why.push(what);
        }
    };
    // Each worker's first rank per category follows the workers before it (worker
    // 0's is 0, and RouterForward's worker 0 reads no row of it).
    for k in 0..FOAM_CATS as usize {
        let mut rank = c.counts[0][k];
        for w in 1..FOAM_WORKERS as usize {
            check(n.base[w][k] == rank, format!("base[{w}][{k}] {} != {rank}", n.base[w][k]));
            rank += c.counts[w][k];
        }
    }
    // Down each child lane: never more than its credit (clamped to the lane), and as
    // much as that allows of the rays bound there, first what came from above.
    let mut blocked_turns = 0;
    for ch in 0..f {
        let credit = s.inbox[ch].credit.min(p.link_capacity);
        let (d, tn) = (n.send[FOAM_CAT_DOWN as usize + ch], n.send[FOAM_CAT_TURN as usize + ch]);
        let want = t(FOAM_CAT_DOWN + ch as u32) + t(FOAM_CAT_TURN + ch as u32);
        check(o.out[ch].count == d + tn, format!("lane {ch}: count {} != {d} + {tn}", o.out[ch].count));
        check(o.out[ch].count <= credit, format!("lane {ch}: {} sent on a credit of {credit}", o.out[ch].count));
        check(
            o.out[ch].count == want.min(credit),
            format!("lane {ch}: {} sent of {want} on a credit of {credit}", o.out[ch].count),
        );
        reached.lane_credit += u32::from(want > credit);
        check(
            n.lane_off[FOAM_CAT_DOWN as usize + ch] == 0 && n.lane_off[FOAM_CAT_TURN as usize + ch] == d,
            format!("lane {ch}: slots overlap"),
        );
        let blocked = t(FOAM_CAT_TURN + ch as u32) - tn;
        check(n.escape[ch] <= blocked, format!("child {ch}: {} escapes of {blocked} blocked turns", n.escape[ch]));
        blocked_turns += blocked;
    }
    check(n.escape[f..].iter().all(|&e| e == 0), "escapes towards children that do not exist".into());
    // Injector lanes carry nothing down.
    for l in f..pl {
        check(o.out[l].count == 0, format!("injector lane {l}: {} rays sent down", o.out[l].count));
    }
    // Up the parent lane: rays going up, then blocked turns escaping, within the
    // parent's credit, and as many as it allows.
    let up_credit = s.inbox[pl].credit.min(p.parent_capacity as u32);
    let escaped: u32 = n.escape.iter().sum();
    reached.escapes += u32::from(escaped > 0);
    reached.parent_credit += u32::from(t(FOAM_CAT_UP) + blocked_turns > up_credit);
    check(o.out[pl].count == n.send[FOAM_CAT_UP as usize] + escaped, "parent lane count".into());
    check(o.out[pl].count <= up_credit, format!("{} sent up on a credit of {up_credit}", o.out[pl].count));
    check(
        o.out[pl].count == (t(FOAM_CAT_UP) + blocked_turns).min(up_credit),
        format!("{} sent up of {} wanting on a credit of {up_credit}", o.out[pl].count, t(FOAM_CAT_UP) + blocked_turns),
    );
    let mut at = n.send[FOAM_CAT_UP as usize];
    for ch in 0..f {
        check(n.esc_off[ch] == at, format!("escapes of child {ch} at slot {} not {at}", n.esc_off[ch]));
        at += n.escape[ch];
    }
    // Nothing of a child the router does not have is written (RouterPlan walks only
    // the categories a ray can take here).
    let untouched = (f..FOAM_MAX_LANES as usize).all(|ch| {
        let cats = [FOAM_CAT_DOWN as usize + ch, FOAM_CAT_TURN as usize + ch];
        n.esc_off[ch] == 0
            && cats.iter().all(|&k| {
                n.send[k] == 0 && n.lane_off[k] == 0 && n.stay_off[k] == 0 && n.base.iter().all(|w| w[k] == 0)
            })
    });
    check(untouched, "fields of children the router does not have were written".into());
    // What stays: nothing lost, nothing made, the queues within capacity, and each
    // category's share of them where the one before ends.
    let total: u32 = s.total.iter().sum();
    let sent: u32 = o.out.iter().map(|h| h.count).sum();
    check(
        total == sent + n.up_count + n.down_count,
        format!("{total} rays != {sent} sent + {} + {} queued", n.up_count, n.down_count),
    );
    check(n.up_count <= q && n.down_count <= q, format!("queues {} and {} over {q}", n.up_count, n.down_count));
    let mut at = 0;
    for ch in 0..f {
        let k = FOAM_CAT_DOWN as usize + ch;
        check(n.stay_off[k] == at, format!("down queue: child {ch} at {} not {at}", n.stay_off[k]));
        at += s.total[k] - n.send[k];
    }
    check(at == n.down_count, "down queue ranges".into());
    check(n.stay_off[FOAM_CAT_UP as usize] == 0, "up queue starts at 0".into());
    let mut at = t(FOAM_CAT_UP) - n.send[FOAM_CAT_UP as usize];
    for ch in 0..f {
        let k = FOAM_CAT_TURN as usize + ch;
        check(n.stay_off[k] == at, format!("up queue: turns to {ch} at {} not {at}", n.stay_off[k]));
        at += s.total[k] - n.send[k] - n.escape[ch];
    }
    check(at == n.up_count, "up queue ranges".into());
    // Credit for next step: only room no ray already has a claim on (the queues,
    // and grants still outstanding), and no more than a lane holds.
    let upward: u32 = (0..pl).map(|l| o.out[l].credit).sum();
    let outstanding = c.granted_up;
    reached.queue_room += u32::from(n.up_count + outstanding + upward == q && upward > 0);
    check(
        n.up_count + outstanding + upward <= q,
        format!("up: {} queued + {outstanding} outstanding + {upward} granted > {q}", n.up_count),
    );
    let parent = FOAM_MAX_LANES as usize;
    check(
        n.down_count + c.granted[parent] + o.out[pl].credit <= q,
        format!(
            "down: {} queued + {} outstanding + {} granted > {q}",
            n.down_count, c.granted[parent], o.out[pl].credit
        ),
    );
    for l in 0..=pl {
        check(
            o.out[l].credit <= lane_capacity(p, l, false),
            format!("lane {l}: credit {} beyond its {}", o.out[l].credit, lane_capacity(p, l, false)),
        );
    }
    for ch in 0..f {
        check(
            n.granted[ch] == o.out[ch].credit,
            format!("lane {ch}: granted {} but told {}", n.granted[ch], o.out[ch].credit),
        );
    }
    check(
        n.granted[parent] == o.out[pl].credit,
        format!("parent: granted {} but told {}", n.granted[parent], o.out[pl].credit),
    );
    check(n.granted_up == upward, format!("granted {} up but told {upward}", n.granted_up));
    // Credit follows demand: all of it when there is room, else as much of the room
    // as there is, each lane within a ray of its demand's part. Where the room holds
    // every child's idle credit too, each child also gets that (within its lane).
    let demand = |l: usize| {
        let h = &s.inbox[l];
        if l < f { (h.pending + o.out[l].count).min(p.link_capacity) } else { h.pending.min(p.inject_capacity as u32) }
    };
    let wanted: u32 = (0..pl).map(demand).sum();
    let avail = q.saturating_sub(n.up_count + outstanding);
    let idle = if wanted + f as u32 * p.idle_credit as u32 <= avail { p.idle_credit as u32 } else { 0 };
    // What a lane gets beyond its demand: the idle credit on a child lane, within the lane.
    let idle_of = |l: usize| if l < f { (demand(l) + idle).min(p.link_capacity) - demand(l) } else { 0 };
    let extra: u32 = (0..f).map(idle_of).sum();
    reached.idle_credit += u32::from(extra > 0);
    check(
        upward == wanted.min(avail) + extra,
        format!("{upward} granted up of {wanted} wanted and {extra} idle with {avail} free"),
    );
    for l in 0..pl {
        let part = demand(l) as f64 * avail.min(wanted) as f64 / wanted.max(1) as f64;
        let idle_here = idle_of(l);
        let got = o.out[l].credit as f64 - idle_here as f64;
        check(
            (got - part).abs() < 1.0,
            format!("lane {l}: credit {} for a part of {part:.2} and {idle_here} idle", o.out[l].credit),
        );
    }
    // Emission the root allows its injectors: within what they asked for, and never
    // beyond what keeps every ray in flight inside the spill store.
    let emitted: u32 = s.inbox[f..pl].iter().map(|h| h.finished).sum();
    let finished: u32 = s.inbox[..f].iter().map(|h| h.finished).sum();
    let allowed: u32 = (f..pl).map(|l| o.out[l].pending).sum();
    if p.max_in_flight > 0 && pl > f {
        check(n.injected == c.injected + emitted, format!("injected {} != {} + {emitted}", n.injected, c.injected));
        let flying = n.injected - finished.min(n.injected) + c.allowed_by.iter().sum::<u32>();
        check(
            allowed == 0 || flying + allowed <= p.max_in_flight,
            format!("{flying} in flight + {allowed} allowed > {}", p.max_in_flight),
        );
        check(n.allowed_by.iter().sum::<u32>() == allowed, "allowance recorded".into());
        // An injector asks for what its queue has room for, which its lane need not hold.
        let ask = |l: usize| s.inbox[l].credit & 0xFFFF;
        // Shares go by pixels left: an injector with at least another's weight gets
        // at least that one's allowance, but for a ray of rounding, unless its own
        // ask is met. Weights that sum past 2^16 are shared by their prefixes shifted
        // right, which rounds each by up to a unit of the shifted sum's share.
        let weight = |l: usize| if ask(l) == 0 { 0 } else { (s.inbox[l].credit >> 16).max(1) };
        let weights: u32 = (f..pl).map(weight).sum();
        let shift = (0..32).find(|&k| weights >> k <= 0xFFFF).unwrap();
        let room = p.max_in_flight.saturating_sub(flying);
        let rounding = if shift == 0 { 1 } else { 2 + room.div_ceil(weights >> shift) };
        for a in f..pl {
            for b in f..pl {
                let (aa, ab) = (o.out[a].pending, o.out[b].pending);
                if weight(a) >= weight(b) && aa < ask(a) && ab > aa + rounding {
                    check(
                        false,
                        format!(
                            "injector lane {a} (weight {}) allowed {aa}, lane {b} (weight {}) {ab}",
                            weight(a),
                            weight(b)
                        ),
                    );
                }
                reached.weighted += u32::from(weight(a) > weight(b) && aa > ab && ask(b) > ab);
            }
        }
        let asked: u32 = (f..pl).map(ask).sum();
        if flying + asked <= p.max_in_flight {
            check(allowed == asked, format!("room for all {asked} asked, {allowed} allowed"));
        } else {
            reached.in_flight_room += 1;
            // Each within its rounding of its weight's part of the room, or its ask.
            for l in f..pl {
                let part = (room as f64 * weight(l) as f64 / weights as f64).min(ask(l) as f64);
                let a = o.out[l].pending;
                check(
                    (a as f64 - part).abs() < rounding as f64,
                    format!("injector lane {l}: allowed {a} for a part of {part:.2}"),
                );
            }
        }
        for l in f..pl {
            check(
                o.out[l].pending <= ask(l),
                format!("injector lane {l}: {} allowed of {} asked", o.out[l].pending, ask(l)),
            );
        }
    } else {
        check(allowed == 0 && n.injected == c.injected, "only the root admits rays".into());
    }
    // Headers: the subtree's finished pixels go up; the empty-slot mark follows each
    // lane's last ray.
    check(o.out[pl].finished == finished, format!("finished {} != {finished}", o.out[pl].finished));
    for l in 0..=pl {
        let full = o.out[l].count >= lane_capacity(p, l, true);
        check(
            full || o.tails[l] == Some(FOAM_INVALID_SHARD as u16),
            format!("lane {l}: no empty-slot mark after {} rays", o.out[l].count),
        );
    }
    check(
        n.parity == c.parity ^ 1 && n.src_up_count == c.up_count && n.src_down_count == c.down_count,
        "queue halves".into(),
    );
    let st = &o.stats;
    check(st.overflow == before.overflow, format!("overflow counted: {}", st.overflow));
    check(st.iterations == before.iterations + 1 && st.rays_in == before.rays_in + sent, "statistics".into());
    check(st.peak_queue == before.peak_queue.max(n.up_count + n.down_count), "peak queue".into());
    if why.is_empty() { Ok(()) } else { Err(why.join("; ")) }
}

/// A router on each tile, with host handles to set and read every field: program 0
/// runs RouterCount, program 1 RouterPlan then RouterForward. Every ray slot holds
/// the empty-slot mark, so RouterCount counts only the queues' runs and
/// RouterForward moves no ray: the steps' ray counts are the test's.
fn router_graph(params: &[foam_params]) -> Session {
    let mut s = Session::new(1, params.len() as u32).unwrap();
    s.add_codelets(&poplar_bridge::codelets_gp()).unwrap();
    let sets = ["count", "plan", "forward"].map(|name| s.add_compute_set(name).unwrap());
    for (t, p) in params.iter().enumerate() {
        let tile = t as u32;
        let r = router_tensors(&mut s, p, tile);
        let queue_bytes = (4 * p.queue_capacity * RAY_BYTES) as usize;
        let queues = s.add_variable(ElemType::UnsignedChar, &[queue_bytes], &format!("queues{tile}")).unwrap();
        s.set_tile_mapping(queues, tile).unwrap();
        s.set_initial_bytes(queues, &vec![0xFF; queue_bytes]).unwrap();
        let forwarded = [
            ("params", r.params),
            ("inboxes", r.inboxes),
            ("queues", queues),
            ("outboxes", r.outboxes),
            ("ctl", r.ctl),
        ];
        for (cs, (ty, connect)) in sets.iter().zip([
            ("RouterCount", &r.counted()[..]),
            ("RouterPlan", &r.planned()),
            ("RouterForward", &forwarded),
        ]) {
            add_connected(&mut s, *cs, ty, tile, connect);
        }
    }
    let count = s.execute(sets[0]).unwrap();
    let plan = s.execute(sets[1]).unwrap();
    let forward = s.execute(sets[2]).unwrap();
    let step = s.sequence(&[plan, forward]).unwrap();
    s.compile(&[count, step]).unwrap();
    s
}

/// A router's tensors on `tile` (named with the tile's number), its params written,
/// and host handles `w<name><tile>` and `r<name><tile>` to write and read its inboxes
/// ("in"), outboxes ("out"), control block and statistics.
struct RouterTensors {
    params: Tensor,
    inboxes: Tensor,
    outboxes: Tensor,
    ctl: Tensor,
    stats: Tensor,
}

impl RouterTensors {
    /// RouterCount's fields.
    fn counted(&self) -> [(&'static str, Tensor); 3] {
        [("params", self.params), ("inboxes", self.inboxes), ("ctl", self.ctl)]
    }

    /// RouterPlan's fields, and RouterCountPlan's.
    fn planned(&self) -> [(&'static str, Tensor); 5] {
        [
            ("params", self.params),
            ("inboxes", self.inboxes),
            ("outboxes", self.outboxes),
            ("ctl", self.ctl),
            ("stats", self.stats),
        ]
    }
}

fn router_tensors(s: &mut Session, p: &foam_params, tile: u32) -> RouterTensors {
    let mut var = |ty, n: usize, name: &str| {
        let v = s.add_variable(ty, &[n], &format!("{name}{tile}")).unwrap();
        s.set_tile_mapping(v, tile).unwrap();
        v
    };
    let lanes = parent_lane(p) + 1;
    let r = RouterTensors {
        params: var(ElemType::UnsignedChar, size_of::<foam_params>(), "params"),
        inboxes: var(ElemType::UnsignedChar, lane_offset(p, lanes, false), "inboxes"),
        outboxes: var(ElemType::UnsignedChar, lane_offset(p, lanes, true), "outboxes"),
        ctl: var(ElemType::UnsignedInt, size_of::<foam_router_ctl>() / 4, "ctl"),
        stats: var(ElemType::UnsignedChar, size_of::<foam_tile_stats>(), "stats"),
    };
    s.set_initial_bytes(r.params, &bytes_of(p)).unwrap();
    for (name, tensor) in [("in", r.inboxes), ("out", r.outboxes), ("ctl", r.ctl), ("stats", r.stats)] {
        s.create_host_write(&format!("w{name}{tile}"), tensor).unwrap();
        s.create_host_read(&format!("r{name}{tile}"), tensor).unwrap();
    }
    r
}

/// A vertex of type `ty` on `tile` in compute set `cs`, its fields connected.
fn add_connected(s: &mut Session, cs: ComputeSet, ty: &str, tile: u32, connect: &[(&str, Tensor)]) {
    let v = s.add_vertex(cs, ty, tile).unwrap();
    for &(field, tensor) in connect {
        s.connect(v, field, tensor).unwrap();
    }
}

/// An inbox of `p`'s lanes: `headers` at each lane's start, every ray slot empty.
fn inbox_bytes(p: &foam_params, headers: &[foam_link_header]) -> Vec<u8> {
    let mut inbox = vec![0xFFu8; lane_offset(p, parent_lane(p) + 1, false)];
    for (l, h) in headers.iter().enumerate() {
        let at = lane_offset(p, l, false);
        inbox[at..at + size_of::<foam_link_header>()].copy_from_slice(&bytes_of(h));
    }
    inbox
}

/// `p` routing by shard id: the children its bits choose (up to 16), shards past
/// them going up, and where it has lanes to spare, child 0's shard on two tiles
/// (its own lane and the first spare one, picked by the ray's pixel).
fn routed(mut p: foam_params) -> foam_params {
    let bits = (p.fanout as u32).ilog2().min(4);
    p.route_bits = bits as u16;
    if (p.fanout as u32) > 1 << bits {
        let mut r = foam_replica_lanes { replica_bits: [0; 16], replica_lane: [0; 16] };
        r.replica_bits[0] = 1;
        r.replica_lane[0] = (1u32 << bits) as u8;
        p.__bindgen_anon_1.replicas = r;
    }
    p
}

/// Rays in every inbox slot `headers` count as full: shard ids in and past `p`'s
/// subtree (routed: its children's ids, then ids that go up) and random pixels.
fn fill_rays(rng: &mut Rng, p: &foam_params, headers: &[foam_link_header], inbox: &mut [u8]) {
    let ids = 2u32 << p.route_bits;
    for (l, h) in headers.iter().enumerate() {
        let first = lane_offset(p, l, false) + size_of::<foam_link_header>();
        for k in 0..h.count as usize {
            let at = first + k * RAY_BYTES as usize;
            inbox[at..at + 2].copy_from_slice(&(upto(rng, ids - 1) as u16).to_le_bytes());
            inbox[at + 4..at + 8].copy_from_slice(&(rng.next_u64() as u32 & 0x000F_FFFF).to_le_bytes());
        }
    }
}

/// What RouterCount's worker `w` counts where every inbox slot is empty: its slice
/// of each queue (as RouterForward's workers cut every source) against the runs
/// the queue is in (`c.stay_off`).
fn queue_counts(c: &foam_router_ctl, f: usize, w: u32) -> [u32; FOAM_CATS as usize] {
    let mut counts = [0u32; FOAM_CATS as usize];
    let slice = |n: u32| (n * w / FOAM_WORKERS, n * (w + 1) / FOAM_WORKERS);
    let mut add = |(b, e): (u32, u32), cat: usize, lo: u32, hi: u32| counts[cat] += hi.min(e).saturating_sub(lo.max(b));
    let off = |k: u32| c.stay_off[k as usize];
    for ch in 0..f as u32 {
        let last = ch as usize + 1 == f;
        let (d, t) = (FOAM_CAT_DOWN + ch, FOAM_CAT_TURN + ch);
        add(slice(c.down_count), d as usize, off(d), if last { c.down_count } else { off(d + 1) });
        add(slice(c.up_count), t as usize, off(t), if last { c.up_count } else { off(t + 1) });
    }
    add(slice(c.up_count), FOAM_CAT_UP as usize, 0, off(FOAM_CAT_TURN));
    counts
}

/// What RouterCount's worker `w` sums over its own injector lanes (foam_inject_chunk).
fn lane_sums(p: &foam_params, inbox: &[foam_link_header], w: u32) -> [u32; 4] {
    let (f, n) = (p.fanout as usize, p.inject_lanes as u32);
    let mut sums = [0u32; 4];
    for k in (n * w / FOAM_WORKERS)..(n * (w + 1) / FOAM_WORKERS) {
        // foam_inject_up over foam_link_header: credit holds next | left << 16, finished emitted.
        let h = &inbox[f + k as usize];
        let (next, left) = (h.credit & 0xFFFF, h.credit >> 16);
        sums[FOAM_LS_DEMAND as usize] += h.pending.min(p.inject_capacity as u32);
        if p.max_in_flight > 0 {
            sums[FOAM_LS_ASKED as usize] += next;
            sums[FOAM_LS_WEIGHT as usize] += if next == 0 || p.inject_capacity == 0 { 0 } else { left.max(1) };
            sums[FOAM_LS_EMITTED as usize] += h.finished;
        }
    }
    sums
}

#[test]
fn router_plan_keeps_its_credit_invariants_on_random_states() {
    let mut rng = Rng::new(25);
    let (mut cases, mut reached) = (0, Reached::default());
    for _graph in 0..4 {
        let params: Vec<foam_params> = (0..16).map(|_| random_router(&mut rng)).collect();
        let mut s = router_graph(&params);
        for round in 0..16 {
            let mut steps: Vec<RouterStep> = params.iter().map(|p| random_step(&mut rng, p)).collect();
            let mut befores = Vec::new();
            for (t, (p, st)) in params.iter().zip(&steps).enumerate() {
                let inbox = inbox_bytes(p, &st.inbox);
                // Garbage where RouterPlan must write, so that nothing passes by luck.
                let out: Vec<u8> =
                    (0..lane_offset(p, parent_lane(p) + 1, true)).map(|_| (rng.next_u64() % 255) as u8).collect();
                let before = foam_tile_stats {
                    rays_in: upto(&mut rng, 1000),
                    iterations: upto(&mut rng, 100),
                    peak_queue: upto(&mut rng, 50),
                    ..Default::default()
                };
                s.write_tensor(&format!("win{t}"), &inbox).unwrap();
                s.write_tensor(&format!("wout{t}"), &out).unwrap();
                s.write_tensor(&format!("wctl{t}"), &bytes_of(&st.ctl)).unwrap();
                s.write_tensor(&format!("wstats{t}"), &bytes_of(&before)).unwrap();
                befores.push(before);
            }
            // RouterCount: each worker's sums over its own injector lanes; then the
            // step's counts go back in beside them.
            s.run(0).unwrap();
            for (t, (p, st)) in params.iter().zip(steps.iter_mut()).enumerate() {
                let mut ctl = vec![0u8; size_of::<foam_router_ctl>()];
                s.read_tensor(&format!("rctl{t}"), &mut ctl).unwrap();
                let counted: foam_router_ctl = read_as(&ctl);
                for w in 0..FOAM_WORKERS {
                    let want = lane_sums(p, &st.inbox, w);
                    assert_eq!(counted.lane_sums[w as usize], want, "round {round}, router {t}, worker {w}: lane sums");
                    // No ray in an empty inbox slot, and the queues by their runs.
                    assert_eq!(
                        counted.counts[w as usize],
                        queue_counts(&st.ctl, p.fanout as usize, w),
                        "round {round}, router {t}, worker {w}: counts"
                    );
                }
                st.ctl.lane_sums = counted.lane_sums;
                s.write_tensor(&format!("wctl{t}"), &bytes_of(&st.ctl)).unwrap();
            }
            s.run(1).unwrap();
            for (t, (p, st)) in params.iter().zip(&steps).enumerate() {
                let mut out = vec![0u8; lane_offset(p, parent_lane(p) + 1, true)];
                let mut ctl = vec![0u8; size_of::<foam_router_ctl>()];
                let mut stats = vec![0u8; size_of::<foam_tile_stats>()];
                s.read_tensor(&format!("rout{t}"), &mut out).unwrap();
                s.read_tensor(&format!("rctl{t}"), &mut ctl).unwrap();
                s.read_tensor(&format!("rstats{t}"), &mut stats).unwrap();
                let header = |l: usize| {
                    read_as::<foam_link_header>(&out[lane_offset(p, l, true)..][..size_of::<foam_link_header>()])
                };
                let headers: Vec<foam_link_header> = (0..=parent_lane(p)).map(header).collect();
                let tails = headers
                    .iter()
                    .enumerate()
                    .map(|(l, h)| {
                        let at =
                            lane_offset(p, l, true) + size_of::<foam_link_header>() + (h.count * RAY_BYTES) as usize;
                        (h.count < lane_capacity(p, l, true)).then(|| u16::from_le_bytes([out[at], out[at + 1]]))
                    })
                    .collect();
                let planned = RouterPlanned { ctl: read_as(&ctl), out: headers, tails, stats: read_as(&stats) };
                if let Err(e) = check_router(p, st, &planned, &befores[t], &mut reached) {
                    panic!(
                        "round {round}, router {t} (fanout {}, {} injector lanes, queue {}): {e}",
                        (p.fanout as u32),
                        (p.inject_lanes as u32),
                        p.queue_capacity
                    );
                }
                cases += 1;
            }
        }
    }
    assert_eq!(cases, 4 * 16 * 16);
    // The random states reach every limit, often.
    let r = &reached;
    assert!(
        [r.lane_credit, r.escapes, r.parent_credit, r.queue_room, r.in_flight_room, r.weighted, r.idle_credit]
            .iter()
            .all(|&n| n >= 20),
        "{r:?}"
    );
}

/// RouterCountPlan (Schedule::PlanBesideMarch: one worker counts the six workers'
/// shares, then plans) leaves every byte RouterCount's six workers and then
/// RouterPlan leave: the control block with every worker's counts, sums and ranks,
/// the outboxes' headers and the statistics. Each random state runs on two tiles,
/// one with each.
#[test]
fn router_count_plan_writes_what_count_then_plan_write() {
    let mut rng = Rng::new(26);
    let params: Vec<foam_params> = (0..24).map(|_| routed(random_router(&mut rng))).collect();
    let mut s = Session::new(1, 2 * params.len() as u32).unwrap();
    s.add_codelets(&poplar_bridge::codelets_gp()).unwrap();
    let (count, plan) = (s.add_compute_set("count").unwrap(), s.add_compute_set("plan").unwrap());
    for (t, p) in params.iter().enumerate() {
        for fused in [false, true] {
            let tile = (2 * t + fused as usize) as u32;
            let r = router_tensors(&mut s, p, tile);
            if fused {
                add_connected(&mut s, plan, "RouterCountPlan", tile, &r.planned());
            } else {
                add_connected(&mut s, count, "RouterCount", tile, &r.counted());
                add_connected(&mut s, plan, "RouterPlan", tile, &r.planned());
            }
        }
    }
    let (count, plan) = (s.execute(count).unwrap(), s.execute(plan).unwrap());
    let step = s.sequence(&[count, plan]).unwrap();
    s.compile(&[step]).unwrap();
    for round in 0..12 {
        let mut lens = Vec::new();
        for (t, p) in params.iter().enumerate() {
            let st = random_step(&mut rng, p);
            let mut inbox = inbox_bytes(p, &st.inbox);
            fill_rays(&mut rng, p, &st.inbox, &mut inbox);
            let out: Vec<u8> =
                (0..lane_offset(p, parent_lane(p) + 1, true)).map(|_| (rng.next_u64() % 255) as u8).collect();
            let before = foam_tile_stats {
                rays_in: upto(&mut rng, 1000),
                iterations: upto(&mut rng, 100),
                ..Default::default()
            };
            for tile in [2 * t, 2 * t + 1] {
                s.write_tensor(&format!("win{tile}"), &inbox).unwrap();
                s.write_tensor(&format!("wout{tile}"), &out).unwrap();
                s.write_tensor(&format!("wctl{tile}"), &bytes_of(&st.ctl)).unwrap();
                s.write_tensor(&format!("wstats{tile}"), &bytes_of(&before)).unwrap();
            }
            lens.push(out.len());
        }
        s.run(0).unwrap();
        for (t, &out_len) in lens.iter().enumerate() {
            let read = |s: &mut Session, name: &str, tile: usize, n: usize| {
                let mut b = vec![0u8; n];
                s.read_tensor(&format!("r{name}{tile}"), &mut b).unwrap();
                b
            };
            for (name, n) in
                [("ctl", size_of::<foam_router_ctl>()), ("out", out_len), ("stats", size_of::<foam_tile_stats>())]
            {
                let (apart, fused) = (read(&mut s, name, 2 * t, n), read(&mut s, name, 2 * t + 1, n));
                assert!(apart == fused, "round {round}, router {t}: {name} differs");
            }
        }
    }
}

/// The root shares its in-flight room among its injectors by the pixels each has
/// left (foam_inject_up `left`), so that they finish together.
#[test]
fn root_allows_injectors_by_pixels_left() {
    let p = foam_params {
        ray_bytes: RAY_BYTES,
        layout: foam_layout::foam_ray_layout_FOAM_LAYOUT_HALF,
        link_capacity: 8,
        parent_capacity: 8,
        queue_capacity: 64,
        fanout: 2,
        inject_lanes: 3,
        inject_capacity: 100,
        max_in_flight: 40,
        ..Default::default()
    };
    let mut s = router_graph(&[p]);
    let pl = parent_lane(&p);
    // Two injectors asking 100 rays each, with 300 and 100 units of pixels left,
    // and one asking none (its lane is full) with 50 left.
    let mut headers = vec![foam_link_header::default(); pl + 1];
    for (k, (next, left)) in [(100u32, 300u32), (100, 100), (0, 50)].into_iter().enumerate() {
        headers[2 + k] = foam_link_header { count: 0, credit: next | left << 16, finished: 0, pending: 0 };
    }
    s.write_tensor("win0", &inbox_bytes(&p, &headers)).unwrap();
    s.write_tensor("wctl0", &bytes_of(&foam_router_ctl::default())).unwrap();
    s.run(0).unwrap();
    s.run(1).unwrap();
    let mut out = vec![0u8; lane_offset(&p, pl + 1, true)];
    s.read_tensor("rout0", &mut out).unwrap();
    let allowed: Vec<u32> = (2..5)
        .map(|l| read_as::<foam_link_header>(&out[lane_offset(&p, l, true)..][..size_of::<foam_link_header>()]).pending)
        .collect();
    // 40 rays of room, 3 : 1 (equal shares would be 20 and 20).
    assert_eq!(allowed, vec![30, 10, 0]);
}

// ---- InjectorSend's demand ---------------------------------------------------

/// An injector's lanes after one InjectorSend: each direct lane's and the root
/// lane's `pending` (the demand their routers share credit by) and the rays held.
struct Dealt {
    direct: Vec<u32>,
    root: u32,
    held: u32,
    /// Rays sent on each direct lane and on the root's.
    sent: Vec<u32>,
    up: u32,
}

/// Runs InjectorSend once on an injector of `lanes` direct lanes of 4 rays, a root
/// lane of 8, with `shards` marched rays in its queue (each going to direct lane
/// shard & (lanes - 1)), `credit` on every lane, the root's `allowance` and blocks
/// still to emit or not (`more`).
fn injector_send(lanes: u32, shards: &[u16], credit: u32, allowance: u32, more: bool) -> Dealt {
    let every: Vec<u8> = (0..lanes as u8).collect();
    injector_send_mapped(&every, lanes, shards, credit, allowance, more)
}

/// As [`injector_send`] under a root of `lane_of.len()` children (a power of two),
/// with the injector's direct lane to child k `lane_of[k]` (FOAM_NO_DIRECT_LANE:
/// none) of its `lanes`.
fn injector_send_mapped(lane_of: &[u8], lanes: u32, shards: &[u16], credit: u32, allowance: u32, more: bool) -> Dealt {
    use foam_layout::{foam_inject_down, foam_inject_up, foam_injector_ctl};
    let (cap, direct_cap) = (8u32, 4u32);
    let mut p = foam_params {
        layout: foam_layout::foam_ray_layout_FOAM_LAYOUT_HALF,
        ray_bytes: RAY_BYTES,
        link_capacity: cap,
        direct_lanes: lanes as u16,
        direct_capacity: direct_cap as u16,
        route_bits: lane_of.len().max(1).trailing_zeros() as u16,
        ..Default::default()
    };
    let mut map = [foam_layout::FOAM_NO_DIRECT_LANE as u8; foam_layout::FOAM_MAX_FANOUT as usize];
    map[..lane_of.len()].copy_from_slice(lane_of);
    p.__bindgen_anon_1.direct_lane = map;
    let slot = RAY_BYTES as usize;
    let mut queue = vec![0u8; cap as usize * slot];
    for (i, &shard) in shards.iter().enumerate() {
        queue[i * slot..][..2].copy_from_slice(&shard.to_le_bytes());
    }
    let down = foam_inject_down { count: 0, credit, reserved: 0, allowance };
    let direct_in: Vec<u8> = (0..lanes.max(1)).flat_map(|_| bytes_of(&down)).collect();
    let lane_out = size_of::<foam_inject_up>() + (direct_cap as usize) * slot;
    let ctl = foam_injector_ctl { march_end: shards.len() as u32, more: more as u32, ..Default::default() };
    let mut s = Session::new(1, 1).unwrap();
    s.add_codelets(&poplar_bridge::codelets_gp()).unwrap();
    let cs = s.add_compute_set("deal").unwrap();
    let init = |s: &mut Session, name: &str, ty: ElemType, bytes: &[u8]| {
        let elems = if ty == ElemType::UnsignedInt { bytes.len() / 4 } else { bytes.len() };
        let v = s.add_variable(ty, &[elems], name).unwrap();
        s.set_tile_mapping(v, 0).unwrap();
        s.set_initial_bytes(v, bytes).unwrap();
        s.create_host_read(name, v).unwrap();
        v
    };
    let fields = [
        ("params", init(&mut s, "params", ElemType::UnsignedChar, &bytes_of(&p))),
        ("inbox", init(&mut s, "inbox", ElemType::UnsignedChar, &bytes_of(&down))),
        ("directIn", init(&mut s, "directIn", ElemType::UnsignedChar, &direct_in)),
        ("queue", init(&mut s, "queue", ElemType::UnsignedChar, &queue)),
        (
            "outbox",
            init(
                &mut s,
                "outbox",
                ElemType::UnsignedChar,
                &vec![0u8; size_of::<foam_inject_up>() + cap as usize * slot],
            ),
        ),
        ("directOut", init(&mut s, "directOut", ElemType::UnsignedChar, &vec![0u8; lanes.max(1) as usize * lane_out])),
        ("ctl", init(&mut s, "ctl", ElemType::UnsignedInt, &bytes_of(&ctl))),
        ("stats", init(&mut s, "stats", ElemType::UnsignedChar, &[0; size_of::<foam_tile_stats>()])),
    ];
    let v = s.add_vertex(cs, "InjectorSend", 0).unwrap();
    for (field, tensor) in fields {
        s.connect(v, field, tensor).unwrap();
    }
    let prog = s.execute(cs).unwrap();
    s.compile(&[prog]).unwrap();
    s.run(0).unwrap();
    let read = |s: &mut Session, name: &str, n: usize| {
        let mut b = vec![0u8; n];
        s.read_tensor(name, &mut b).unwrap();
        b
    };
    let out = read(&mut s, "directOut", lanes.max(1) as usize * lane_out);
    let root = read(&mut s, "outbox", size_of::<foam_inject_up>() + cap as usize * slot);
    let ctl: foam_injector_ctl = read_as(&read(&mut s, "ctl", size_of::<foam_injector_ctl>()));
    let header = |k: usize| read_as::<foam_inject_up>(&out[k * lane_out..][..size_of::<foam_inject_up>()]);
    let up: foam_inject_up = read_as(&root[..size_of::<foam_inject_up>()]);
    Dealt {
        direct: (0..lanes as usize).map(|k| header(k).pending).collect(),
        root: up.pending,
        held: ctl.held,
        sent: (0..lanes as usize).map(|k| header(k).count).collect(),
        up: up.count,
    }
}

/// A ray for a router under the root that the injector has no direct lane to takes
/// its lane to the root; the others take theirs (src/device/direct.rs keeps lanes
/// only to the routers an injector's rays mostly head for).
#[test]
fn injector_send_sends_rays_without_a_direct_lane_to_the_root() {
    let none = foam_layout::FOAM_NO_DIRECT_LANE as u8;
    // Four children of the root, lanes to children 1 and 3 only; shards 0..3 and
    // 5 (child 1 again: the root's bits are the two lowest here).
    let d = injector_send_mapped(&[none, 0, none, 1], 2, &[0, 1, 2, 3, 5], 4, 0, false);
    assert_eq!((d.sent, d.up, d.held), (vec![2, 1], 2, 0));
    // No direct lane at all but a map of none: every ray to the root.
    let d = injector_send_mapped(&[none; 4], 0, &[0, 1, 2, 3], 4, 0, false);
    assert_eq!((d.sent, d.up, d.held), (vec![], 4, 0));
}

/// An injector asks its routers for credit only for rays that can come: those it
/// holds and those the root lets it emit next. Asking for a full lane whenever
/// pixels were left reserved routers' queues for rays the root held back, and with
/// 32 injectors the shrunk-buffer frame crawled (tests/device_replicas.rs).
#[test]
fn injector_send_asks_only_for_rays_that_can_come() {
    // Pixels left but no allowance and nothing held: no demand anywhere.
    let d = injector_send(4, &[], 4, 0, true);
    assert_eq!((d.direct, d.root, d.held), (vec![0; 4], 0, 0));
    // An allowance of 3: that many may come down any lane; a large one: a full lane.
    assert_eq!(injector_send(4, &[], 4, 3, true).direct, vec![3; 4]);
    assert_eq!(injector_send(4, &[], 4, 100, true).direct, vec![4; 4]);
    // No pixels left: only what is held, whatever the allowance.
    assert_eq!(injector_send(4, &[], 4, 100, false).direct, vec![0; 4]);
    // No credit anywhere: three rays held, each lane asked for them and the allowance.
    let d = injector_send(4, &[0, 1, 2], 0, 0, false);
    assert_eq!((d.direct, d.root, d.held), (vec![3; 4], 3, 3));
    assert_eq!(injector_send(4, &[0, 1, 2], 0, 1, true).direct, vec![4; 4]);
    // Credit on every lane: the rays leave on their direct lanes and none is held.
    let d = injector_send(4, &[0, 1, 2], 4, 0, true);
    assert_eq!((d.direct, d.root, d.held), (vec![0; 4], 0, 0));
    // Without direct lanes the root's lane is asked for the same, up to a lane.
    assert_eq!(injector_send(0, &[], 4, 0, true).root, 0);
    assert_eq!(injector_send(0, &[], 4, 5, true).root, 5);
    assert_eq!(injector_send(0, &[], 4, 100, true).root, 8);
    let d = injector_send(0, &[0, 1, 2], 0, 2, true);
    assert_eq!((d.root, d.held), (5, 3));
}

// ---- marching (foam/march.h through TracerMarch) -------------------------------

mod lattice;
mod payload;

use foam_ipu::camera::Camera;
use foam_ipu::device::{DeviceOptions, DevicePlan};
use foam_ipu::reference::{SiteIndex, Tracer};
use foam_ipu::scene::Scene;
use foam_layout::{
    FOAM_FINISHED_CELL, FOAM_MAX_CELL_STEPS, FOAM_PAUSED_SHARD, FOAM_TW_COUNTERS, FOAM_TW_LOADED, FOAM_TW_MARCHED,
    FOAM_TW_NEIGHBOURS, FOAM_TW_RAYS, FOAM_TW_STEPS, foam_camera, foam_ray_fp32, foam_ray_half, foam_ray_mixed,
    foam_region_header, foam_tracer_ctl,
};
use partition::RayLayout;
use payload::State;

/// Framebuffer homes the camera block names (a power of two, as the 2^depth leaves of
/// the k-d tree are): with this many a finished ray's home is its pixel index, never
/// a tile here (the test pixels are not the first few).
const HOMES: u32 = 1 << 15;

/// A ray as it sits in a payload slot, in working precision.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Slot {
    shard: u16,
    cell: u16,
    px: u32,
    t: f32,
    tt: f32,
    rgb: [f32; 3],
    depth: f32,
}

fn h16(x: f32) -> u16 {
    half::f16::from_f32(x).to_bits()
}

fn f16(b: u16) -> f32 {
    half::f16::from_bits(b).to_f32()
}

fn encode(layout: RayLayout, s: &Slot) -> Vec<u8> {
    let dest = foam_layout::foam_ray_dest { shard: s.shard, cell: s.cell };
    match layout {
        RayLayout::Fp32 => {
            bytes_of(&foam_ray_fp32 { dest, px: s.px, t: s.t, T: s.tt, r: s.rgb[0], g: s.rgb[1], b: s.rgb[2] })
        }
        RayLayout::Mixed => bytes_of(&foam_ray_mixed {
            dest,
            px: s.px,
            t: h16(s.t),
            T: h16(s.tt),
            r: s.rgb[0],
            g: s.rgb[1],
            b: s.rgb[2],
        }),
        RayLayout::Half => bytes_of(&foam_ray_half {
            dest,
            px: s.px,
            t: h16(s.t),
            T: h16(s.tt),
            r: h16(s.rgb[0]),
            g: h16(s.rgb[1]),
            b: h16(s.rgb[2]),
            depth: h16(s.depth),
        }),
    }
}

fn decode(layout: RayLayout, b: &[u8]) -> Slot {
    match layout {
        RayLayout::Fp32 => {
            let v: foam_ray_fp32 = read_as(b);
            Slot {
                shard: v.dest.shard,
                cell: v.dest.cell,
                px: v.px,
                t: v.t,
                tt: v.T,
                rgb: [v.r, v.g, v.b],
                depth: -1.0,
            }
        }
        RayLayout::Mixed => {
            let v: foam_ray_mixed = read_as(b);
            Slot {
                shard: v.dest.shard,
                cell: v.dest.cell,
                px: v.px,
                t: f16(v.t),
                tt: f16(v.T),
                rgb: [v.r, v.g, v.b],
                depth: -1.0,
            }
        }
        RayLayout::Half => {
            let v: foam_ray_half = read_as(b);
            let rgb = [f16(v.r), f16(v.g), f16(v.b)];
            Slot {
                shard: v.dest.shard,
                cell: v.dest.cell,
                px: v.px,
                t: f16(v.t),
                tt: f16(v.T),
                rgb,
                depth: f16(v.depth),
            }
        }
    }
}

fn px(x: u32, y: u32, steps: u32) -> u32 {
    x | y << 11 | steps << 22
}

/// A scene cut into 8 shards and packed as the device plan packs them for its tiles,
/// and the camera block the plan makes for a view.
struct Packed {
    part: partition::Partition,
    blobs: Vec<Vec<u8>>,
    camera: foam_camera,
}

fn pack(scene: &Scene, cam: &Camera) -> Packed {
    let plan = DevicePlan::new(scene, 8, cam.width, cam.height, &DeviceOptions::default(), &()).unwrap();
    let blobs = plan.spec.nodes[..plan.shards()]
        .iter()
        .map(|n| plan.spec.shards[n.shard_offset..][..n.shard_bytes].to_vec())
        .collect();
    let camera = read_as(&plan.frame_blocks(scene, cam, 0, false).unwrap().camera);
    Packed { part: plan.partition, blobs, camera }
}

/// Copies of `shards` as a tracer holds them (layout.h foam_region_header).
fn region(blobs: &[Vec<u8>], shards: &[usize]) -> Vec<u8> {
    let mut h: foam_region_header = read_as(&vec![0u8; size_of::<foam_region_header>()]);
    let mut body = Vec::new();
    for (k, &s) in shards.iter().enumerate() {
        h.shard[k] = s as u16;
        h.offset[k] = (size_of::<foam_region_header>() + body.len()) as u32;
        body.extend_from_slice(&blobs[s]);
    }
    h.count = shards.len() as u32;
    h.total_bytes = (size_of::<foam_region_header>() + body.len()) as u32;
    [bytes_of(&h), body].concat()
}

/// What a ray of pixel (x, y) sent into a tile holding the start shard (and every
/// other shard if `all`) with `k` cells left to its step cap must come back as, from
/// the oracle's states of its whole path: the slot, and the cells and shard visits
/// it took there. Where the ray's last cell is a hull cell the walk does not name,
/// a tile holding one shard may instead hand the ray on into it: the second slot,
/// whose destination is not checked.
#[allow(clippy::too_many_arguments)]
fn expected(
    states: &[State],
    k: u32,
    all: bool,
    owner: &dyn Fn(u32) -> usize,
    part: &partition::Partition,
    layout: RayLayout,
    x: u32,
    y: u32,
    width: u32,
) -> (Slot, u32, u32, Option<Slot>) {
    let start_steps = FOAM_MAX_CELL_STEPS - k;
    let slot = |s: &State, dest: (u16, u16), steps: u32| {
        let p = s.through(layout);
        Slot { shard: dest.0, cell: dest.1, px: px(x, y, steps), t: p.t, tt: p.tt, rgb: p.rgb, depth: p.depth }
    };
    let home = ((y * width + x) % HOMES) as u16;
    let mut visits = 1;
    for m in 1..states.len() {
        let s = &states[m];
        if s.finished || m as u32 == k {
            let steps = (start_steps + s.steps).min(FOAM_MAX_CELL_STEPS - 1);
            return (slot(s, (home, FOAM_FINISHED_CELL as u16), steps), s.steps, visits, None);
        }
        // Step m was in states[m - 1].cell; the ray moves on to s.cell, through its
        // payload if that is in another shard.
        if s.cell == u32::MAX && !all {
            let end = &states[m + 1];
            let finished =
                slot(end, (home, FOAM_FINISHED_CELL as u16), (start_steps + end.steps).min(FOAM_MAX_CELL_STEPS - 1));
            return (finished, end.steps, visits, Some(slot(s, (0, 0), start_steps + s.steps)));
        }
        if s.cell != u32::MAX && owner(s.cell) != owner(states[m - 1].cell) {
            if !all {
                let dest = (owner(s.cell) as u16, part.local_index(s.cell) as u16);
                return (slot(s, dest, start_steps + s.steps), s.steps, visits, None);
            }
            visits += 1;
        }
    }
    unreachable!("the oracle's last state is finished")
}

/// Tiles of TracerMarch, each holding the start shard (and, on every second tile,
/// every other shard as copies), marching `rays[i]` in layout `layouts[i / 2]`, each
/// worker at most `budget` steps (march_budget; 0: no limit) from counters at `work`.
fn march_graph(
    packed: &Packed,
    own: usize,
    layouts: &[RayLayout],
    camera: &foam_camera,
    rays: &[Vec<u8>],
    budget: u32,
    work: u32,
) -> Session {
    let tiles = 2 * layouts.len();
    let mut s = Session::new(1, tiles as u32).unwrap();
    s.add_codelets(&poplar_bridge::codelets_gp()).unwrap();
    let cs = s.add_compute_set("march").unwrap();
    let others: Vec<usize> = (0..packed.blobs.len()).filter(|&x| x != own).collect();
    for t in 0..tiles {
        let (layout, all) = (layouts[t / 2], t % 2 == 1);
        let ray_bytes = layout.payload_bytes() as u32;
        let n = rays[t].len() as u32 / ray_bytes;
        let p = foam_params {
            layout: match layout {
                RayLayout::Fp32 => foam_layout::foam_ray_layout_FOAM_LAYOUT_FP32,
                RayLayout::Mixed => foam_layout::foam_ray_layout_FOAM_LAYOUT_MIXED,
                RayLayout::Half => foam_layout::foam_ray_layout_FOAM_LAYOUT_HALF,
            },
            ray_bytes,
            link_capacity: n,
            shard: own as u32,
            march_budget: budget,
            ..Default::default()
        };
        let copies = region(&packed.blobs, if all { &others } else { &[] });
        let inbox =
            [bytes_of(&foam_link_header { count: n, credit: 0, finished: 0, pending: 0 }), rays[t].clone()].concat();
        let mut init = |name: &str, ty: ElemType, bytes: &[u8]| {
            let elems = if ty == ElemType::UnsignedInt { bytes.len() / 4 } else { bytes.len() };
            let v = s.add_variable(ty, &[elems], &format!("{name}{t}")).unwrap();
            s.set_tile_mapping(v, t as u32).unwrap();
            s.set_initial_bytes(v, bytes).unwrap();
            v
        };
        let fields = [
            ("shard", init("shard", ElemType::UnsignedChar, &packed.blobs[own])),
            ("copies", init("copies", ElemType::UnsignedChar, &copies)),
            ("camera", init("camera", ElemType::UnsignedChar, &bytes_of(camera))),
            ("params", init("params", ElemType::UnsignedChar, &bytes_of(&p))),
            ("inbox", init("inbox", ElemType::UnsignedChar, &inbox)),
            ("sideIn", init("sideIn", ElemType::UnsignedChar, &[0; 16])),
            ("pixels", init("pixels", ElemType::UnsignedChar, &[0; 28])),
            ("results", init("results", ElemType::UnsignedChar, &[0; 4])),
            ("ctl", init("ctl", ElemType::UnsignedInt, &ctl_bytes(work))),
            ("pending", init("pending", ElemType::UnsignedChar, &[0; 4])),
        ];
        let v = s.add_vertex(cs, "TracerMarch", t as u32).unwrap();
        for (field, tensor) in fields {
            s.connect(v, field, tensor).unwrap();
        }
        s.create_host_read(&format!("inbox{t}"), fields[4].1).unwrap();
        s.create_host_read(&format!("ctl{t}"), fields[8].1).unwrap();
    }
    let prog = s.execute(cs).unwrap();
    s.compile(&[prog]).unwrap();
    s
}

/// A tracer's control block, every worker's counters at `work`.
fn ctl_bytes(work: u32) -> Vec<u8> {
    let mut c: foam_tracer_ctl = read_as(&[0u8; size_of::<foam_tracer_ctl>()]);
    for row in c.work.iter_mut() {
        row.fill(work);
    }
    bytes_of(&c)
}

/// Tile `t`'s control block after a march_graph run.
fn read_ctl(s: &mut Session, t: usize) -> foam_tracer_ctl {
    let mut ctl = vec![0u8; size_of::<foam_tracer_ctl>()];
    s.read_tensor(&format!("ctl{t}"), &mut ctl).unwrap();
    read_as(&ctl)
}

/// A fresh ray of pixel `px` (x, y and the steps it has taken) in the camera's cell
/// `start`, as an injector emits it.
fn fresh_slot(packed: &Packed, start: u32, px: u32) -> Slot {
    Slot {
        shard: packed.part.owner(start) as u16,
        cell: packed.part.local_index(start) as u16,
        px,
        t: 0.0,
        tt: 1.0,
        rgb: [0.0; 3],
        depth: -1.0,
    }
}

/// The view the lattice tests look through.
fn lattice_camera() -> Camera {
    Camera::look_at(24, 18, 70.0, glam::DVec3::new(1.37, 2.21, 0.63), glam::DVec3::new(5.1, 4.3, 7.7), glam::DVec3::Z)
        .unwrap()
}

/// 3,000 Voronoi cells of the garden preset, and garden's camera at 24×18.
fn voronoi_cells() -> (Scene, Camera) {
    let scene = foam_ipu::synth::scene_gen::generate(
        &foam_ipu::synth::scene_gen::Params { cells: 3000, seed: 3, sh_degree: 0, preset: "garden".into() },
        &|_| {},
    )
    .unwrap();
    (scene, common::garden().1.resized(24, 18).unwrap())
}

/// What the rays reached, over a scene's test.
#[derive(Default, Debug)]
struct Seen {
    hull: u32,
    opaque: u32,
    capped_after_crossing: u32,
    depth: u32,
    left: u32,
}

/// Marches rays of `cam`'s pixels through `scene` cut into 8 shards, each ray with a
/// step cap of k cells for every k along its path, on tiles holding the start shard
/// alone or every shard, in every layout; each comes back as the oracle says, bit
/// for bit.
fn march_cell_by_cell(scene: &Scene, cam: &Camera, pixels: &[(u32, u32)]) -> Seen {
    let packed = pack(scene, cam);
    let owner = |c: u32| packed.part.owner(c);
    let start = SiteIndex::new(scene).unwrap().nearest(cam.position.to_array());
    let own = owner(start);
    assert_eq!(
        (packed.camera.start_shard as usize, packed.camera.start_cell as usize),
        (own, packed.part.local_index(start))
    );
    // One framebuffer slot, and no pixel at home on a tile here.
    let camera = foam_camera { slice_pixels: 1, homes: HOMES, home_shift: 0, ..packed.camera };
    let tracer = Tracer::new(scene);
    let layouts = [RayLayout::Fp32, RayLayout::Mixed, RayLayout::Half];
    let mut seen = Seen::default();
    let degree = |c: usize| scene.neighbours(c).len() as u32;
    let degrees = ((0..scene.len()).map(degree).min().unwrap(), (0..scene.len()).map(degree).max().unwrap());
    // Per layout: each ray's pixel, cap and the oracle's states.
    type Ray = (u32, u32, u32, std::rc::Rc<Vec<State>>);
    let mut plan: Vec<Vec<Ray>> = Vec::new();
    let mut rays = Vec::new();
    for &layout in &layouts {
        let mut list = Vec::new();
        let mut bytes = Vec::new();
        for &(x, y) in pixels {
            assert!(y * cam.width + x >= 8, "a test pixel's home must not be a tile here");
            let (o, d) = cam.pixel_ray(x, y);
            let states =
                std::rc::Rc::new(payload::states(&tracer, &owner, start, o, d, 0.001, layout).expect("no grazed edge"));
            let cells = states.last().unwrap().steps;
            for k in 1..=cells + 1 {
                bytes.extend(encode(layout, &fresh_slot(&packed, start, px(x, y, FOAM_MAX_CELL_STEPS - k))));
                list.push((x, y, k, states.clone()));
            }
        }
        plan.push(list);
        rays.push(bytes.clone());
        rays.push(bytes);
    }
    let mut s = march_graph(&packed, own, &layouts, &camera, &rays, 0, 0);
    s.run(0).unwrap();
    for t in 0..2 * layouts.len() {
        let (layout, all) = (layouts[t / 2], t % 2 == 1);
        let stride = layout.payload_bytes() as usize;
        let mut inbox = vec![0u8; 16 + rays[t].len()];
        s.read_tensor(&format!("inbox{t}"), &mut inbox).unwrap();
        let c = read_ctl(&mut s, t);
        let (mut cells, mut visits, mut neighbours) = (0, 0, (0, 0));
        for (i, (x, y, k, states)) in plan[t / 2].iter().enumerate() {
            let got = decode(layout, &inbox[16 + i * stride..16 + (i + 1) * stride]);
            let (want, c, v, alt) = expected(states, *k, all, &owner, &packed.part, layout, *x, *y, cam.width);
            let took_alt =
                alt.is_some_and(|a| got.cell != FOAM_FINISHED_CELL as u16 && Slot { shard: 0, cell: 0, ..got } == a);
            let what = format!(
                "{} on a tile with {} shard(s), pixel ({x}, {y}), cap {k}",
                layout.name(),
                if all { 8 } else { 1 }
            );
            let marched = if took_alt {
                assert_ne!(got.shard as usize, own, "{what}: handed on into its own shard");
                c - 1
            } else {
                assert_eq!(got, want, "{what}");
                c
            };
            cells += marched;
            // Every face of every cell marched is tested. The oracle does not name a
            // final hull cell: it counts between the scene's fewest and most faces.
            for s in &states[..marched as usize] {
                let known = (s.cell != u32::MAX).then(|| scene.neighbours(s.cell as usize).len() as u32);
                neighbours.0 += known.unwrap_or(degrees.0);
                neighbours.1 += known.unwrap_or(degrees.1);
            }
            visits += v;
            let end = states.last().unwrap();
            seen.left += u32::from(got.cell != FOAM_FINISHED_CELL as u16);
            if all && *k > end.steps {
                seen.hull += u32::from(end.tt > 0.001);
                seen.opaque += u32::from(end.tt <= 0.001);
                seen.depth += u32::from(layout == RayLayout::Half && got.depth >= 0.0);
            }
            seen.capped_after_crossing += u32::from(all && *k < end.steps && v > 1);
        }
        let total = |k: u32| -> u32 { c.work.iter().map(|w| w[k as usize]).sum() };
        assert_eq!(c.work[0].len(), FOAM_TW_COUNTERS as usize);
        assert_eq!(total(FOAM_TW_STEPS), cells, "{} cells marched on tile {t}", layout.name());
        // The cost model's counters: every ray loaded and marched on, every face tested.
        let n = plan[t / 2].len() as u32;
        assert_eq!((total(FOAM_TW_LOADED), total(FOAM_TW_RAYS)), (n, n), "rays loaded and marched on tile {t}");
        let tested = total(FOAM_TW_NEIGHBOURS);
        assert!(
            tested >= neighbours.0 && tested <= neighbours.1,
            "{} neighbours tested on tile {t}: {tested} not in {neighbours:?}",
            layout.name()
        );
        assert!(
            total(FOAM_TW_MARCHED) >= visits && total(FOAM_TW_MARCHED) <= visits + plan[t / 2].len() as u32,
            "shard visits on tile {t}"
        );
    }
    seen
}

#[test]
fn march_follows_the_reference_cell_by_cell_on_a_lattice() {
    // Thin cells with a dense block in one corner: rays leave through the hull,
    // stop in the block, or cross 50 % transmittance on the way.
    let l = lattice::Lattice::new(8, 0, |x, y, z| {
        let dense = x >= 5 && y >= 5;
        let sigma = if dense {
            2.5
        } else if (x + 2 * y + z) % 4 == 0 {
            0.0
        } else {
            0.05 + 0.07 * ((x + 3 * z) % 4) as f32
        };
        (sigma, [(40 * x) as u8, (30 * y) as u8, (25 * z + 20) as u8])
    });
    let cam = lattice_camera();
    let pixels: Vec<(u32, u32)> = (1..18).step_by(4).flat_map(|y| (1..24).step_by(5).map(move |x| (x, y))).collect();
    let seen = march_cell_by_cell(&l.scene, &cam, &pixels);
    assert!(
        seen.hull > 0 && seen.opaque > 0 && seen.depth > 0 && seen.left > 0 && seen.capped_after_crossing > 0,
        "{seen:?}"
    );
}

#[test]
fn march_follows_the_reference_cell_by_cell_on_voronoi_cells() {
    let (scene, cam) = voronoi_cells();
    let pixels: Vec<(u32, u32)> = (1..18).step_by(4).flat_map(|y| (1..24).step_by(5).map(move |x| (x, y))).collect();
    let seen = march_cell_by_cell(&scene, &cam, &pixels);
    assert!(seen.depth > 0 && seen.left > 0 && seen.capped_after_crossing > 0, "{seen:?}");
}

/// A worker's march budget counts each ray it marches on (march.h foam_budget_q8:
/// steps by their faces, shard visits and rays): rays capped at one cell each, many
/// per worker, and a budget of 40 steps. Every worker stops at the first ray that
/// takes its spending to the budget, counted with the rays: at or over it, and under
/// it by less than a ray before that ray. Counted without the rays, a worker marches
/// about half as many rays again. The counters run over a frame and the budget's sum
/// wraps (modulo 2^32, compared as a difference): the same from counters whose sum
/// wraps within the step (compared as plain numbers, no ray would march).
#[test]
fn a_march_budget_counts_every_ray() {
    march_budget_counts_every_ray_from(0);
    // Every counter at this start sums to 5,000/256 steps under 2^32 (the weights add
    // to 366, twice an odd number, and 5,000 is even, so some start does): the step's
    // budget ends past the wrap.
    let start = 1_079_609_252u32;
    let weights = common::budget_spent_q8(1, 1, 1, 1) as u32;
    assert_eq!(start.wrapping_mul(weights), 5000u32.wrapping_neg());
    march_budget_counts_every_ray_from(start);
}

fn march_budget_counts_every_ray_from(work0: u32) {
    let l = lattice::Lattice::new(8, 0, |x, y, z| (0.05 + 0.01 * ((x + y + z) % 3) as f32, [50, 60, 70]));
    let cam = lattice_camera();
    let packed = pack(&l.scene, &cam);
    let start = SiteIndex::new(&l.scene).unwrap().nearest(cam.position.to_array());
    let own = packed.part.owner(start);
    let camera = foam_camera { slice_pixels: 1, homes: HOMES, home_shift: 0, ..packed.camera };
    let layout = RayLayout::Half;
    // 60 rays a worker, each one cell from the camera's cell, then finished by its cap.
    let pixels: Vec<(u32, u32)> = (2..18).flat_map(|y| (0..24).map(move |x| (x, y))).take(6 * 60).collect();
    let mut bytes = Vec::new();
    for &(x, y) in &pixels {
        bytes.extend(encode(layout, &fresh_slot(&packed, start, px(x, y, FOAM_MAX_CELL_STEPS - 1))));
    }
    const BUDGET: u32 = 40;
    let mut s = march_graph(&packed, own, &[layout], &camera, &[bytes.clone(), bytes], BUDGET, work0);
    s.run(0).unwrap();
    let faces = (0..l.scene.len()).map(|c| l.scene.neighbours(c).len() as u64).max().unwrap();
    let ray_most = common::budget_spent_q8(1, 1, faces, 1);
    for t in 0..2 {
        let c = read_ctl(&mut s, t);
        for (w, work) in c.work.iter().enumerate() {
            let n = |k: u32| work[k as usize].wrapping_sub(work0) as u64;
            let (rays, visits) = (n(FOAM_TW_RAYS), n(FOAM_TW_MARCHED));
            assert_eq!((rays, n(FOAM_TW_STEPS)), (visits, visits), "tile {t} worker {w}: one visit and one cell a ray");
            assert!(rays < 60, "tile {t} worker {w}: its budget never ran out ({rays} rays)");
            let spent = common::budget_spent_q8(visits, n(FOAM_TW_STEPS), n(FOAM_TW_NEIGHBOURS), rays);
            let budget = BUDGET as u64 * 256;
            assert!(
                spent >= budget && spent <= budget + ray_most,
                "tile {t} worker {w} from {work0}: spent {spent}/256 in {rays} rays, budget {budget}/256"
            );
        }
    }
}

/// Where a fresh ray marched alone by a worker of `budget` q8 (FOAM_BUDGET_*) stops,
/// from the oracle's states of its path: the cells it marches, and the faces those
/// have. A step is counted by its cell's faces as it is taken, and the ray stops after
/// the step that spends the budget (paused in its shard, or at the shard boundary
/// that step reached, whose visit then counts too); sooner where it finishes, or, on
/// a tile holding its first shard alone (`all` false), where it leaves that shard.
fn budget_stop(scene: &Scene, states: &[State], owner: &dyn Fn(u32) -> usize, all: bool, budget: u64) -> (u32, u64) {
    let (mut faces, mut visits) = (0, 0);
    for m in 1..states.len() {
        let (here, next) = (states[m - 1].cell, &states[m]);
        faces += scene.neighbours(here as usize).len() as u64;
        let spent = |visits| common::budget_spent_q8(visits, m as u64, faces, 1);
        assert_ne!(next.cell, u32::MAX, "the ray's hull cell comes before its budget ends");
        if next.finished || spent(visits) >= budget {
            return (m as u32, faces);
        }
        if owner(next.cell) != owner(here) {
            visits += 1;
            if !all || spent(visits) >= budget {
                return (m as u32, faces);
            }
        }
    }
    unreachable!("the oracle's last state is finished")
}

/// A visit ends at the step whose cell's faces spend what is left of the worker's
/// budget, not after a count of 15-face steps: one ray a worker, for budgets of a few
/// steps, stops after exactly the cells the budget's measure says, on a tile with its
/// first shard alone and one with all; on Voronoi cells (5 to 30 faces) and on a
/// lattice's (6 or fewer, where a count of steps would stop at about half the budget).
#[test]
fn a_visit_stops_at_the_step_that_spends_the_budget() {
    let (voronoi, cam) = voronoi_cells();
    visits_stop_where_the_budget_is_spent(&voronoi, &cam);
    let l = lattice::Lattice::new(8, 0, |x, y, z| (0.02 + 0.01 * ((x + y + z) % 3) as f32, [50, 60, 70]));
    visits_stop_where_the_budget_is_spent(&l.scene, &lattice_camera());
}

fn visits_stop_where_the_budget_is_spent(scene: &Scene, cam: &Camera) {
    let packed = pack(scene, cam);
    let owner = |c: u32| packed.part.owner(c);
    let start = SiteIndex::new(scene).unwrap().nearest(cam.position.to_array());
    let own = owner(start);
    let camera = foam_camera { slice_pixels: 1, homes: HOMES, home_shift: 0, ..packed.camera };
    let tracer = Tracer::new(scene);
    let layout = RayLayout::Fp32;
    // Six of the longest paths, one for each worker (worker w marches ray w).
    let mut paths: Vec<((u32, u32), Vec<State>)> = (1..18)
        .flat_map(|y| (0..24).map(move |x| (x, y)))
        .filter_map(|(x, y)| {
            let (o, d) = cam.pixel_ray(x, y);
            Some(((x, y), payload::states(&tracer, &owner, start, o, d, 0.001, layout)?))
        })
        .collect();
    paths.sort_by_key(|(_, states)| std::cmp::Reverse(states.len()));
    paths.truncate(6);
    let mut bytes = Vec::new();
    for &((x, y), _) in &paths {
        bytes.extend(encode(layout, &fresh_slot(&packed, start, px(x, y, 0))));
    }
    let mut paused = 0;
    for budget in [1u32, 2, 3, 5] {
        let mut s = march_graph(&packed, own, &[layout], &camera, &[bytes.clone(), bytes.clone()], budget, 0);
        s.run(0).unwrap();
        for t in 0..2 {
            let c = read_ctl(&mut s, t);
            let mut inbox = vec![0u8; 16 + bytes.len()];
            s.read_tensor(&format!("inbox{t}"), &mut inbox).unwrap();
            let stride = layout.payload_bytes() as usize;
            for (w, (_, states)) in paths.iter().enumerate() {
                let what = format!("budget {budget}, tile {t} ({} shards), worker {w}", if t == 1 { 8 } else { 1 });
                let (cells, faces) = budget_stop(scene, states, &owner, t == 1, budget as u64 * 256);
                let work = &c.work[w];
                let got = (work[FOAM_TW_STEPS as usize], work[FOAM_TW_NEIGHBOURS as usize] as u64);
                assert_eq!(got, (cells, faces), "{what}: cells and faces");
                // A ray paused inside its shard goes on from the cell the oracle enters next.
                let slot = &inbox[16 + w * stride..][..2];
                if u16::from_le_bytes([slot[0], slot[1]]) as u32 == FOAM_PAUSED_SHARD {
                    let next = states[cells as usize].cell;
                    let p = c.paused[w];
                    assert_eq!(
                        (p.shard as usize, p.cell as usize),
                        (owner(next), packed.part.local_index(next)),
                        "{what}: paused"
                    );
                    paused += 1;
                }
            }
        }
    }
    assert!(paused > 0, "some ray paused inside a shard");
}
