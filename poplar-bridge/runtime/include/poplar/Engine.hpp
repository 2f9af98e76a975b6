// Host runtime of the Poplar API subset: poplar::Engine. Construction checks the graph
// against the IPU's rules (every tensor mapped, per-tile memory, vertex fields on the
// vertex's tile, copy sizes) and lays out tile memory; run() executes a program.
#ifndef POPLAR_ENGINE_HPP
#define POPLAR_ENGINE_HPP
#include <memory>
#include <ostream>
#include <poplar/ArrayRef.hpp>
#include <poplar/Device.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/StringRef.hpp>
#include <string>

namespace poplar_host {
struct EngineImpl;
}

namespace poplar {

class Executable;

class Engine {
public:
  // An engine for a graph compiled by compileGraph (poplar/Executable.hpp).
  explicit Engine(Executable &&exe, const OptionFlags &opts = {});
  Engine(Graph &&graph, ArrayRef<program::Program> progs, const OptionFlags &opts = {});
  Engine(Graph &&graph, const program::Program &prog, const OptionFlags &opts = {});
  Engine(const Graph &graph, ArrayRef<program::Program> progs, const OptionFlags &opts = {});
  Engine(const Graph &graph, const program::Program &prog, const OptionFlags &opts = {});
  Engine(Engine &&) noexcept;
  Engine &operator=(Engine &&) noexcept;
  ~Engine();

  // Refuses a device whose target is not the graph's (type, arch, IPUs, tiles,
  // memory), and an IPU that is not attached.
  void load(const Device &device);
  void run(unsigned prog = 0, const std::string &debugName = "");
  void writeTensor(StringRef handle, const void *buf, const void *bufEnd);
  void readTensor(StringRef handle, void *buf, void *bufEnd);
  // Host memory for a data stream: [begin, end) holds a whole number of transfers and
  // is used as a ring, one transfer per Copy; a single pointer is one transfer.
  void connectStream(StringRef handle, void *begin, void *end);
  void connectStream(StringRef handle, void *p);
  // A summary of the host runtime's own counters and memory report (not a Poplar
  // profile: nothing here was measured on an IPU).
  void printProfileSummary(std::ostream &out, const OptionFlags &opts = {}) const;

  poplar_host::EngineImpl &hostImpl() const { return *impl_; } // host runtime only

private:
  std::unique_ptr<poplar_host::EngineImpl> impl_;
};

} // namespace poplar
#endif
