// poplar::Engine on the host runtime. Construction enforces the IPU's rules and builds
// an execution plan: per compute set, each tile's vertex objects bound into that tile's
// memory; per Copy, a list of byte runs between tiles. run() walks the program tree.
#include "layout.hpp"
#include "pool.hpp"
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <poplar/Engine.hpp>
#include <poplar/exceptions.hpp>

namespace poplar_host {

struct VRun {
  void *obj;
  bool (*run)(void *);
  bool (*runWorker)(void *, unsigned);
  unsigned vertex;
};

struct Job {
  unsigned group;  // tile group
  int worker;      // -1: the group's vertices in order; else one worker of its lone MultiVertex
};

struct CsPlan {
  std::string name;
  std::vector<VRun> runs;                 // grouped by tile, in vertex order within a tile
  std::vector<std::size_t> tileStart;     // tile group k is runs[tileStart[k], tileStart[k+1])
  std::vector<unsigned> tiles;
  // What the pool runs. A tile whose only vertex in the set is a MultiVertex runs as
  // six jobs, one per worker, as its workers run concurrently on hardware; so one busy
  // tile does not hold a host thread while the others idle. Jobs are ordered worker
  // by worker so that a tile's workers land far apart in the pool's queue.
  std::vector<Job> jobs;
  std::uint64_t perfMax = 0;
};

struct Piece {
  const std::uint8_t *src;
  std::uint8_t *dst;
  std::size_t len, stageOff;
};

struct CopyPlan {
  std::vector<Piece> pieces;
  std::vector<std::size_t> chunkStart; // chunk k is pieces[chunkStart[k], chunkStart[k+1])
  bool staged = false;                 // some source bytes are also destination bytes
  std::vector<std::uint8_t> stage;
  std::uint64_t cross = 0, onTile = 0;
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

struct AlignedFree {
  void operator()(std::uint8_t *p) const { std::free(p); }
};

struct EngineImpl {
  poplar::Graph graph;
  GraphState &s;
  Layout layout;
  std::vector<std::unique_ptr<std::uint8_t, AlignedFree>> tileMem;
  std::unique_ptr<std::uint8_t, AlignedFree> vertexArena;
  std::vector<std::pair<void *, const VertexType *>> objects;
  std::vector<CsPlan> cs;
  std::vector<CopyPlan> copies;
  std::vector<Exec> progs;
  std::map<std::string, HostIo> writes, reads;
  std::unique_ptr<Pool> poolPtr;

  Counters counters;
  bool loaded = false;

  explicit EngineImpl(poplar::Graph &&g)
      : graph(std::move(g)), s(graph.hostState()), layout(computeLayout(s, true)),
        poolPtr(std::make_unique<Pool>(Pool::threadsFromEnv())) {}
  ~EngineImpl() {
    for (auto &o : objects)
      o.second->destroy(o.first);
  }

  std::uint8_t *at(unsigned tile, std::size_t off) { return tileMem[tile].get() + off; }

  void allocate();
  void bindVertices();
  HostIo hostIo(const poplar::Tensor &t);
  unsigned planCopy(const ProgNode &n);
  Exec compile(const poplar::program::Program &p);
  void run(const Exec &e);
  void runCs(const CsPlan &p);
  void runCopy(CopyPlan &p);
};

static std::uint8_t *alignedAlloc(std::size_t bytes) {
  const std::size_t n = (std::max<std::size_t>(bytes, 1) + 63) & ~std::size_t(63);
  auto *p = static_cast<std::uint8_t *>(std::aligned_alloc(64, n));
  if (!p)
    throw poplar::poplar_error("host runtime: cannot allocate " + std::to_string(n) + " bytes");
  std::memset(p, 0, n);
  return p;
}

void EngineImpl::allocate() {
  tileMem.resize(layout.tileTensorBytes.size());
  for (std::size_t t = 0; t < tileMem.size(); ++t)
    if (layout.tileTensorBytes[t])
      tileMem[t].reset(alignedAlloc(layout.tileTensorBytes[t]));
  for (std::size_t vi = 0; vi < s.vars.size(); ++vi) {
    const Var &v = s.vars[vi];
    if (v.init.empty())
      continue;
    const unsigned es = v.type.size();
    for (const Placement &p : layout.vars[vi])
      std::memcpy(at(p.tile, p.offset), &v.init[p.begin * es], (p.end - p.begin) * es);
  }
}

void EngineImpl::bindVertices() {
  // Order vertices by (compute set, tile, id): each compute set's tiles run in parallel,
  // a tile's vertices in the order they were added.
  std::vector<unsigned> order(s.vertices.size());
  for (unsigned i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    const auto &x = s.vertices[a], &y = s.vertices[b];
    return std::tie(x.cs, x.tile, a) < std::tie(y.cs, y.tile, b);
  });
  std::size_t arenaBytes = 0;
  std::vector<std::size_t> offs(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const VertexType *t = s.vertices[order[k]].type;
    arenaBytes = (arenaBytes + 63) & ~std::size_t(63); // alignment >= any codelet's, no false sharing
    offs[k] = arenaBytes;
    arenaBytes += t->size;
  }
  vertexArena.reset(alignedAlloc(arenaBytes));

