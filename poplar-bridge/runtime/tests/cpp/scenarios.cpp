// C++ graph code against the Poplar API, run on the host runtime by tests/runtime.rs.
// Each scenario returns a summary the Rust test checks, or throws (the error under test).
#include "poplar-bridge/runtime/tests/cpp/scenarios.h"
#include "poplar-bridge/runtime/tests/cpp/programs.h"
#include "foam/divide.h"
#include "foam/half.h"
#include "foam/march.h"
#include "foam/ray.h"
#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/HalfFloat.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Program.hpp>
#include <poplar_host/Report.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace foam_selftest {
namespace {

unsigned gThreads = 0;

Device device(unsigned tiles) {
  IPUModel model("ipu2");
  model.tilesPerIPU = tiles;
  Device d = model.createDevice();
  d.attach();
  return d;
}

// A graph for the device the scenario loads it on (Engine::load refuses another).
Graph graph(unsigned tiles) {
  Graph g(device(tiles));
  g.addCodelets("runtime_test_codelets.cpp");
  return g;
}

Engine load(Graph &&g, std::vector<Program> progs, unsigned tiles) {
  Engine e(std::move(g), progs);
  if (gThreads)
    poplar_host::setThreads(e, gThreads);
  e.load(device(tiles));
  return e;
}

template <typename T> std::string join(const std::vector<T> &v) {
  std::ostringstream o;
  for (std::size_t i = 0; i < v.size(); ++i)
    o << (i ? "," : "") << v[i];
  return o.str();
}

std::string counters(const Engine &e) {
  const auto c = poplar_host::counters(e);
  std::ostringstream o;
  o << "steps=" << c.computeSteps << ";vertex_runs=" << c.vertexRuns << ";copies=" << c.copies
    << ";exchanged=" << c.bytesExchanged << ";host_calls=" << c.hostCalls << ";cycles=" << c.estimatedCycles;
  return o.str();
}

// N tiles each hold a 4-word token; every step each tile's vertex updates the token it
// holds, then one merged Copy passes every token to the next tile (a rotation: sources
// and destinations coincide, so the exchange must read all before writing any).
std::string tokenRing(bool viaBuffers) {
  const unsigned N = 8, R = 5;
  Graph g = graph(N);
  Tensor tok = g.addVariable(UNSIGNED_INT, {N, 4}, "tokens");
  Tensor in = g.addVariable(UNSIGNED_INT, {N, 4}, "inbox");
  ComputeSet cs = g.addComputeSet("step");
  for (unsigned t = 0; t < N; ++t) {
    g.setTileMapping(tok[t], t);
    g.setTileMapping(in[t], t);
    VertexRef v = g.addVertex(cs, "TestTokenStep", {{"token", tok[t]}});
    g.setInitialValue(v["tileId"], t);
    g.setTileMapping(v, t);
    g.setPerfEstimate(v, 100 + t);
  }
  std::vector<unsigned> init(N * 4);
  for (unsigned t = 0; t < N; ++t)
    init[t * 4 + 3] = 1000 + t; // token identity
  g.setInitialValue<unsigned>(tok, init);
  std::vector<Tensor> from, to;
  for (unsigned t = 0; t < N; ++t) {
    from.push_back(tok[t]);
    to.push_back((viaBuffers ? in : tok)[(t + 1) % N]);
  }
  Sequence step({Execute(cs), Copy(concat(from), concat(to))});
  if (viaBuffers)
    step.add(Copy(in, tok));
  g.createHostRead("tokens", tok);
  Engine e = load(std::move(g), {Repeat(R, step)}, N);
  e.run(0);
  std::vector<unsigned> out(N * 4);
  e.readTensor("tokens", out.data(), out.data() + out.size());
  return "tokens=" + join(out) + ";" + counters(e);
}

// T tiles of floats summed by MultiVertex workers over disjoint ranges, partials gathered
// to tile 0 by one Copy, summed there in index order.
std::string reduction() {
  const unsigned T = 12, n = 997, W = 6;
  Graph g = graph(T);
  Tensor data = g.addVariable(FLOAT, {T, n}, "data");
  Tensor partials = g.addVariable(FLOAT, {T, W}, "partials");
  Tensor gathered = g.addVariable(FLOAT, {T * W}, "gathered");
  Tensor total = g.addVariable(FLOAT, {}, "total");
  g.setTileMapping(gathered, 0);
  g.setTileMapping(total, 0);
  ComputeSet cs1 = g.addComputeSet("partial"), cs2 = g.addComputeSet("sum");
  std::vector<float> init(T * n);
  std::uint32_t x = 12345;
  for (auto &f : init) {
    x = x * 1664525u + 1013904223u;
    f = static_cast<float>(x >> 8) * (1.0f / 16777216.0f) - 0.25f;
  }
  g.setInitialValue<float>(data, init);
  for (unsigned t = 0; t < T; ++t) {
    g.setTileMapping(data[t], t);
    g.setTileMapping(partials[t], t);
    VertexRef v = g.addVertex(cs1, "TestPartialSum", {{"in", data[t]}, {"partials", partials[t]}});
    g.setTileMapping(v, t);
  }
  VertexRef s = g.addVertex(cs2, "TestSum");
  g.connect(s["in"], gathered);
  g.connect(s["out"], total);
  g.setTileMapping(s, 0);
  g.createHostRead("total", total);
  Engine e = load(std::move(g), {Sequence({Execute(cs1), Copy(partials.flatten(), gathered), Execute(cs2)})}, T);
  e.run(0);
  float r = 0;
  e.readTensor("total", &r, &r + 1);
  std::uint32_t bits;
  std::memcpy(&bits, &r, 4);
  std::ostringstream o;
  o << "total_bits=" << bits << ";" << counters(e);
  return o.str();
}

std::string workerOrder() {
  Graph g = graph(1);
  Tensor seen = g.addVariable(UNSIGNED_INT, {6}, "seen");
  g.setTileMapping(seen, 0);
  ComputeSet cs = g.addComputeSet("order");
  g.setTileMapping(g.addVertex(cs, "TestWorkerOrder", {{"seen", seen}}), 0);
  g.createHostRead("seen", seen);
  Engine e = load(std::move(g), {Execute(cs)}, 1);
  e.run(0);
  std::vector<unsigned> out(6);
  e.readTensor("seen", out.data(), out.data() + 6);
  return "seen=" + join(out);
}

// RepeatWhileTrue whose predicate a vertex computes on tile 1.
std::string repeatWhile() {
  Graph g = graph(2);
  Tensor counter = g.addVariable(UNSIGNED_INT, {1}, "counter");
  Tensor limit = g.addConstant<unsigned>(UNSIGNED_INT, {1}, 7u, "limit");
  Tensor more = g.addVariable(BOOL, {}, "more");
  Tensor bodyRuns = g.addVariable(UNSIGNED_INT, {}, "bodyRuns");
  for (const Tensor &t : {counter, limit, more})
    g.setTileMapping(t, 1);
  g.setTileMapping(bodyRuns, 0);
  ComputeSet cond = g.addComputeSet("cond"), body = g.addComputeSet("body");
  VertexRef c = g.addVertex(cond, "TestCountBelow", {{"counter", counter[0]}, {"limit", limit[0]}, {"more", more}});
  g.setTileMapping(c, 1);
  g.setTileMapping(g.addVertex(body, "TestIncrement", {{"x", bodyRuns}}), 0);
  g.createHostRead("counter", counter);
  g.createHostRead("bodyRuns", bodyRuns);
  Engine e = load(std::move(g), {RepeatWhileTrue(Execute(cond), more, Execute(body))}, 2);
  e.run(0);
  unsigned cnt = 0, runs = 0;
  e.readTensor("counter", &cnt, &cnt + 1);
  e.readTensor("bodyRuns", &runs, &runs + 1);
  return "counter=" + std::to_string(cnt) + ";body_runs=" + std::to_string(runs) + ";" + counters(e);
}

// Host write then read through views that span three tiles.
std::string hostRoundTrip() {
  Graph g = graph(3);
  Tensor a = g.addVariable(INT, {3, 5}, "a");
  for (unsigned t = 0; t < 3; ++t)
    g.setTileMapping(a[t], t);
  Tensor col = a.slice(1, 3, 1); // 3x2, three regions on three tiles
  g.createHostWrite("a_in", a);
  g.createHostRead("a_out", a);
  g.createHostRead("cols", col);
  Engine e = load(std::move(g), {Sequence()}, 3);
  std::vector<int> in(15);
  for (int i = 0; i < 15; ++i)
    in[i] = i * i - 40;
  e.writeTensor("a_in", in.data(), in.data() + in.size());
  std::vector<int> out(15), cols(6);
  e.readTensor("a_out", out.data(), out.data() + out.size());
  e.readTensor("cols", cols.data(), cols.data() + cols.size());
  return "out=" + join(out) + ";cols=" + join(cols) + ";" + counters(e);
}

// Views: slice along a later dimension, concat along it, reshape, flatten, operator[].
std::string views() {
  Graph g = graph(1);
  Tensor x = g.addVariable(UNSIGNED_INT, {3, 4}, "x");
  g.setTileMapping(x, 0);
  std::vector<unsigned> init(12);
  for (unsigned i = 0; i < 12; ++i)
    init[i] = i;
  g.setInitialValue<unsigned>(x, init);
  std::map<std::string, Tensor> vs = {
      {"slice_dim1", x.slice(1, 3, 1)},
      {"concat_dim1", concat(x.slice(0, 1, 1), x.slice(3, 4, 1), 1)},
      {"row2", x[2]},
      {"reshape_row1", x.reshape({4, 3})[1]},
      {"flat_slice", x.flatten().slice(5, 7)},
      {"concat_dim0", concat({x[2], x[0]})},
  };
  for (const auto &kv : vs)
    g.createHostRead(kv.first, kv.second);
  Engine e = load(std::move(g), {Sequence()}, 1);
  std::string r;
  for (const auto &kv : vs) {
    std::vector<unsigned> out(kv.second.numElements());
    e.readTensor(kv.first, out.data(), out.data() + out.size());
    r += kv.first + "=" + join(out) + ";";
  }
  return r;
}

std::string halfScale() {
  Graph g = graph(1);
  Tensor h = g.addVariable(HALF, {5}, "h");
  g.setTileMapping(h, 0);
  g.setInitialValue<float>(h, std::vector<float>{1.0f, 3.0f, 65504.0f, 0.1f, -2.5f});
  ComputeSet cs = g.addComputeSet("scale");
  VertexRef v = g.addVertex(cs, "TestHalfScale", {{"v", h}});
  g.setInitialValue(v["scale"], 0.5f);
  g.setTileMapping(v, 0);
  g.createHostRead("h", h);
  Engine e = load(std::move(g), {Execute(cs)}, 1);
  e.run(0);
  std::vector<std::uint16_t> raw(5);
  e.readTensor("h", raw.data(), raw.data() + 5);
  std::vector<float> out(5);
  copyDeviceHalfToFloat(Target::createIPUTarget(1, "ipu2"), raw.data(), out.data(), 5);
  return "half=" + join(out);
}

// ---- rule violations: each throws the error under test -------------------------------

std::string overBudget() {
  Graph g = graph(4);
  Tensor ok = g.addVariable(UNSIGNED_CHAR, {1000}, "small");
  Tensor big = g.addVariable(UNSIGNED_CHAR, {700000}, "big_buffer");
  g.setTileMapping(ok, 0);
  g.setTileMapping(big, 3);
  Engine e = load(std::move(g), {Sequence()}, 4);
  return "no error";
}

std::string unmapped() {
  Graph g = graph(2);
  Tensor a = g.addVariable(FLOAT, {10}, "half_mapped");
  g.setTileMapping(a.slice(0, 4), 0);
  Engine e = load(std::move(g), {Sequence()}, 2);
  return "no error";
}

std::string copyMismatch() {
  Graph g = graph(2);
  Tensor a = g.addVariable(FLOAT, {10}, "src10");
  Tensor b = g.addVariable(FLOAT, {8}, "dst8");
  g.setTileMapping(a, 0);
  g.setTileMapping(b, 1);
  Engine e = load(std::move(g), {Copy(a, b)}, 2);
  return "no error";
}

std::string copyTypeMismatch() {
  Graph g = graph(2);
  Tensor a = g.addVariable(FLOAT, {4}, "floats");
  Tensor b = g.addVariable(INT, {4}, "ints");
  g.setTileMapping(a, 0);
  g.setTileMapping(b, 1);
  Engine e = load(std::move(g), {Copy(a, b)}, 2);
  return "no error";
}

std::string overlappingDst() {
  Graph g = graph(2);
  Tensor a = g.addVariable(FLOAT, {4}, "a");
  Tensor b = g.addVariable(FLOAT, {2}, "b");
  g.setTileMapping(a, 0);
  g.setTileMapping(b, 1);
  Engine e = load(std::move(g), {Copy(a, concat(b, b))}, 2);
  return "no error";
}

std::string unconnectedField() {
  Graph g = graph(1);
  ComputeSet cs = g.addComputeSet("order");
  g.setTileMapping(g.addVertex(cs, "TestWorkerOrder"), 0);
  Engine e = load(std::move(g), {Execute(cs)}, 1);
  return "no error";
}

std::string vertexFalse() {
  const unsigned T = 8;
  Graph g = graph(T);
  ComputeSet cs = g.addComputeSet("check");
  for (unsigned t = 0; t < T; ++t) {
    Tensor f = g.addConstant<unsigned>(UNSIGNED_INT, {}, t == 5 || t == 7 ? 1u : 0u, "flag");
    g.setTileMapping(f, t);
    g.setTileMapping(g.addVertex(cs, "TestFailIf", {{"fail", f}}), t);
  }
  Engine e = load(std::move(g), {Execute(cs)}, T);
  e.run(0);
  return "no error";
}

std::string unknownCodelets() {
  Graph g(Target::createIPUTarget(1, 2, "ipu2"));
  g.addCodelets("codelets/not_there.cpp");
  return "no error";
}

std::string codeletsNotAdded() {
  Graph g(Target::createIPUTarget(1, 2, "ipu2"));
  ComputeSet cs = g.addComputeSet();
  g.addVertex(cs, "TestIncrement");
  return "no error";
}

std::string wrongTypeField() {
  Graph g = graph(1);
  Tensor x = g.addVariable(FLOAT, {}, "float_scalar");
  g.setTileMapping(x, 0);
  ComputeSet cs = g.addComputeSet();
  g.addVertex(cs, "TestIncrement", {{"x", x}});
  return "no error";
}

std::string badHostBuffer() {
  Graph g = graph(1);
  Tensor x = g.addVariable(FLOAT, {4}, "x");
  g.setTileMapping(x, 0);
  g.createHostWrite("x", x);
  Engine e = load(std::move(g), {Sequence()}, 1);
  float buf[3] = {};
  e.writeTensor("x", buf, buf + 3);
  return "no error";
}

std::string halfBits() {
  const float vs[] = {1.0f + 1.0f / 2048.0f, 1.0f + 3.0f / 2048.0f, 65519.0f, 65520.0f, 1.0f / 33554432.0f,
                      1.5f / 33554432.0f, 1.0f / 16777216.0f, 1.0f / 16384.0f, -0.0f, 0.1f, -65504.0f};
  std::vector<unsigned> bits;
  for (float f : vs)
    bits.push_back(poplar_host::half(f).bits);
  const std::uint16_t back[] = {0x3555, 0x0001, 0x7bff, 0xfc00};
  std::vector<float> fs;
  for (auto b : back)
    fs.push_back(poplar_host::half::fromBits(b));
  std::ostringstream o;
  o.precision(9);
  o << "bits=" << join(bits) << ";floats=";
  for (std::size_t i = 0; i < fs.size(); ++i)
    o << (i ? "," : "") << fs[i];
  return o.str();
}

// The payload conversions of foam/half.h (F16C where the build enabled it) against
// their portable versions and the runtime's own half, over every half and a sweep
// of floats. NaNs only have to stay NaNs: their payload bits are never used.
std::string foamHalf() {
  auto bitsOf = [](float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  };
  unsigned h2f = 0, f2h = 0;
  for (std::uint32_t h = 0; h <= 0xFFFFu; ++h) {
    const float a = foam_h2f((std::uint16_t)h), b = foam_h2f_soft((std::uint16_t)h);
    const float c = poplar_host::half::fromBits((std::uint16_t)h);
    if (a != a ? (b == b || c == c) : (bitsOf(a) != bitsOf(b) || bitsOf(a) != bitsOf(c))) h2f++;
  }
  auto nanHalf = [](std::uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; };
  unsigned sat = 0;
  for (std::uint64_t x = 0; x <= 0xFFFFFFFFull; x += 4093) {
    float f;
    const std::uint32_t u = (std::uint32_t)x;
    std::memcpy(&f, &u, 4);
    const std::uint16_t a = foam_f2h_rne(f), b = foam_f2h_soft(f), c = poplar_host::half(f).bits;
    if (f != f ? !(nanHalf(a) && nanHalf(b) && nanHalf(c)) : (a != b || a != c)) f2h++;
    // The payload's conversion: the portable one of the value clamped to +-65504.
    const float clamped = f > 65504.0f ? 65504.0f : f < -65504.0f ? -65504.0f : f;
    const std::uint16_t s = foam_f2h(f);
    if (f != f ? !nanHalf(s) : s != foam_f2h_soft(clamped)) sat++;
  }
  const float big[] = {65519.0f, 65520.0f, 1e10f, INFINITY, -65520.0f, -INFINITY};
  std::vector<unsigned> saturated;
  for (float f : big)
    saturated.push_back(foam_f2h(f));
#ifdef __F16C__
  const int f16c = 1;
#else
  const int f16c = 0;
#endif
  return "f16c=" + std::to_string(f16c) + ";h2f_mismatches=" + std::to_string(h2f) +
         ";f2h_mismatches=" + std::to_string(f2h) + ";saturating_mismatches=" + std::to_string(sat) +
         ";saturated=" + join(saturated);
}

// The march rounds a ray in registers between shards on one tile (foam_ray_round)
// where it wrote and read the payload, and an injector builds the rays it marches
// first from their pixel words (foam_ray_primary) where it read their payloads and
// finds its region's shards by fixed halvings of a padded directory
// (foam_region_find_fixed) where it searched by a loop: each must give what the old
// way gave, bit for bit. Every layout, with and
// without hop counters, over a sweep of floats (NaN, infinities, past the largest
// half, subnormals) in every field; every id in random padded directories.
std::string rayRound() {
  unsigned mismatches = 0, rays = 0;
  auto same = [](float a, float b) {
    std::uint32_t x, y;
    std::memcpy(&x, &a, 4);
    std::memcpy(&y, &b, 4);
    return a != a ? b != b : x == y;
  };
  // Every field of two rays alike, the floats bit for bit (NaN as NaN).
  auto sameRay = [&same](const foam_ray &a, const foam_ray &b) {
    bool ok = a.shard == b.shard && a.cell == b.cell && a.px == b.px && a.router_hops == b.router_hops &&
              a.tracer_hops == b.tracer_hops;
    for (unsigned k = 0; k < 6; ++k) ok = ok && same((&a.t)[k], (&b.t)[k]);
    return ok;
  };
  std::uint32_t seed = 1;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  const float special[] = {NAN, INFINITY, -INFINITY, 65504.0f, 65519.0f, 65520.0f, -1e10f, 1e-8f, -6e-8f, 0.0f, -0.0f, 0.1f};
  for (std::uint32_t layout : {FOAM_LAYOUT_FP32, FOAM_LAYOUT_MIXED, FOAM_LAYOUT_HALF}) {
    for (std::uint32_t hops : {0u, 1u}) {
      for (unsigned i = 0; i < 20000; ++i, ++rays) {
        foam_ray r;
        float *f = &r.t;
        for (unsigned k = 0; k < 6; ++k) {
          std::uint32_t u = next();
          std::memcpy(&f[k], &u, 4);
          if (next() % 4 == 0) f[k] = special[next() % 12];
        }
        r.shard = (std::uint16_t)next();
        r.cell = (std::uint16_t)next();
        r.px = next();
        r.router_hops = (std::uint16_t)next();
        r.tracer_hops = (std::uint16_t)next();
        unsigned char slot[32];
        foam_ray_store(slot, layout, hops, &r);
        foam_ray stored;
        foam_ray_load(slot, layout, hops, &stored);
        foam_ray rounded = r;
        foam_ray_round(layout, hops, &rounded);
        unsigned char again[32];
        foam_ray_store(again, layout, hops, &rounded);
        mismatches += !(std::memcmp(slot, again, foam_ray_bytes(layout, hops)) == 0 && sameRay(stored, rounded));
      }
    }
  }
  // An injector builds each ray it marches first from its pixel word
  // (foam_ray_primary) instead of reading back what its emit stored: the payload
  // must give back that ray exactly, for every pixel word, start cell and layout.
  unsigned primaries = 0, primaryMismatches = 0;
  for (std::uint32_t layout : {FOAM_LAYOUT_FP32, FOAM_LAYOUT_MIXED, FOAM_LAYOUT_HALF}) {
    for (std::uint32_t hops : {0u, 1u}) {
      for (unsigned i = 0; i < 2000; ++i, ++primaries) {
        foam_camera cam;
        std::memset(&cam, 0, sizeof cam);
        cam.start_shard = (std::uint16_t)next();
        cam.start_cell = (std::uint16_t)next();
        const std::uint32_t px = foam_px_make(next() & FOAM_PX_MASK, next() & FOAM_PX_MASK, 0);
        foam_ray emitted, built;
        foam_ray_primary(&cam, px, &emitted);
        unsigned char slot[32];
        foam_ray_store(slot, layout, hops, &emitted);
        foam_ray loaded;
        foam_ray_load(slot, layout, hops, &loaded);
        foam_ray_primary(&cam, foam_slot_px(slot), &built);
        primaryMismatches += !(foam_slot_unmarched(slot) && sameRay(loaded, built));
      }
    }
  }
  unsigned finds = 0, findMismatches = 0;
  for (unsigned trial = 0; trial < 2000; ++trial) {
    foam_region_header h;
    std::memset(&h, 0, sizeof h);
    h.count = trial % 3 == 0 ? FOAM_REGION_MAX_SHARDS : next() % (FOAM_REGION_MAX_SHARDS + 1);
    std::vector<std::uint16_t> ids;
    while (ids.size() < h.count) {
      const std::uint16_t id = (std::uint16_t)(next() % 4096);
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
    std::sort(ids.begin(), ids.end());
    for (unsigned k = 0; k < FOAM_REGION_MAX_SHARDS; ++k)
      h.shard[k] = k < h.count ? ids[k] : (std::uint16_t)FOAM_INVALID_SHARD;
    for (std::uint32_t id = 0; id < 4097; id += 1 + trial % 7, ++finds)
      findMismatches += foam_region_find_fixed(&h, (std::uint16_t)id) != foam_region_find(&h, (std::uint16_t)id);
  }
  return "rays=" + std::to_string(rays) + ";round_mismatches=" + std::to_string(mismatches) +
         ";primaries=" + std::to_string(primaries) + ";primary_mismatches=" + std::to_string(primaryMismatches) +
         ";finds=" + std::to_string(finds) + ";find_mismatches=" + std::to_string(findMismatches);
}

// Floating-point exceptions trap on the IPU. With them trapping here too, march a ray
// from a zeroed camera (zero focal length: a zero direction) and a ray that arrives
// below the depth quantile without a depth (the fp32 and mixed payloads carry none)
// into an empty cell: neither may divide by zero.
std::string marchTraps() {
  // Two empty cells side by side on x, each the other's only neighbour.
  struct alignas(8) Blob {
    foam_shard_header h;
    foam_cell cells[2];
    foam_cell_info info[2]; // n_halo 0: the info records follow the cells
    std::uint16_t adj[2];
  } blob{};
  blob.h.magic = FOAM_SHARD_MAGIC;
  blob.h.n_local = 2;
  blob.h.n_adj = 2;
  blob.h.cells_offset = offsetof(Blob, cells);
  blob.h.halo_offset = offsetof(Blob, info);
  blob.h.adj_offset = offsetof(Blob, adj);
  blob.h.total_bytes = sizeof blob;
  blob.cells[1].x = 1.0f;
  blob.info[0].adj_end = 1;
  blob.info[1].adj_end = 2;
  blob.adj[0] = 1;
  blob.adj[1] = 0;
  foam_shard_view view;
  foam_shard_open(reinterpret_cast<const unsigned char *>(&blob), &view);

  feenableexcept(FE_DIVBYZERO | FE_INVALID | FE_OVERFLOW);
  foam_camera zero{};
  foam_vec3 o, d;
  foam_camera_ray(&zero, 3, 4, &o, &d);
  foam_ray ray{};
  ray.T = 0.3f;
  ray.depth = -1.0f;
  std::uint32_t cells = 0, neighbours = 0;
  const foam_vec3 origin{-0.5f, 0.0f, 0.0f}, along{1.0f, 0.0f, 0.0f};
  const foam_march_end end = foam_march(&view, origin, along, nullptr, 0.001f, INT32_MAX, &ray, &cells, &neighbours);
  fedisableexcept(FE_DIVBYZERO | FE_INVALID | FE_OVERFLOW);
  std::ostringstream o2;
  o2 << "direction=" << d.x << "," << d.y << "," << d.z << ";end=" << end << ";cells=" << cells
     << ";T=" << ray.T << ";depth=" << ray.depth;
  return o2.str();
}

// The picks among a shard's tiles (foam/ray.h). A ray's class among 2^b tiles
// (foam_replica_class, the routers' and the side links' pick) must split every
// block of pixels (as rays gather in a camera region) evenly, and nest: the class
// among 2^(b+1) tiles halves the class among 2^b, so the tile of class i of a
// 2-tile shard links to the tiles of classes 2i and 2i+1 of a 4-tile one. Reports
// the cases, the largest deviation from even (in standard deviations of a fair
// split, x100), and the pixels whose classes do not nest or depend on the steps.
std::string replicaPicks() {
  double split = 0.0;
  unsigned cases = 0, unnested = 0;
  const unsigned blocks[][4] = {{0, 0, 64, 64}, {300, 200, 48, 80}, {600, 400, 40, 80}, {17, 333, 120, 24}};
  for (const auto &blk : blocks)
    for (unsigned bits = 1; bits <= 4; ++bits) {
      std::vector<unsigned> classes(1u << bits, 0);
      unsigned n = 0;
      for (unsigned y = blk[1]; y < blk[1] + blk[3]; ++y)
        for (unsigned x = blk[0]; x < blk[0] + blk[2]; ++x) {
          const std::uint32_t px = foam_px_make(x, y, 7);
          const std::uint32_t c = foam_replica_class(px, bits);
          ++classes[c], ++n;
          if (bits < 4 && foam_replica_class(px, bits + 1) >> 1 != c) ++unnested;
          // The class ignores the steps the pixel word carries.
          if (foam_replica_class(foam_px_make(x, y, 300), bits) != c) ++unnested;
        }
      const double even = (double)n / classes.size();
      for (unsigned c : classes) split = std::max(split, std::fabs(c - even) / std::sqrt(even));
      ++cases;
    }
  return "cases=" + std::to_string(cases) + ";split_sd_x100=" + std::to_string((unsigned)(split * 100.0)) +
         ";unnested=" + std::to_string(unnested);
}

// foam_divide against the integer quotient: every divisor up to 2^17 (a router's
// shares divide by sums under 2^16) with quotients and remainders at the edges
// and at random, and random divisors up to FOAM_DIVIDE_MAX_DIVISOR, every quotient
// below FOAM_DIVIDE_MAX_QUOTIENT, every dividend within 32 bits. With traps on, as on
// the IPU. Reports the checks and the mismatches (and the first one).
std::string divisorExact() {
  feenableexcept(FE_DIVBYZERO | FE_INVALID | FE_OVERFLOW);
  std::uint64_t checks = 0, wrong = 0;
  std::string first;
  std::uint64_t seed = 0x9E3779B97F4A7C15ull;
  auto rnd = [&seed](std::uint64_t below) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    return below ? seed % below : 0;
  };
  auto check = [&](std::uint32_t d, std::uint64_t q, std::uint64_t r) {
    if (q >= FOAM_DIVIDE_MAX_QUOTIENT || r >= d) return;
    const std::uint64_t n = q * d + r;
    if (n > 0xFFFFFFFFull) return;
    ++checks;
    const std::uint32_t got = foam_divide(foam_divisor_of(d), (std::uint32_t)n);
    if (got != (std::uint32_t)(n / d) && wrong++ == 0)
      first = std::to_string(n) + "/" + std::to_string(d) + "=" + std::to_string(got);
  };
  auto divisor = [&](std::uint32_t d) {
    const std::uint64_t most = std::min<std::uint64_t>(FOAM_DIVIDE_MAX_QUOTIENT - 1, 0xFFFFFFFFull / d);
    const std::uint64_t qs[] = {0, 1, 2, 3, most / 2, most - 1, most, rnd(most + 1), rnd(most + 1), rnd(1024)};
    for (std::uint64_t q : qs)
      for (std::uint64_t r : {std::uint64_t(0), std::uint64_t(1), std::uint64_t(d - 1), std::uint64_t(d / 2), rnd(d)})
        check(d, q, r);
  };
  for (std::uint32_t d = 1; d <= (1u << 17); ++d) divisor(d);
  for (int k = 0; k < 200000; ++k) divisor(1 + (std::uint32_t)rnd(FOAM_DIVIDE_MAX_DIVISOR - 1));
  for (std::uint32_t d : {FOAM_DIVIDE_MAX_DIVISOR - 1, 0xFFFFu, 0x10000u, 3u, 7u, 255u}) divisor(d);
  // A router's use: part * x / sum for part < sum and x <= sum, sums under 2^16.
  for (int k = 0; k < 2000000; ++k) {
    const std::uint32_t sum = 1 + (std::uint32_t)rnd(0xFFFF), part = (std::uint32_t)rnd(sum),
                        x = (std::uint32_t)rnd(sum + 1);
    const std::uint64_t n = (std::uint64_t)part * x;
    check(sum, n / sum, n % sum);
  }
  fedisableexcept(FE_DIVBYZERO | FE_INVALID | FE_OVERFLOW);
  return "checks=" + std::to_string(checks) + ";wrong=" + std::to_string(wrong) + (first.empty() ? "" : ";first=" + first);
}

std::string deviceManager() {
  auto dm = DeviceManager::createDeviceManager();
  const auto hw = dm.getDevices(TargetType::IPU, 1);
  const auto model = dm.getDevices(TargetType::IPU_MODEL, 2);
  const Target &t = model.at(0).getTarget();
  return "ipu=" + std::to_string(hw.size()) + ";model_tiles=" + std::to_string(t.getNumTiles()) + ";bytes=" +
         std::to_string(t.getBytesPerTile()) + ";workers=" + std::to_string(t.getNumWorkerContexts()) +
         ";half=" + std::to_string(t.getTypeSize(HALF));
}

} // namespace

