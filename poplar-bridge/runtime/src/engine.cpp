// poplar::Engine on the host runtime. Construction enforces the IPU's rules and builds
// an execution plan: per compute set, each tile's vertex objects bound into that tile's
// memory and the copies for fields connected to data elsewhere; per Copy, a list of
// byte runs between tiles; per stream copy and print, the bytes they touch. run()
// walks the program tree.
#include "engine_impl.hpp"
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <exception>
#include <iostream>
#include <poplar/Engine.hpp>
#include <poplar/exceptions.hpp>

namespace poplar_host {

// A transparent huge page (Linux, x86-64 and arm64).
constexpr std::size_t kHugePage = std::size_t(2) << 20;

// Zeroed bytes aligned to `align` (a power of two, at least 64), rounded up to it; at
// a huge page's alignment backed by huge pages where the kernel gives them (madvised
// before the zeroing touches them).
static std::uint8_t *alignedAlloc(std::size_t bytes, std::size_t align = 64) {
  const std::size_t n = (std::max<std::size_t>(bytes, 1) + align - 1) & ~(align - 1);
  auto *p = static_cast<std::uint8_t *>(std::aligned_alloc(align, n));
  if (!p)
    throw poplar::poplar_error("host runtime: cannot allocate " + std::to_string(n) + " bytes");
#ifdef MADV_HUGEPAGE
  if (align >= kHugePage)
    madvise(p, n, MADV_HUGEPAGE);
#endif
  std::memset(p, 0, n);
  return p;
}

EngineImpl::EngineImpl(std::unique_ptr<GraphState> state)
    : owned(std::move(state)), s(*owned), layout(computeLayout(s, true)),
      poolPtr(std::make_unique<Pool>(Pool::threadsFromEnv())), recorder(Recorder::fromEnv()) {}

EngineImpl::~EngineImpl() {
  for (auto &o : objects)
    o.second->destroy(o.first);
}

void EngineImpl::allocate() {
  // One arena for all tiles, in 2 MiB-aligned huge pages where the kernel gives them:
  // a frame's march reads the camera regions of hundreds of injector tiles, and with
  // a 4 KiB page each of those reads missed the TLB as well as the caches.
  const std::size_t tiles = layout.tileTensorBytes.size();
  std::vector<std::size_t> offset(tiles);
  std::size_t total = 0;
  for (std::size_t t = 0; t < tiles; ++t) {
    offset[t] = total;
    if (!layout.tileTensorBytes[t])
      continue;
    // Tiles' memories staggered by a few cache lines: packed end to end, equal tiles'
    // tensors fell on the same cache sets, and a copy between them (runtime_bench's
    // staged rotation) ran at 3.9-4.8 GB/s instead of 5.2-6.5.
    total += ((layout.tileTensorBytes[t] + 63) & ~std::size_t(63)) + 64 * (1 + t % 31);
  }
  std::uint8_t *base = alignedAlloc(total, kHugePage);
  tileArena.reset(base);
  tileMem.assign(tiles, nullptr);
  for (std::size_t t = 0; t < tiles; ++t)
    if (layout.tileTensorBytes[t])
      tileMem[t] = base + offset[t];
  for (std::size_t vi = 0; vi < s.vars.size(); ++vi) {
    const Var &v = s.vars[vi];
    if (v.init.empty())
      continue;
    const unsigned es = v.type.size();
    for (const Placement &p : layout.vars[vi])
      std::memcpy(at(p.tile, p.offset), &v.init[p.begin * es], (p.end - p.begin) * es);
  }
  // The initial values now live in the tiles' memory, and nothing reads the graph's
  // copies again (the host runtime never serialises an executable): freed, they no
  // longer double the host's peak (a 4.2 M-cell scene's shards are 600 MB of them).
  for (Var &v : s.vars)
    std::vector<std::uint8_t>().swap(v.init);
}

// Poplar runs the vertices of a compute set in parallel, so no vertex may write memory
// another vertex of the set writes or reads. Checked on the elements of the graph's
// variables each field writes or reads.
void EngineImpl::checkWrites() const {
  struct Access {
    std::uint32_t var;
    std::size_t begin, end;
    unsigned vertex;
    const std::string *field;
    bool writes;
  };
  std::vector<std::vector<Access>> byCs(s.computeSets.size());
  for (unsigned id = 0; id < s.vertices.size(); ++id) {
    const VertexInfo &v = s.vertices[id];
    for (const auto &c : v.conns) {
      const FieldDesc *f = v.type->field(c.first);
      if (!c.second.isTensor || !f || f->dir == FieldDir::None)
        continue;
      for (const Segment &sg : c.second.tensor.hostData().segs)
        byCs[v.cs].push_back({sg.var, sg.begin, sg.end, id, &c.first, f->dir != FieldDir::In});
    }
  }
  for (std::size_t cs = 0; cs < byCs.size(); ++cs) {
    auto &w = byCs[cs];
    std::sort(w.begin(), w.end(), [](const Access &a, const Access &b) { return std::tie(a.var, a.begin) < std::tie(b.var, b.begin); });
    for (std::size_t k = 0; k < w.size(); ++k)
      for (std::size_t j = k + 1; j < w.size() && w[j].var == w[k].var && w[j].begin < w[k].end; ++j) {
        const Access &a = w[k], &b = w[j];
        if (a.vertex == b.vertex || (!a.writes && !b.writes))
          continue;
        const std::string range = "elements [" + std::to_string(b.begin) + ", " + std::to_string(std::min(a.end, b.end)) +
                                  ") of tensor '" + s.vars[a.var].name + "'";
        const std::string what = a.writes && b.writes
                                     ? "' both write " + range
                                     : "': one writes " + range + " that the other reads";
        throw poplar::graph_connection_error(
            "compute set '" + s.computeSets[cs].name + "': vertex " + s.vertexName(a.vertex) + " field '" + *a.field +
            "' and vertex " + s.vertexName(b.vertex) + " field '" + *b.field + what +
            "; vertices of one compute set run in parallel and must not touch what another writes");
      }
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
    CsPlan &p = cs[v.cs];
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
        if (recorder)
          recorder->bind(id, {&f, nullptr, 1, f.type.size(), std::vector<std::uint8_t>(buf, buf + f.type.size())});
        continue;
      }
      auto imp = layout.implicitOf.find({id, f.name});
      if (imp != layout.implicitOf.end()) {
        const ImplicitField &x = layout.implicit[imp->second];
        std::uint8_t *buf = at(x.tile, x.offset);
        std::size_t pos = 0;
        for (const Run &r : x.data) {
          if (f.dir == FieldDir::In || f.dir == FieldDir::InOut)
            p.copyIn.push_back({at(r.tile, r.off), buf + pos, r.len, 0});
          if (f.dir == FieldDir::Out || f.dir == FieldDir::InOut)
            p.copyOut.push_back({buf + pos, at(r.tile, r.off), r.len, 0});
          p.implicitBytes += r.len * (f.dir == FieldDir::InOut ? 2 : 1);
          pos += r.len;
        }
        f.bind(obj, buf, c.tensor.numElements());
        if (recorder)
          recorder->bind(id, {&f, buf, c.tensor.numElements(), c.tensor.numElements() * f.type.size(), {}});
        continue;
      }
      std::size_t off = 0;
      resolveView(layout, c.tensor.hostData(), [&](unsigned, std::size_t o, std::size_t) { off = o; });
      f.bind(obj, tileMem[tile] ? at(tile, off) : nullptr, c.tensor.numElements());
      if (recorder)
        recorder->bind(id, {&f, tileMem[tile] ? at(tile, off) : nullptr, c.tensor.numElements(),
                            c.tensor.numElements() * f.type.size(), {}});
    }
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
  std::vector<Run> src, dst;
  resolveView(layout, n.a.hostData(), [&](unsigned t, std::size_t o, std::size_t l) { src.push_back({t, o, l}); });
  resolveView(layout, n.b.hostData(), [&](unsigned t, std::size_t o, std::size_t l) { dst.push_back({t, o, l}); });