  cs.resize(s.computeSets.size());
  for (std::size_t c = 0; c < cs.size(); ++c)
    cs[c].name = s.computeSets[c].name;
  objects.reserve(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const unsigned id = order[k];
    const VertexInfo &v = s.vertices[id];
    const VertexType &vt = *v.type;
    void *obj = vertexArena.get() + offs[k];
    vt.construct(obj);
    objects.push_back({obj, &vt});
    const unsigned tile = static_cast<unsigned>(v.tile);
    for (const auto &c : v.conns)
      if (!vt.field(c.first))
        throw poplar::unknown_field("vertex " + s.vertexName(id) + " has no field '" + c.first + "'");
    for (const FieldDesc &f : vt.fields) {
      const std::string who = "vertex " + s.vertexName(id) + " on tile " + std::to_string(tile) + ": field '" + f.name + "'";
      auto it = v.conns.find(f.name);
      if (it == v.conns.end())
        throw poplar::graph_connection_error(who + (f.kind == FieldKind::Value ? " has no value (setInitialValue)"
                                                                               : " is not connected to a tensor"));
      const Conn &c = it->second;
      if (!c.isTensor) {
        std::uint8_t buf[8] = {};
        c.value.store(f.type, buf);
        f.bind(obj, buf, 1);
        continue;
      }
      struct Run {
        unsigned tile;
        std::size_t off, len;
      };
      std::vector<Run> runs;
      resolveView(layout, c.tensor.hostData(), [&](unsigned t, std::size_t o, std::size_t l) { runs.push_back({t, o, l}); });
      const std::string tname = "tensor '" + c.tensor.getDebugStr() + "'";
      for (const Run &r : runs)
        if (r.tile != tile)
          throw poplar::graph_connection_error(who + " is connected to " + tname + " which has elements on tile " +
                                               std::to_string(r.tile) +
                                               "; a vertex can only access memory on its own tile");
      if (runs.size() > 1)
        throw poplar::graph_connection_error(who + " is connected to " + tname +
                                             " which is not contiguous in tile memory (" + std::to_string(runs.size()) +
                                             " regions); a vector field needs one contiguous region");
      const std::size_t off = runs.empty() ? 0 : runs[0].off;
      if (off % f.align)
        throw poplar::graph_connection_error(who + " needs " + std::to_string(f.align) + "-byte alignment but " +
                                             tname + " starts at tile offset " + std::to_string(off));
      f.bind(obj, tileMem[tile] ? at(tile, off) : nullptr, c.tensor.numElements());
    }
    CsPlan &p = cs[v.cs];
    if (p.tiles.empty() || p.tiles.back() != tile) {
      p.tiles.push_back(tile);
      p.tileStart.push_back(p.runs.size());
    }
    p.runs.push_back({obj, vt.run, vt.runWorker, id});
  }
  for (std::size_t c = 0; c < cs.size(); ++c) {
    CsPlan &p = cs[c];
    p.tileStart.push_back(p.runs.size());
    const unsigned workers = poplar::MultiVertex::numWorkers();
    auto split = [&](std::size_t k) {
      return p.tileStart[k + 1] - p.tileStart[k] == 1 && s.vertices[p.runs[p.tileStart[k]].vertex].type->multi;
    };
    for (std::size_t k = 0; k + 1 < p.tileStart.size(); ++k)
      p.jobs.push_back({static_cast<unsigned>(k), split(k) ? 0 : -1});
    for (unsigned w = 1; w < workers; ++w)
      for (std::size_t k = 0; k + 1 < p.tileStart.size(); ++k)
        if (split(k))
          p.jobs.push_back({static_cast<unsigned>(k), static_cast<int>(w)});
    for (std::size_t k = 0; k + 1 < p.tileStart.size(); ++k) {
      std::uint64_t sum = 0;
      for (std::size_t r = p.tileStart[k]; r < p.tileStart[k + 1]; ++r)
        sum += s.vertices[p.runs[r].vertex].perfCycles;
      p.perfMax = std::max(p.perfMax, sum);
    }
  }
}

HostIo EngineImpl::hostIo(const poplar::Tensor &t) {
  HostIo io;
  resolveView(layout, t.hostData(), [&](unsigned tile, std::size_t o, std::size_t l) {
    io.runs.push_back({at(tile, o), l});
    io.bytes += l;
  });
  return io;
}

unsigned EngineImpl::planCopy(const ProgNode &n) {
  s.checkTensor(n.a, "Copy source");
  s.checkTensor(n.b, "Copy destination");
  const std::string what = "Copy" + (n.name.empty() ? std::string() : " '" + n.name + "'") + " from '" +
                           n.a.getDebugStr() + "' to '" + n.b.getDebugStr() + "'";
  if (n.a.elementType() != n.b.elementType())
    throw poplar::invalid_program(what + ": element types differ (" + n.a.elementType().toString() + " vs " +
                                  n.b.elementType().toString() + ")");
  if (n.a.numElements() != n.b.numElements())
    throw poplar::invalid_program(what + ": sizes differ (" + std::to_string(n.a.numElements()) + " vs " +
                                  std::to_string(n.b.numElements()) + " elements)");
  struct Run {
    unsigned tile;
    std::size_t off, len;
  };
  std::vector<Run> src, dst;
  resolveView(layout, n.a.hostData(), [&](unsigned t, std::size_t o, std::size_t l) { src.push_back({t, o, l}); });
  resolveView(layout, n.b.hostData(), [&](unsigned t, std::size_t o, std::size_t l) { dst.push_back({t, o, l}); });

  CopyPlan p;
  constexpr std::size_t kMaxPiece = 256 * 1024; // so big runs spread over threads
  std::size_t si = 0, di = 0, so = 0, dof = 0, total = 0;
  while (si < src.size() && di < dst.size()) {
    const Run &a = src[si], &b = dst[di];
    const std::size_t len = std::min({a.len - so, b.len - dof, kMaxPiece});
    const std::uint8_t *sp = at(a.tile, a.off + so);
    std::uint8_t *dp = at(b.tile, b.off + dof);
    (a.tile == b.tile ? p.onTile : p.cross) += len;
    if (!p.pieces.empty() && p.pieces.back().src + p.pieces.back().len == sp &&
        p.pieces.back().dst + p.pieces.back().len == dp && p.pieces.back().len + len <= kMaxPiece)
      p.pieces.back().len += len;
    else
      p.pieces.push_back({sp, dp, len, total});
    total += len;
    so += len;
    dof += len;
    if (so == a.len)
      ++si, so = 0;
    if (dof == b.len)
      ++di, dof = 0;
  }

  auto byAddr = [](const Run &x, const Run &y) { return std::tie(x.tile, x.off) < std::tie(y.tile, y.off); };
  std::sort(dst.begin(), dst.end(), byAddr);
  for (std::size_t k = 1; k < dst.size(); ++k)
    if (dst[k].tile == dst[k - 1].tile && dst[k - 1].off + dst[k - 1].len > dst[k].off)
      throw poplar::invalid_program(what + ": destination bytes on tile " + std::to_string(dst[k].tile) + " at offset " +
                                    std::to_string(dst[k].off) + " are written more than once");
  std::sort(src.begin(), src.end(), byAddr);
  for (std::size_t a = 0, b = 0; a < src.size() && b < dst.size() && !p.staged;) {
    const Run &x = src[a], &y = dst[b];
    if (x.tile == y.tile && x.off < y.off + y.len && y.off < x.off + x.len)
      p.staged = true;
    else if (byAddr(x, y) || (x.tile == y.tile && x.off == y.off))
      ++a;
    else
      ++b;
  }
  if (p.staged)
    p.stage.resize(total);

  const std::size_t target = std::max<std::size_t>(64 * 1024, total / (std::size_t(poolPtr->size()) * 4) + 1);
  std::size_t acc = 0;
  p.chunkStart.push_back(0);
  for (std::size_t k = 0; k < p.pieces.size(); ++k) {
    acc += p.pieces[k].len;
    if (acc >= target && k + 1 < p.pieces.size()) {
      p.chunkStart.push_back(k + 1);
      acc = 0;
    }
  }
  p.chunkStart.push_back(p.pieces.size());
  copies.push_back(std::move(p));
  return static_cast<unsigned>(copies.size() - 1);
}

Exec EngineImpl::compile(const poplar::program::Program &prog) {
  Exec e;
  const auto &n = prog.hostNode();
  if (!n) {
    e.kind = ProgKind::Sequence;
    return e;
  }
  e.kind = n->kind;
  switch (n->kind) {
  case ProgKind::Sequence:
  case ProgKind::Repeat:
    for (const auto &c : n->children)
      e.children.push_back(compile(c));
    e.count = n->count;
    break;
  case ProgKind::Execute:
    if (n->cs >= cs.size())
      throw poplar::invalid_program("Execute: compute set does not belong to this graph");
    e.idx = n->cs;
    break;
  case ProgKind::Copy:
    e.idx = planCopy(*n);
    break;
  case ProgKind::RepeatWhileTrue: {
    for (const auto &c : n->children)
      e.children.push_back(compile(c));
    s.checkTensor(n->a, "RepeatWhileTrue predicate");
    const auto k = n->a.elementType().kind();
    if (n->a.numElements() != 1 || k == TypeKind::Half || k == TypeKind::Float)
      throw poplar::invalid_program("RepeatWhileTrue: predicate '" + n->a.getDebugStr() +
                                    "' must be one element of a bool or integer type");
    HostIo io = hostIo(n->a);
    e.pred = io.runs.at(0).first;
    e.predType = n->a.elementType();
    break;
  }
  case ProgKind::Sync:
    break;
  }
  return e;
}

void EngineImpl::runCs(const CsPlan &p) {
  ++counters.computeSteps;
  counters.vertexRuns += p.runs.size();
  counters.estimatedCycles += p.perfMax;
  std::mutex m;
  std::size_t badTile = SIZE_MAX;
  std::string err;
  auto fail = [&](std::size_t k, const std::string &msg) {
    std::lock_guard<std::mutex> g(m);
    if (k < badTile) { // report the lowest tile: the same error whatever the thread count
      badTile = k;
      err = msg;
    }
  };
  auto job = [&](std::size_t j) {
    const std::size_t k = p.jobs[j].group;
    const int w = p.jobs[j].worker;
    const VRun *r = p.runs.data() + p.tileStart[k], *end = p.runs.data() + p.tileStart[k + 1];
    try {
      for (; r != end; ++r)
        if (!(w < 0 ? r->run(r->obj) : r->runWorker(r->obj, static_cast<unsigned>(w)))) {
          fail(k, "vertex " + s.vertexName(r->vertex) + " on tile " + std::to_string(p.tiles[k]) +
                      " returned false from compute()");
          return;
        }
    } catch (const std::exception &ex) {
      fail(k, "vertex " + s.vertexName(r->vertex) + " on tile " + std::to_string(p.tiles[k]) + " threw: " + ex.what());
    }
  };
  poolPtr->run(p.jobs.size(), job);
  if (badTile != SIZE_MAX)
    throw poplar::runtime_error(err);
}

void EngineImpl::runCopy(CopyPlan &p) {
  ++counters.copies;
  counters.bytesExchanged += p.cross;
  counters.bytesCopiedOnTile += p.onTile;
  const std::size_t chunks = p.chunkStart.size() - 1;
  if (!p.staged) {
    auto job = [&](std::size_t c) {
      for (std::size_t k = p.chunkStart[c]; k < p.chunkStart[c + 1]; ++k)
        std::memcpy(p.pieces[k].dst, p.pieces[k].src, p.pieces[k].len);
    };
    poolPtr->run(chunks, job);
    return;
  }
  // Read every source before writing any destination, as one exchange does.
  std::uint8_t *stage = p.stage.data();
  auto gather = [&](std::size_t c) {
    for (std::size_t k = p.chunkStart[c]; k < p.chunkStart[c + 1]; ++k)
      std::memcpy(stage + p.pieces[k].stageOff, p.pieces[k].src, p.pieces[k].len);
  };
  auto scatter = [&](std::size_t c) {
    for (std::size_t k = p.chunkStart[c]; k < p.chunkStart[c + 1]; ++k)
      std::memcpy(p.pieces[k].dst, stage + p.pieces[k].stageOff, p.pieces[k].len);
  };
  poolPtr->run(chunks, gather);
  poolPtr->run(chunks, scatter);
}

void EngineImpl::run(const Exec &e) {
  switch (e.kind) {
  case ProgKind::Sequence:
    for (const auto &c : e.children)
      run(c);
    break;
  case ProgKind::Execute: runCs(cs[e.idx]); break;
  case ProgKind::Copy: runCopy(copies[e.idx]); break;
  case ProgKind::Repeat:
    for (unsigned i = 0; i < e.count; ++i)
      for (const auto &c : e.children)
        run(c);
    break;
  case ProgKind::RepeatWhileTrue: {
    auto truth = [&] {
      for (unsigned b = 0; b < e.predType.size(); ++b)
        if (e.pred[b])
          return true;
      return false;
    };
    for (run(e.children[0]); truth(); run(e.children[0]))
      run(e.children[1]);
    break;
  }
  case ProgKind::Sync: break;
  }
}

Counters counters(const poplar::Engine &e) { return e.hostImpl().counters; }
void resetCounters(poplar::Engine &e) { e.hostImpl().counters = Counters{}; }
MemoryReport memoryReport(const poplar::Engine &e) { return e.hostImpl().layout.report; }
void setThreads(poplar::Engine &e, unsigned threads) {
  if (threads == 0)
    throw poplar::poplar_error("setThreads: need at least one thread");
  auto &impl = e.hostImpl();
  impl.poolPtr = std::make_unique<Pool>(threads);
}

} // namespace poplar_host

