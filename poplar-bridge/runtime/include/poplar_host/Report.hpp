// Host runtime extensions (not Poplar API): execution counters and the per-tile memory
// report that PopVision would show on hardware.
#ifndef POPLAR_HOST_REPORT_HPP
#define POPLAR_HOST_REPORT_HPP
#include <cstdint>
#include <string>
#include <vector>

namespace poplar {
class Engine;
class Graph;
} // namespace poplar

namespace poplar_host {

struct Counters {
  std::uint64_t computeSteps = 0;   // Execute programs run
  std::uint64_t vertexRuns = 0;     // vertex compute() calls (a MultiVertex counts once)
  std::uint64_t copies = 0;         // tensor->tensor Copy programs run
  std::uint64_t bytesExchanged = 0; // Copy bytes whose source and destination tiles differ
  std::uint64_t bytesAcrossIPUs = 0; // of bytesExchanged, those between tiles of different IPUs (IPU-Links)
  std::uint64_t bytesCopiedOnTile = 0;
  std::uint64_t hostCalls = 0;      // Engine::run + readTensor + writeTensor
  std::uint64_t estimatedCycles = 0; // sum over Executes of the busiest tile's setPerfEstimate cycles
  std::uint64_t implicitExchangeBytes = 0; // bytes the runtime copied for fields not on their vertex's tile
  std::uint64_t streamBytes = 0;           // bytes moved by Copy to or from a data stream
};

// One compute set: what it holds and what it cost so far.
struct ComputeSetReport {
  std::string name;
  std::uint64_t vertices = 0, tiles = 0;
  std::uint64_t executions = 0;
  std::uint64_t estimatedCycles = 0; // per execution: the busiest tile's setPerfEstimate cycles
  // Per execution: bytes of the copies Poplar inserts for vertex fields connected to
  // data on other tiles (or not contiguous on theirs), in before compute and out after.
  std::uint64_t implicitExchangeBytes = 0;
};

enum class MemoryKind { Tensor, VertexState, Code, Stack };

struct MemoryItem {
  MemoryKind kind;
  // tensor debug name (an implicit exchange buffer: "<exchange> Vertex.field"),
  // vertex type (state, code), or the vertex type with the deepest stack (stack)
  std::string name;
  std::uint64_t bytes;
};

struct TileMemory {
  unsigned tile;
  std::uint64_t tensorBytes = 0, vertexStateBytes = 0, codeBytes = 0, stackBytes = 0;
  std::uint64_t total() const { return tensorBytes + vertexStateBytes + codeBytes + stackBytes; }
  std::vector<MemoryItem> items; // aggregated by (kind, name), largest first
};

struct MemoryReport {
  unsigned numTiles = 0;
  std::uint64_t bytesPerTile = 0;
  std::vector<TileMemory> tiles; // only tiles that hold anything, ascending tile order
};

// Estimates documented in poplar-bridge/README.md.
constexpr std::uint64_t kVertexListEntryBytes = 4; // per vertex: its entry in the compute-set list
constexpr std::uint64_t kTensorAlignment = 8;      // each tensor region on a tile starts 8-aligned

// A vertex type's worker stack and code on the IPU, from what build.rs measured on
// its host object (x86-64, -O2; HostMeasure).
// Stack x1: the codelets hold fixed-width data, which takes the same bytes on the
// IPU, while pointers and register spills take 4 bytes there instead of 8 and the
// return address stays in a register; so the host's frames bound the IPU's.
// Code x1.5: IPU instructions are 4 bytes (8 for a dual-issue pair) where x86-64
// ones average under 4, and the IPU has neither memory operands nor scaled-index
// addressing, so the same loop takes more of them.
constexpr std::uint64_t kStackPercentOfHost = 100;
constexpr std::uint64_t kCodePercentOfHost = 150;
// For a vertex type compiled outside build.rs (nothing measured).
constexpr std::uint64_t kUnmeasuredStackBytes = 512;
constexpr std::uint64_t kUnmeasuredCodeBytes = 2048;
// Every tile reserves one stack per worker context, each as deep as the deepest
// vertex type mapped to the tile needs.
constexpr std::uint64_t kWorkerStacksPerTile = 6;

Counters counters(const poplar::Engine &e);
// Every compute set of the engine's graph, in creation order.
std::vector<ComputeSetReport> computeSetReport(const poplar::Engine &e);
void resetCounters(poplar::Engine &e);
MemoryReport memoryReport(const poplar::Engine &e);
// Replaces the engine's thread pool (FOAM_THREADS at construction) with `threads` threads.
void setThreads(poplar::Engine &e, unsigned threads);
// Available before Engine construction, also when the graph is over budget.
MemoryReport memoryReport(const poplar::Graph &g);

} // namespace poplar_host
#endif
