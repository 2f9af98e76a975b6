// Host runtime internals: where every tensor element lives in tile memory, and what
// each tile holds (the memory report and the per-tile budget check).
#ifndef POPLAR_HOST_LAYOUT_HPP
#define POPLAR_HOST_LAYOUT_HPP
#include "state.hpp"
#include <map>
#include <poplar_host/Report.hpp>
#include <string>

namespace poplar_host {

// Elements [begin, end) of a variable, stored at byte `offset` of `tile`.
struct Placement {
  std::size_t begin, end;
  unsigned tile;
  std::size_t offset;
};

// Bytes [off, off + len) of a tile's memory.
struct Run {
  unsigned tile;
  std::size_t off, len;
};

// A vertex field whose data is not one suitably aligned region on the vertex's tile:
// as Poplar does, the runtime gives it a buffer there and copies the data in before
// its compute set runs (Input, InOut) and out after (Output, InOut).
struct ImplicitField {
  unsigned vertex;
  std::string field;
  unsigned tile;
  std::size_t offset, bytes; // the buffer
  FieldDir dir;
  std::vector<Run> data; // where the connected view's bytes live, in element order
};

struct Layout {
  std::vector<std::vector<Placement>> vars; // per variable, ascending begin
  std::vector<std::uint64_t> tileTensorBytes;
  std::vector<ImplicitField> implicit;
  std::map<std::pair<unsigned, std::string>, std::size_t> implicitOf; // (vertex, field) -> implicit index
  MemoryReport report;
};

// strict: unmapped tensors or vertices are errors (Engine); otherwise they are left out (report).
Layout computeLayout(const GraphState &s, bool strict);
// Whether every element of the view has a placement (always, in a strict layout).
bool viewPlaced(const Layout &l, const TensorData &d);
// Throws poplar::graph_memory_allocation_error naming the first tile over budget.
void checkBudget(const MemoryReport &r);

// Calls f(tile, byteOffset, byteLength) for the view's elements in order; adjacent runs
// on a tile are merged.
template <typename F> void resolveView(const Layout &l, const TensorData &d, F &&f) {
  const unsigned es = d.type.size();
  bool have = false;
  unsigned ct = 0;
  std::size_t co = 0, cl = 0;
  for (const auto &sg : d.segs) {
    const auto &ps = l.vars[sg.var];
    std::size_t lo = 0, hi = ps.size();
    while (hi - lo > 1) { // last placement with begin <= sg.begin
      const std::size_t mid = (lo + hi) / 2;
      if (ps[mid].begin <= sg.begin)
        lo = mid;
      else
        hi = mid;
    }
    for (std::size_t k = lo, pos = sg.begin; pos < sg.end; ++k) {
      const Placement &p = ps[k];
      const std::size_t e = std::min(sg.end, p.end);
      const std::size_t off = p.offset + (pos - p.begin) * es, len = (e - pos) * es;
      if (have && ct == p.tile && co + cl == off) {
        cl += len;
      } else {
        if (have)
          f(ct, co, cl);
        have = true;
        ct = p.tile;
        co = off;
        cl = len;
      }
      pos = e;
    }
  }
  if (have)
    f(ct, co, cl);
}

} // namespace poplar_host
#endif