namespace poplar {
using namespace poplar_host;

Engine::Engine(Graph &&graph, ArrayRef<program::Program> progs, const OptionFlags &) {
  auto impl = std::make_unique<EngineImpl>(std::move(graph));
  checkBudget(impl->layout.report);
  impl->allocate();
  impl->bindVertices();
  for (const auto &p : progs)
    impl->progs.push_back(impl->compile(p));
  for (const auto &kv : impl->s.hostWrites)
    impl->writes[kv.first] = impl->hostIo(kv.second);
  for (const auto &kv : impl->s.hostReads)
    impl->reads[kv.first] = impl->hostIo(kv.second);
  impl_ = std::move(impl);
}
Engine::Engine(Graph &&graph, const program::Program &prog, const OptionFlags &opts)
    : Engine(std::move(graph), ArrayRef<program::Program>(prog), opts) {}
Engine::Engine(Engine &&) noexcept = default;
Engine &Engine::operator=(Engine &&) noexcept = default;
Engine::~Engine() = default;

void Engine::load(const Device &device) {
  const Target &a = device.getTarget(), &b = impl_->s.target;
  if (a.getNumTiles() != b.getNumTiles() || a.getBytesPerTile() != b.getBytesPerTile())
    throw poplar_error("Engine::load: the graph was built for " + std::to_string(b.getNumTiles()) +
                       " tiles of " + std::to_string(b.getBytesPerTile()) + " bytes but the device has " +
                       std::to_string(a.getNumTiles()) + " tiles of " + std::to_string(a.getBytesPerTile()));
  impl_->loaded = true;
}

void Engine::run(unsigned prog, const std::string &) {
  if (!impl_->loaded)
    throw poplar_error("Engine::run: no device loaded (call Engine::load first)");
  if (prog >= impl_->progs.size())
    throw poplar_error("Engine::run(" + std::to_string(prog) + "): the engine has " +
                       std::to_string(impl_->progs.size()) + " programs");
  ++impl_->counters.hostCalls;
  impl_->run(impl_->progs[prog]);
}

static HostIo &handleIo(std::map<std::string, HostIo> &m, StringRef handle, const char *what, const void *b,
                        const void *e, bool loaded) {
  if (!loaded)
    throw poplar_error(std::string(what) + "('" + handle.str() + "'): no device loaded (call Engine::load first)");
  auto it = m.find(handle.str());
  if (it == m.end())
    throw poplar_error(std::string(what) + ": unknown handle '" + handle.str() + "'");
  const std::size_t n = static_cast<const char *>(e) - static_cast<const char *>(b);
  if (n != it->second.bytes)
    throw poplar_error(std::string(what) + "('" + handle.str() + "'): buffer is " + std::to_string(n) +
                       " bytes but the tensor has " + std::to_string(it->second.bytes));
  return it->second;
}

void Engine::writeTensor(StringRef handle, const void *buf, const void *bufEnd) {
  HostIo &io = handleIo(impl_->writes, handle, "writeTensor", buf, bufEnd, impl_->loaded);
  ++impl_->counters.hostCalls;
  const auto *p = static_cast<const std::uint8_t *>(buf);
  for (const auto &r : io.runs) {
    std::memcpy(r.first, p, r.second);
    p += r.second;
  }
}

void Engine::readTensor(StringRef handle, void *buf, void *bufEnd) {
  HostIo &io = handleIo(impl_->reads, handle, "readTensor", buf, bufEnd, impl_->loaded);
  ++impl_->counters.hostCalls;
  auto *p = static_cast<std::uint8_t *>(buf);
  for (const auto &r : io.runs) {
    std::memcpy(p, r.first, r.second);
    p += r.second;
  }
}

} // namespace poplar
