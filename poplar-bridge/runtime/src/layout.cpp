// Tile memory layout and accounting: tensors are placed region by region on their tiles
// (each region 8-byte aligned), then the buffers of fields connected to data elsewhere;
// vertex state, code and worker stacks are counted as Report.hpp describes.
#include "layout.hpp"
#include <algorithm>
#include <map>
#include <poplar/Engine.hpp>
#include <poplar/exceptions.hpp>
#include <set>
#include <sstream>

namespace poplar_host {

bool viewPlaced(const Layout &l, const TensorData &d) {
  for (const auto &sg : d.segs) {
    const auto &ps = l.vars[sg.var];
    // The first placement ending after sg.begin, then consecutive ones without a gap.
    auto it = std::upper_bound(ps.begin(), ps.end(), sg.begin, [](std::size_t x, const Placement &p) { return x < p.end; });
    for (std::size_t pos = sg.begin; pos < sg.end; ++it) {
      if (it == ps.end() || it->begin > pos)
        return false;
      pos = it->end;
    }
  }
  return true;
}

namespace {

enum ItemKind { kTensorItem = 0, kStateItem = 1, kCodeItem = 2, kStackItem = 3 };

struct Tally {
  std::vector<std::uint64_t> stateBytes, codeBytes, stackBytes;
  std::vector<std::map<std::pair<int, std::string>, std::uint64_t>> items;
  std::vector<std::set<const VertexType *>> types;
  explicit Tally(unsigned tiles) : stateBytes(tiles), codeBytes(tiles), stackBytes(tiles), items(tiles), types(tiles) {}
};

// Appends `bytes` to `tile` at the next offset aligned to `align`, charged to `name`.
std::size_t place(Layout &l, Tally &t, unsigned tile, std::uint64_t bytes, std::uint64_t align,
                  const std::string &name) {
  const std::uint64_t at = (l.tileTensorBytes[tile] + align - 1) / align * align;
  t.items[tile][{kTensorItem, name}] += at - l.tileTensorBytes[tile] + bytes;
  l.tileTensorBytes[tile] = at + bytes;
  return static_cast<std::size_t>(at);
}

void placeVariables(const GraphState &s, bool strict, Layout &l, Tally &t) {
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
      const unsigned tile = r.second.second;
      gap(next, b);
      next = e;
      const std::size_t at = place(l, t, tile, std::uint64_t(e - b) * v.type.size(), kTensorAlignment, v.name);
      l.vars[vi].push_back({b, e, tile, at});
    }
    gap(next, v.n);
  }
}

// Fields whose data is not one region on the vertex's tile, aligned as the field
// needs, get a buffer there (Poplar inserts the exchange; so does the runtime).
void placeImplicitFields(const GraphState &s, bool strict, Layout &l, Tally &t) {
  for (unsigned id = 0; id < s.vertices.size(); ++id) {
    const VertexInfo &v = s.vertices[id];
    if (v.tile < 0)
      continue;
    const unsigned tile = static_cast<unsigned>(v.tile);
    for (const auto &c : v.conns) {
      const FieldDesc *f = v.type->field(c.first);
      if (!c.second.isTensor || !f || (!strict && !viewPlaced(l, c.second.tensor.hostData())))
        continue;
      std::vector<Run> runs;
      resolveView(l, c.second.tensor.hostData(), [&](unsigned rt, std::size_t o, std::size_t n) { runs.push_back({rt, o, n}); });
      const bool local = runs.empty() || (runs.size() == 1 && runs[0].tile == tile && runs[0].off % f->align == 0);
      if (local)
        continue;
      std::uint64_t bytes = 0;
      for (const Run &r : runs)
        bytes += r.len;
      const std::string name = "<exchange> " + v.type->name + "." + f->name;
      const std::size_t at = place(l, t, tile, bytes, std::max<std::uint64_t>(kTensorAlignment, f->align), name);
      l.implicitOf[{id, f->name}] = l.implicit.size();
      l.implicit.push_back({id, f->name, tile, at, static_cast<std::size_t>(bytes), f->dir, std::move(runs)});
    }
  }
}

void countVertices(const GraphState &s, bool strict, Tally &t) {
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
    const unsigned tile = static_cast<unsigned>(v.tile);
    t.stateBytes[tile] += b;
    t.items[tile][{kStateItem, v.type->name}] += b;
    t.types[tile].insert(v.type);
  }
  for (unsigned tile = 0; tile < t.types.size(); ++tile) {
    const VertexType *deepest = nullptr;
    for (const VertexType *vt : t.types[tile]) {
      t.codeBytes[tile] += vt->codeBytes;
      t.items[tile][{kCodeItem, vt->name}] += vt->codeBytes;
      if (!deepest || vt->stackBytes > deepest->stackBytes)
        deepest = vt;
    }
    if (deepest) {
      t.stackBytes[tile] = kWorkerStacksPerTile * deepest->stackBytes;
      t.items[tile][{kStackItem, deepest->name}] += t.stackBytes[tile];
    }
  }
}

} // namespace

Layout computeLayout(const GraphState &s, bool strict) {
  const unsigned numTiles = s.target.getNumTiles();
  Layout l;
  l.vars.resize(s.vars.size());
  l.tileTensorBytes.assign(numTiles, 0);
  Tally t(numTiles);
  placeVariables(s, strict, l, t);
  placeImplicitFields(s, strict, l, t);
  countVertices(s, strict, t);

  l.report.numTiles = numTiles;
  l.report.bytesPerTile = s.target.getBytesPerTile();
  for (unsigned tile = 0; tile < numTiles; ++tile) {
    if (t.items[tile].empty())
      continue;
    TileMemory m;
    m.tile = tile;
    m.tensorBytes = l.tileTensorBytes[tile];
    m.vertexStateBytes = t.stateBytes[tile];
    m.codeBytes = t.codeBytes[tile];
    m.stackBytes = t.stackBytes[tile];
    for (const auto &kv : t.items[tile])
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
  case MemoryKind::Code: return "code";
  default: return "worker stacks";
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
    << ", worker stacks " << t.stackBytes << "); largest:";
  for (std::size_t i = 0; i < t.items.size() && i < 3; ++i)
    o << (i ? "," : "") << " " << kindName(t.items[i].kind) << " '" << t.items[i].name << "' " << t.items[i].bytes
      << " B";
  if (over.size() > 1)
    o << "; " << over.size() << " tiles over budget";
  throw poplar::graph_memory_allocation_error(o.str());
}

MemoryReport memoryReport(const poplar::Graph &g) { return computeLayout(g.hostState(), false).report; }

} // namespace poplar_host
