// Host runtime internals: the Engine's execution plan (engine.cpp builds and runs it;
// print.cpp prints tensors and the profile summary from it).
#ifndef POPLAR_HOST_ENGINE_IMPL_HPP
#define POPLAR_HOST_ENGINE_IMPL_HPP
#include "layout.hpp"
#include "pool.hpp"
#include "record.hpp"
#include <cstdlib>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace poplar_host {

struct VRun {
  void *obj;
  bool (*run)(void *);
  bool (*runWorker)(void *, unsigned);
  unsigned vertex;
};

struct Job {
  unsigned group; // tile group
  int worker;     // -1: the group's vertices in order; else one worker of its lone MultiVertex
};

struct Piece {
  const std::uint8_t *src;
  std::uint8_t *dst;
  std::size_t len, stageOff;
};

struct CsPlan {
  std::string name;
  std::vector<VRun> runs;             // grouped by tile, in vertex order within a tile
  std::vector<std::size_t> tileStart; // tile group k is runs[tileStart[k], tileStart[k+1])
  std::vector<unsigned> tiles;
  // What the pool runs. A tile whose only vertex in the set is a MultiVertex runs as
  // six jobs, one per worker, as its workers run concurrently on hardware; so one busy
  // tile does not hold a host thread while the others idle. Jobs are ordered worker
  // by worker so that a tile's workers land far apart in the pool's queue.
  std::vector<Job> jobs;
  std::uint64_t perfMax = 0;
  // The implicit exchange of fields connected to data elsewhere: into their buffers
  // before the vertices run, out of them after.
  std::vector<Piece> copyIn, copyOut;
  std::uint64_t implicitBytes = 0;
  std::uint64_t executions = 0;
};

struct CopyPlan {
  std::vector<Piece> pieces;
  std::vector<std::size_t> chunkStart; // chunk k is pieces[chunkStart[k], chunkStart[k+1])
  bool staged = false;                 // some source bytes are also destination bytes
  std::vector<std::uint8_t> stage;
  std::uint64_t cross = 0, onTile = 0;
  std::uint64_t crossIpu = 0; // of `cross`, bytes whose tiles are on different IPUs
};

struct Exec {
  ProgKind kind;
  std::vector<Exec> children;
  unsigned idx = 0, count = 0;
  const std::uint8_t *pred = nullptr;
  poplar::Type predType;
};

struct HostIo {
  std::vector<std::pair<std::uint8_t *, std::size_t>> runs;
  std::size_t bytes = 0;
};

struct StreamCopy {
  std::string handle;
  HostIo io;
  bool toDevice;
};

// Host memory connected to a stream: a ring of whole transfers.
struct StreamBuffer {
  std::uint8_t *begin = nullptr, *end = nullptr, *next = nullptr;
};

struct Print {
  std::string title;
  poplar::Type type;
  std::vector<std::size_t> shape;
  HostIo io;
};

struct AlignedFree {
  void operator()(std::uint8_t *p) const { std::free(p); }
};

struct EngineImpl {
  std::unique_ptr<GraphState> owned;
  GraphState &s;
  Layout layout;
  // Every tile's memory, carved from one arena (tileArena): null for a tile with none.
  std::vector<std::uint8_t *> tileMem;
  std::unique_ptr<std::uint8_t, AlignedFree> tileArena;
  std::unique_ptr<std::uint8_t, AlignedFree> vertexArena;
  std::vector<std::pair<void *, const VertexType *>> objects;
  std::vector<CsPlan> cs;
  std::vector<CopyPlan> copies;
  std::vector<StreamCopy> streamCopies;
  std::vector<Print> prints;
  std::vector<Exec> progs;
  std::map<std::string, HostIo> writes, reads;
  std::map<std::string, StreamBuffer> streams;
  std::unique_ptr<Pool> poolPtr;
  std::unique_ptr<Recorder> recorder; // POPLAR_HOST_RECORD (record.hpp)

  Counters counters;
  bool loaded = false;

  explicit EngineImpl(std::unique_ptr<GraphState> state);
  ~EngineImpl();

  std::uint8_t *at(unsigned tile, std::size_t off) { return tileMem[tile] + off; }

  void allocate();
  void checkWrites() const;
  void bindVertices();
  HostIo hostIo(const poplar::Tensor &t);
  unsigned planCopy(const ProgNode &n);
  unsigned planStreamCopy(const ProgNode &n);
  unsigned planPrint(const ProgNode &n);
  Exec compile(const poplar::program::Program &p);
  void run(const Exec &e);
  void runCs(CsPlan &p);
  void runCopy(CopyPlan &p);
  void runStreamCopy(const StreamCopy &c);
  static void runPieces(const std::vector<Piece> &pieces);
};

// Writes "title: [e0 e1 ...]" (nested brackets for more dimensions) and a newline.
void printTensor(const Print &p, std::ostream &out);

} // namespace poplar_host
#endif
