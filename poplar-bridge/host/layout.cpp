// Tile memory layout and accounting: tensors are placed region by region on their tiles
// (each region 8-byte aligned); vertex state and code are estimated (README).
#include "layout.hpp"
#include <algorithm>
#include <map>
#include <poplar/Engine.hpp>
#include <poplar/exceptions.hpp>
#include <set>
#include <sstream>

namespace poplar_host {

Layout computeLayout(const GraphState &s, bool strict) {
  const unsigned numTiles = s.target.getNumTiles();
  Layout l;
  l.vars.resize(s.vars.size());
  l.tileTensorBytes.assign(numTiles, 0);
  std::vector<std::uint64_t> stateBytes(numTiles, 0);
  std::vector<std::map<std::pair<int, std::string>, std::uint64_t>> items(numTiles);
  std::vector<std::set<const VertexType *>> types(numTiles);

  for (std::size_t vi = 0; vi < s.vars.size(); ++vi) {
    const Var &v = s.vars[vi];
    std::size_t next = 0;
    auto gap = [&](std::size_t b, std::size_t e) {
      if (strict && b < e)
        throw poplar::invalid_tile_mapping("tensor '" + v.name + "' has no tile mapping for elements [" +
                                           std::to_string(b) + ", " + std::to_string(e) + ") of " +
                                           std::to_string(v.n) + "; every tensor must be mapped to tiles");
    };
    for (const auto &r : v.mapping.ranges()) {
      const std::size_t b = r.first, e = r.second.first;
      const unsigned t = r.second.second;
      gap(next, b);
      next = e;
      const std::uint64_t at = (l.tileTensorBytes[t] + kTensorAlignment - 1) & ~(kTensorAlignment - 1);
      const std::uint64_t bytes = std::uint64_t(e - b) * v.type.size();
      items[t][{0, v.name}] += at - l.tileTensorBytes[t] + bytes;
      l.tileTensorBytes[t] = at + bytes;
      l.vars[vi].push_back({b, e, t, static_cast<std::size_t>(at)});
    }
    gap(next, v.n);
  }

  for (unsigned id = 0; id < s.vertices.size(); ++id) {
    const VertexInfo &v = s.vertices[id];
    if (v.tile < 0) {
      if (strict)
        throw poplar::invalid_tile_mapping("vertex " + s.vertexName(id) + " has no tile mapping");
      continue;
    }
    std::uint64_t b = kVertexListEntryBytes;
    for (const auto &f : v.type->fields)
      b += f.stateBytes();
    const unsigned t = static_cast<unsigned>(v.tile);
    stateBytes[t] += b;
    items[t][{1, v.type->name}] += b;
    types[t].insert(v.type);
  }

  l.report.numTiles = numTiles;
  l.report.bytesPerTile = s.target.getBytesPerTile();
  for (unsigned t = 0; t < numTiles; ++t) {
    if (items[t].empty())
      continue;
    TileMemory m;
    m.tile = t;
    m.tensorBytes = l.tileTensorBytes[t];
    m.vertexStateBytes = stateBytes[t];
    for (const VertexType *vt : types[t])
      items[t][{2, vt->name}] += kCodeBytesPerVertexType;
    m.codeBytes = types[t].size() * kCodeBytesPerVertexType;
    for (const auto &kv : items[t])
      m.items.push_back({static_cast<MemoryKind>(kv.first.first), kv.first.second, kv.second});
    std::stable_sort(m.items.begin(), m.items.end(),
                     [](const MemoryItem &a, const MemoryItem &b) { return a.bytes > b.bytes; });
    l.report.tiles.push_back(std::move(m));
  }
  return l;
}

static const char *kindName(MemoryKind k) {
  switch (k) {
  case MemoryKind::Tensor: return "tensor";
  case MemoryKind::VertexState: return "vertex state";
  default: return "code";
  }
}

void checkBudget(const MemoryReport &r) {
  std::vector<const TileMemory *> over;
  for (const auto &t : r.tiles)
    if (t.total() > r.bytesPerTile)
      over.push_back(&t);
  if (over.empty())
    return;
  const TileMemory &t = *over.front();
  std::ostringstream o;
  o << "Out of memory on tile " << t.tile << ": " << t.total() << " bytes needed but tiles have " << r.bytesPerTile
    << " (tensors " << t.tensorBytes << ", vertex state " << t.vertexStateBytes << ", code " << t.codeBytes
    << "); largest:";
  for (std::size_t i = 0; i < t.items.size() && i < 3; ++i)
    o << (i ? "," : "") << " " << kindName(t.items[i].kind) << " '" << t.items[i].name << "' " << t.items[i].bytes
      << " B";
  if (over.size() > 1)
    o << "; " << over.size() << " tiles over budget";
  throw poplar::graph_memory_allocation_error(o.str());
}

MemoryReport memoryReport(const poplar::Graph &g) { return computeLayout(g.hostState(), false).report; }

} // namespace poplar_host