  CopyPlan p;
  const unsigned tilesPerIPU = s.target.getTilesPerIPU();
  constexpr std::size_t kMaxPiece = 256 * 1024; // so big runs spread over threads
  std::size_t si = 0, di = 0, so = 0, dof = 0, total = 0;
  while (si < src.size() && di < dst.size()) {
    const Run &a = src[si], &b = dst[di];
    const std::size_t len = std::min({a.len - so, b.len - dof, kMaxPiece});
    const std::uint8_t *sp = at(a.tile, a.off + so);
    std::uint8_t *dp = at(b.tile, b.off + dof);
    (a.tile == b.tile ? p.onTile : p.cross) += len;
    if (a.tile / tilesPerIPU != b.tile / tilesPerIPU)
      p.crossIpu += len;
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

unsigned EngineImpl::planStreamCopy(const ProgNode &n) {
  const bool toDevice = n.b.valid();
  const poplar::Tensor &t = toDevice ? n.b : n.a;
  s.checkTensor(t, toDevice ? "Copy from a stream" : "Copy to a stream");
  const poplar::DataStream &d = n.stream;
  auto it = s.streams.find(d.handle());
  if (!s.owns(d.hostGraph()) || it == s.streams.end())
    throw poplar::invalid_program("Copy: stream '" + d.handle() + "' does not belong to this graph");
  const bool fifoToDevice = d.type() == poplar::DataStreamType::HostToDeviceFIFO;
  const std::string what = "Copy " + std::string(toDevice ? "from" : "to") + " stream '" + d.handle() + "' " +
                           (toDevice ? "to" : "from") + " '" + t.getDebugStr() + "'";
  if (toDevice != fifoToDevice)
    throw poplar::invalid_program(what + ": the stream goes " + (fifoToDevice ? "to" : "from") + " the device");
  if (t.elementType() != d.elementType() || t.numElements() != d.numElements())
    throw poplar::invalid_program(what + ": the stream carries " + std::to_string(d.numElements()) + " " +
                                  d.elementType().toString() + " but the tensor has " +
                                  std::to_string(t.numElements()) + " " + t.elementType().toString());
  streamCopies.push_back({d.handle(), hostIo(t), toDevice});
  return static_cast<unsigned>(streamCopies.size() - 1);
}

unsigned EngineImpl::planPrint(const ProgNode &n) {
  s.checkTensor(n.a, "PrintTensor");
  prints.push_back({n.name, n.a.elementType(), n.a.shape(), hostIo(n.a)});
  return static_cast<unsigned>(prints.size() - 1);
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
  case ProgKind::Copy: e.idx = planCopy(*n); break;
  case ProgKind::StreamCopy: e.idx = planStreamCopy(*n); break;
  case ProgKind::PrintTensor: e.idx = planPrint(*n); break;
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

void EngineImpl::runPieces(const std::vector<Piece> &pieces) {
  for (const Piece &p : pieces)
    std::memcpy(p.dst, p.src, p.len);
}

void EngineImpl::runCs(CsPlan &p) {
  ++counters.computeSteps;
  ++p.executions;
  counters.vertexRuns += p.runs.size();
  counters.estimatedCycles += p.perfMax;
  counters.implicitExchangeBytes += p.implicitBytes;
  runPieces(p.copyIn);
  const bool record = recorder && recorder->wants(p);
  if (record)
    recorder->before(s, p);
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
  if (record)
    recorder->after(s, p);
  runPieces(p.copyOut);
}

void EngineImpl::runCopy(CopyPlan &p) {
  ++counters.copies;
  counters.bytesExchanged += p.cross;
  counters.bytesAcrossIPUs += p.crossIpu;
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

void EngineImpl::runStreamCopy(const StreamCopy &c) {
  auto it = streams.find(c.handle);
  if (it == streams.end())
    throw poplar::stream_connection_error("stream '" + c.handle +
                                          "' is not connected to host memory (Engine::connectStream)");
  StreamBuffer &b = it->second;
  std::uint8_t *p = b.next;
  for (const auto &r : c.io.runs) {
    if (c.toDevice)
      std::memcpy(r.first, p, r.second);
    else
      std::memcpy(p, r.first, r.second);
    p += r.second;
  }
  // The host buffer is a ring of whole transfers.
  b.next = p == b.end ? b.begin : p;
  counters.streamBytes += c.io.bytes;
}

void EngineImpl::run(const Exec &e) {
  switch (e.kind) {
  case ProgKind::Sequence:
    for (const auto &c : e.children)
      run(c);
    break;
  case ProgKind::Execute: runCs(cs[e.idx]); break;
  case ProgKind::Copy: runCopy(copies[e.idx]); break;
  case ProgKind::StreamCopy: runStreamCopy(streamCopies[e.idx]); break;
  case ProgKind::PrintTensor: printTensor(prints[e.idx], std::cout); break;
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
void resetCounters(poplar::Engine &e) {
  auto &impl = e.hostImpl();
  impl.counters = Counters{};
  for (auto &c : impl.cs)
    c.executions = 0;
}
std::vector<ComputeSetReport> computeSetReport(const poplar::Engine &e) {
  std::vector<ComputeSetReport> r;
  for (const CsPlan &p : e.hostImpl().cs)
    r.push_back({p.name, p.runs.size(), p.tiles.size(), p.executions, p.perfMax, p.implicitBytes});
  return r;
}
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

static std::unique_ptr<EngineImpl> build(std::unique_ptr<GraphState> state, ArrayRef<program::Program> progs) {
  auto impl = std::make_unique<EngineImpl>(std::move(state));
  checkBudget(impl->layout.report);
  impl->checkWrites();
  impl->allocate();
  impl->bindVertices();
  for (const auto &p : progs)
    impl->progs.push_back(impl->compile(p));
  for (const auto &kv : impl->s.hostWrites)
    impl->writes[kv.first] = impl->hostIo(kv.second);
  for (const auto &kv : impl->s.hostReads)
    impl->reads[kv.first] = impl->hostIo(kv.second);
  return impl;
}

// The engine keeps the graph it runs: a moved graph's own state, or a copy of a const
// one that still recognises the original's tensors and streams.
static std::unique_ptr<GraphState> copyOf(const Graph &g) {
  auto s = std::make_unique<GraphState>(g.hostState());
  s->origin = &g.hostState();
  return s;
}

Engine::Engine(Graph &&graph, ArrayRef<program::Program> progs, const OptionFlags &)
    : impl_(build(std::move(graph.hostStatePtr()), progs)) {}
Engine::Engine(Graph &&graph, const program::Program &prog, const OptionFlags &opts)
    : Engine(std::move(graph), ArrayRef<program::Program>(prog), opts) {}
Engine::Engine(const Graph &graph, ArrayRef<program::Program> progs, const OptionFlags &)
    : impl_(build(copyOf(graph), progs)) {}
Engine::Engine(const Graph &graph, const program::Program &prog, const OptionFlags &opts)
    : Engine(graph, ArrayRef<program::Program>(prog), opts) {}
Engine::Engine(Engine &&) noexcept = default;
Engine &Engine::operator=(Engine &&) noexcept = default;
Engine::~Engine() = default;

void Engine::load(const Device &device) {
  const Target &d = device.getTarget(), &g = impl_->s.target;
  auto describe = [](const Target &t) {
    const char *type = t.getTargetType() == TargetType::IPU         ? "IPU"
                       : t.getTargetType() == TargetType::IPU_MODEL ? "IPU_MODEL"
                                                                    : "CPU";
    return std::string(type) + " " + t.getTargetArchString() + " target of " + std::to_string(t.getNumIPUs()) +
           " IPU(s) x " + std::to_string(t.getTilesPerIPU()) + " tiles x " + std::to_string(t.getBytesPerTile()) +
           " bytes";
  };
  if (d.getTargetType() != g.getTargetType() || d.getTargetArchString() != g.getTargetArchString() ||
      d.getNumIPUs() != g.getNumIPUs() || d.getTilesPerIPU() != g.getTilesPerIPU() ||
      d.getBytesPerTile() != g.getBytesPerTile())
    throw poplar_error("Engine::load: the graph was compiled for an " + describe(g) + " but the device is an " +
                       describe(d) + "; build the graph for the device's target (Graph(device.getTarget()))");
  if (d.getTargetType() == TargetType::IPU && !device.isAttached())
    throw poplar_error("Engine::load: the IPU device " + std::to_string(device.getId()) +
                       " is not attached (Device::attach)");
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

void Engine::connectStream(StringRef handle, void *begin, void *end) {
  auto it = impl_->s.streams.find(handle.str());
  if (it == impl_->s.streams.end())
    throw stream_connection_error("connectStream: unknown stream '" + handle.str() + "'");
  const DataStream &d = it->second;
  const std::size_t transfer = d.numElements() * d.elementType().size();
  const auto *b = static_cast<std::uint8_t *>(begin), *e = static_cast<std::uint8_t *>(end);
  const std::size_t n = e >= b ? static_cast<std::size_t>(e - b) : 0;
  if (!begin || n == 0 || transfer == 0 || n % transfer)
    throw stream_connection_error("connectStream('" + handle.str() + "'): a buffer of " + std::to_string(n) +
                                  " bytes for a stream of " + std::to_string(transfer) +
                                  " bytes per transfer; it must hold a whole number of transfers");
  auto *p = static_cast<std::uint8_t *>(begin);
  impl_->streams[handle.str()] = StreamBuffer{p, p + n, p};
}

void Engine::connectStream(StringRef handle, void *p) {
  auto it = impl_->s.streams.find(handle.str());
  if (it == impl_->s.streams.end())
    throw stream_connection_error("connectStream: unknown stream '" + handle.str() + "'");
  const std::size_t transfer = it->second.numElements() * it->second.elementType().size();
  connectStream(handle, p, static_cast<std::uint8_t *>(p) + transfer);
}

} // namespace poplar