rust::String run_scenario(rust::Str name, unsigned threads) {
  gThreads = threads;
  static const std::map<std::string, std::function<std::string()>> scenarios = {
      {"token_ring", [] { return tokenRing(false); }},
      {"token_ring_buffers", [] { return tokenRing(true); }},
      {"reduction", reduction},
      {"worker_order", workerOrder},
      {"repeat_while", repeatWhile},
      {"host_round_trip", hostRoundTrip},
      {"views", views},
      {"half_scale", halfScale},
      {"over_budget", overBudget},
      {"unmapped", unmapped},
      {"copy_mismatch", copyMismatch},
      {"copy_type_mismatch", copyTypeMismatch},
      {"overlapping_dst", overlappingDst},
      {"unconnected_field", unconnectedField},
      {"vertex_false", vertexFalse},
      {"unknown_codelets", unknownCodelets},
      {"codelets_not_added", codeletsNotAdded},
      {"wrong_type_field", wrongTypeField},
      {"bad_host_buffer", badHostBuffer},
      {"device_manager", deviceManager},
      {"half_bits", halfBits},
      {"foam_half", foamHalf},
      {"ray_round", rayRound},
      {"march_traps", marchTraps},
      {"replica_picks", replicaPicks},
      {"divisor_exact", divisorExact},
      {"streams_and_prints", streamsAndPrints},
      {"implicit_exchange", [] { return implicitExchange(false); }},
      {"profile_summary", [] { return implicitExchange(true); }},
      {"write_conflict", [] { return writeConflict(false); }},
      {"write_conflict_tiles", [] { return writeConflict(true); }},
      {"read_write_conflict", readWriteConflict},
      {"load_refused_type", [] { return loadRefused("type"); }},
      {"load_refused_tiles", [] { return loadRefused("tiles"); }},
      {"load_refused_arch", [] { return loadRefused("arch"); }},
      {"stream_direction", [] { return streamError("direction"); }},
      {"stream_size", [] { return streamError("size"); }},
      {"stream_unconnected", [] { return streamError("unconnected"); }},
      {"stream_ring", [] { return streamError("ring"); }},
      {"tile_mapping", tileMapping},
  };
  auto it = scenarios.find(std::string(name));
  if (it == scenarios.end())
    throw std::invalid_argument("unknown scenario '" + std::string(name) + "'");
  return rust::String(it->second());
}

} // namespace foam_selftest
