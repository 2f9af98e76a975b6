// Bridge entry for the render graph: converts the Rust plan's spec into
// foam::RenderSpec (spec.h) and builds it into a session's graph, or tells the
// plan the tile sizes the graph builder allocates (tile_bytes.h).
#pragma once
#include "rust/cxx.h"
#include <cstdint>

namespace foam_bridge {
class Session;
struct RenderSpec;
struct TileBytes;
struct TileContents;
struct ResetVertex;
rust::Vec<std::uint32_t> build_render_graph(Session &session, const RenderSpec &spec);
rust::Vec<TileBytes> spec_tile_bytes(const RenderSpec &spec);
rust::Vec<ResetVertex> spec_reset_vertices(const RenderSpec &spec);
rust::Vec<std::uint8_t> step_layout(std::uint8_t schedule);
TileBytes role_tile_bytes(std::uint8_t role, rust::Slice<const std::uint8_t> params, const TileContents &contents);
} // namespace foam_bridge
