// What the host prints: tensors (program::PrintTensor) and the profile summary, a
// digest of the runtime's own counters and memory report.
#include "engine_impl.hpp"
#include <algorithm>
#include <cstring>
#include <iomanip>
#include <poplar/Engine.hpp>
#include <sstream>

namespace poplar_host {
namespace {

void element(std::ostream &o, const poplar::Type &t, const std::uint8_t *p) {
  auto get = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  // Floating-point elements with seven decimals, as Poplar prints them.
  auto real = [&](float f) { o << std::fixed << std::setprecision(7) << f << std::defaultfloat; };
  switch (t.kind()) {
  case TypeKind::Bool: o << (get(std::uint8_t{}) ? 1 : 0); break;
  case TypeKind::Char: o << int(get(std::int8_t{})); break;
  case TypeKind::UnsignedChar: o << unsigned(get(std::uint8_t{})); break;
  case TypeKind::Short: o << get(std::int16_t{}); break;
  case TypeKind::UnsignedShort: o << get(std::uint16_t{}); break;
  case TypeKind::Half: real(halfBitsToFloat(get(std::uint16_t{}))); break;
  case TypeKind::Int: o << get(std::int32_t{}); break;
  case TypeKind::UnsignedInt: o << get(std::uint32_t{}); break;
  case TypeKind::Float: real(get(float{})); break;
  default: o << "?"; break;
  }
}

// Elements [at, at + count of this dimension's block) as nested brackets.
void nested(std::ostream &o, const Print &p, const std::vector<std::uint8_t> &bytes, std::size_t dim, std::size_t &at,
            std::size_t indent) {
  const std::size_t n = dim < p.shape.size() ? p.shape[dim] : 1;
  o << '[';
  for (std::size_t i = 0; i < n; ++i) {
    if (dim + 1 < p.shape.size()) {
      if (i)
        o << '\n' << std::string(indent + 1, ' ');
      nested(o, p, bytes, dim + 1, at, indent + 1);
    } else {
      if (i)
        o << ' ';
      element(o, p.type, bytes.data() + at * p.type.size());
      ++at;
    }
  }
  o << ']';
}

} // namespace

void printTensor(const Print &p, std::ostream &out) {
  std::vector<std::uint8_t> bytes(p.io.bytes);
  std::size_t pos = 0;
  for (const auto &r : p.io.runs) {
    std::memcpy(bytes.data() + pos, r.first, r.second);
    pos += r.second;
  }
  std::ostringstream o;
  const std::string head = p.title.empty() ? std::string() : p.title + ": ";
  o << head;
  std::size_t at = 0;
  if (p.shape.empty())
    element(o, p.type, bytes.data());
  else
    nested(o, p, bytes, 0, at, head.size());
  out << o.str() << '\n' << std::flush;
}

} // namespace poplar_host

namespace poplar {
using namespace poplar_host;

void Engine::printProfileSummary(std::ostream &out, const OptionFlags &) const {
  const EngineImpl &e = *impl_;
  const Target &t = e.s.target;
  const MemoryReport &m = e.layout.report;
  std::uint64_t total = 0;
  const TileMemory *busiest = nullptr;
  for (const TileMemory &tm : m.tiles) {
    total += tm.total();
    if (!busiest || tm.total() > busiest->total())
      busiest = &tm;
  }
  const Counters &c = e.counters;
  std::ostringstream o;
  o << "Host runtime profile summary (the foam-ipu host runtime's counters and estimates, not an IPU profile)\n";
  o << "Target: " << t.getTargetArchString() << ", " << t.getNumIPUs() << " IPU(s) x " << t.getTilesPerIPU()
    << " tiles, " << t.getBytesPerTile() << " bytes per tile\n\n";
  o << "Memory:\n";
  o << "  Total: " << total << " bytes on " << m.tiles.size() << " tiles in use\n";
  if (busiest)
    o << "  Busiest tile " << busiest->tile << ": " << busiest->total() << " bytes (tensors " << busiest->tensorBytes
      << ", vertex state " << busiest->vertexStateBytes << ", code " << busiest->codeBytes << ", worker stacks "
      << busiest->stackBytes << ")\n";
  o << "\nExecution:\n";
  o << "  Host calls (run, readTensor, writeTensor): " << c.hostCalls << "\n";
  o << "  Compute sets executed: " << c.computeSteps << ", vertex runs " << c.vertexRuns << "\n";
  o << "  Estimated compute cycles (busiest tile's setPerfEstimate per compute set, summed): " << c.estimatedCycles
    << "\n";
  o << "  Copy programs: " << c.copies << ", " << c.bytesExchanged << " bytes between tiles, " << c.bytesCopiedOnTile
    << " bytes on tiles\n";
  if (t.getNumIPUs() > 1)
    o << "  Of the bytes between tiles, across IPUs (IPU-Links): " << c.bytesAcrossIPUs << "\n";
  o << "  Implicit exchange (fields connected to data on other tiles): " << c.implicitExchangeBytes << " bytes\n";
  o << "  Data streams: " << c.streamBytes << " bytes\n";
  o << "\n  Compute sets:\n";
  for (const CsPlan &p : e.cs)
    o << "    " << p.name << ": " << p.runs.size() << " vertices on " << p.tiles.size() << " tiles, " << p.executions
      << " execution(s), " << p.perfMax << " estimated cycles each, " << p.implicitBytes
      << " bytes of implicit exchange each\n";
  out << o.str() << std::flush;
}

} // namespace poplar
