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
  std::uint64_t bytesCopiedOnTile = 0;
  std::uint64_t hostCalls = 0;      // Engine::run + readTensor + writeTensor
  std::uint64_t estimatedCycles = 0; // sum over Executes of the busiest tile's setPerfEstimate cycles
};

enum class MemoryKind { Tensor, VertexState, Code };

struct MemoryItem {
  MemoryKind kind;
  std::string name; // tensor debug name, vertex type (state) or vertex type (code)
  std::uint64_t bytes;
};

struct TileMemory {
  unsigned tile;
  std::uint64_t tensorBytes = 0, vertexStateBytes = 0, codeBytes = 0;
  std::uint64_t total() const { return tensorBytes + vertexStateBytes + codeBytes; }
  std::vector<MemoryItem> items; // aggregated by (kind, name), largest first
};

struct MemoryReport {
  unsigned numTiles = 0;
  std::uint64_t bytesPerTile = 0;
  std::vector<TileMemory> tiles; // only tiles that hold anything, ascending tile order
};

// Estimates documented in poplar-bridge/README.md.
constexpr std::uint64_t kCodeBytesPerVertexType = 2048; // per vertex type present on a tile
constexpr std::uint64_t kVertexListEntryBytes = 4;      // per vertex: its entry in the compute-set list
constexpr std::uint64_t kTensorAlignment = 8;           // each tensor region on a tile starts 8-aligned

Counters counters(const poplar::Engine &e);
void resetCounters(poplar::Engine &e);
MemoryReport memoryReport(const poplar::Engine &e);
// Replaces the engine's thread pool (FOAM_THREADS at construction) with `threads` threads.
void setThreads(poplar::Engine &e, unsigned threads);
// Available before Engine construction, also when the graph is over budget.
MemoryReport memoryReport(const poplar::Graph &g);

} // namespace poplar_host
#endif
