// Bridge entry for the render graph: converts the Rust plan's spec into
// foam::RenderSpec (spec.h) and builds it into a session's graph.
#pragma once
#include "rust/cxx.h"
#include <cstdint>

namespace foam_bridge {
class Session;
struct RenderSpec;
rust::Vec<std::uint32_t> build_render_graph(Session &session, const RenderSpec &spec);
} // namespace foam_bridge
