//! What each tile role's program takes of its tile on the IPU: the code of the vertex
//! types the render graph maps there and six worker stacks as deep as the deepest
//! needs, as the host runtime measures and counts them in every tile's memory
//! (`poplar_bridge::program_bytes`).

use super::options::Schedule;
use super::tree::Role;

/// The vertex types codelets/graph/render_graph.cpp maps to a tile of `role` under
/// `schedule`: where a router counts and plans in one set one vertex does both
/// (RouterCountPlan), and where an injector deals and emits in one set one vertex
/// deals and emits (InjectorDealEmit), as the graph builder's step layout says.
pub fn vertex_types(role: Role, schedule: Schedule) -> &'static [&'static str] {
    // The layout: sets, then the set of TracerMarch, TracerSend, RouterCount,
    // RouterPlan, RouterForward, SpillStore, Injector, InjectorMarch, InjectorSend.
    let at = poplar_bridge::step_layout(schedule as u8).expect("the graph builder lays out every schedule");
    let (count_plan, deal_emit) = (at[3] == at[4], at[7] == at[9]);
    match role {
        Role::Tracer => &["TracerMarch", "TracerSend", "ZeroBytes", "ZeroWords"],
        Role::Router if count_plan => &["RouterCountPlan", "RouterForward", "ZeroBytes", "ZeroWords"],
        Role::Router => &["RouterCount", "RouterPlan", "RouterForward", "ZeroBytes", "ZeroWords"],
        Role::Spill => &["SpillStore", "ZeroBytes", "ZeroWords"],
        Role::Injector if deal_emit => &["InjectorMarch", "InjectorDealEmit", "ZeroBytes", "ZeroWords"],
        Role::Injector => &["Injector", "InjectorMarch", "InjectorSend", "ZeroBytes", "ZeroWords"],
    }
}

/// Code and worker stacks of a tile of `role` (the most under any schedule); None in
/// a build against the Poplar SDK, where popc decides them.
pub fn program_bytes(role: Role) -> Option<u64> {
    Schedule::ALL
        .iter()
        .map(|&s| poplar_bridge::program_bytes(vertex_types(role, s)))
        .try_fold(0, |most, b| b.map(|b| most.max(b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::options::TILE_RESERVE_BYTES;

    const ROLES: [Role; 4] = [Role::Tracer, Role::Router, Role::Spill, Role::Injector];
    /// What the reserve keeps beside a program: vertex state (a few hundred bytes
    /// per tile) and exchange and control code, which the host runtime does not count.
    const SPARE_BYTES: u64 = 8 * 1024;

    /// The plan sizes buffers to leave TILE_RESERVE_BYTES of every tile free; each
    /// role's code and stacks must fit there with room to spare for vertex state and
    /// small tensors, or a filled tile goes over budget when the graph is built.
    #[test]
    fn the_tile_reserve_holds_every_role_program() {
        for role in ROLES {
            let bytes = program_bytes(role).unwrap_or_else(|| panic!("{role:?}: a vertex type is not compiled in"));
            assert!(
                bytes > 0 && bytes + SPARE_BYTES <= TILE_RESERVE_BYTES as u64,
                "{role:?}: {bytes} B of code and stacks"
            );
        }
    }

    /// `partition`'s default tracer program is what this build measures, give or
    /// take small compiler differences, and never less.
    #[test]
    fn partition_default_tracer_program_is_the_measured_one() {
        let measured = program_bytes(Role::Tracer).unwrap();
        let default = partition::TracerFootprint::DEFAULT_PROGRAM_BYTES;
        assert!(measured <= default && default <= measured + 1024, "measured {measured} B, default {default} B");
    }

    /// Every vertex type the graph maps is one the runtime has.
    #[test]
    fn every_role_vertex_type_is_compiled_in() {
        let costs = poplar_bridge::vertex_costs();
        for role in ROLES {
            for s in Schedule::ALL {
                for t in vertex_types(role, s) {
                    assert!(costs.iter().any(|c| c.name == *t && c.measured), "{t}");
                }
            }
        }
        // The two-set schedule's routers and injectors run one vertex where the others run two.
        assert!(vertex_types(Role::Router, Schedule::PlanBesideMarch).contains(&"RouterCountPlan"));
        assert!(!vertex_types(Role::Router, Schedule::SendBesideForward).contains(&"RouterCountPlan"));
        assert!(vertex_types(Role::Injector, Schedule::PlanBesideMarch).contains(&"InjectorDealEmit"));
    }
}
