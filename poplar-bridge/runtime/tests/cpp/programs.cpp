// Small Poplar programs of the kind Graphcore's tutorials teach (variables and data
// streams, vertices whose fields reach other tiles, profile summaries), written
// against the same API and run on the host runtime by tests/runtime.rs. Each returns
// a summary the Rust test checks, or throws the error under test.
#include "poplar-bridge/runtime/tests/cpp/programs.h"
#include <iostream>
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Program.hpp>
#include <poplar_host/Report.hpp>
#include <sstream>
#include <string>
#include <vector>

using namespace poplar;
using namespace poplar::program;

namespace foam_selftest {
namespace {

template <typename T> std::string join(const std::vector<T> &v) {
  std::ostringstream o;
  for (std::size_t i = 0; i < v.size(); ++i)
    o << (i ? "," : "") << v[i];
  return o.str();
}

// What a program prints on standard output while `f` runs, newlines as '|'.
template <typename F> std::string captured(F f) {
  std::ostringstream o;
  std::streambuf *old = std::cout.rdbuf(o.rdbuf());
  try {
    f();
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  std::string s = o.str();
  for (char &c : s)
    if (c == '\n')
      c = '|';
  return s;
}

Device modelDevice(unsigned tiles) {
  IPUModel model("ipu2");
  model.tilesPerIPU = tiles;
  model.minIPUSyncDelay = 0;
  model.relativeSyncDelay = IPUModel::RelativeSyncDelayType::NO_DELAY;
  return model.createDevice();
}

} // namespace

// Variables, constants, a 2-D slice, data streams in both directions over ring
// buffers, and prints; the engine is built from a graph that is gone before it runs.
std::string streamsAndPrints() {
  Device device = modelDevice(3);
  std::vector<int> in(12), out(8, -1);
  for (int i = 0; i < 12; ++i)
    in[i] = 100 + i;
  std::unique_ptr<Engine> engine;
  {
    Graph graph(device);
    Tensor grid = graph.addVariable(INT, {3, 4}, "grid");
    for (unsigned r = 0; r < 3; ++r)
      graph.setTileMapping(grid[r], r);
    Tensor c = graph.addConstant<int>(INT, {2, 2}, {7, 8, 9, 10}, "c");
    graph.setTileMapping(c, 0);
    Tensor dst = graph.addVariable(INT, {4}, "dst");
    graph.setTileMapping(dst.slice(0, 2), 1);
    graph.setTileMapping(dst.slice(2, 4), 2);
    DataStream fromHost = graph.addHostToDeviceFIFO("from-host", INT, 4);
    DataStream toHost = graph.addDeviceToHostFIFO("to-host", INT, 4);
    Sequence prog;
    prog.add(Copy(c, grid.slice({1, 1}, {3, 3})));
    prog.add(PrintTensor("grid", grid));
    prog.add(Copy(fromHost, dst));
    prog.add(PrintTensor("dst-0", dst));
    prog.add(Copy(dst, toHost));
    prog.add(Copy(fromHost, dst));
    prog.add(Copy(fromHost, dst));
    prog.add(PrintTensor("dst-2", dst));
    prog.add(Copy(dst, toHost));
    prog.add(Copy(fromHost, dst));
    prog.add(PrintTensor(dst));
    engine = std::make_unique<Engine>(graph, prog);
  }
  engine->load(device);
  engine->connectStream("from-host", in.data(), in.data() + in.size());
  engine->connectStream("to-host", out.data(), out.data() + out.size());
  const std::string printed = captured([&] { engine->run(); });
  const auto c = poplar_host::counters(*engine);
  return "printed=" + printed + ";out=" + join(out) + ";stream_bytes=" + std::to_string(c.streamBytes);
}

// A dot product per row whose second vector is spread over every tile and whose
// result lives on the next tile, then an accumulation into a tensor on another tile:
// the runtime inserts the exchange and counts it per compute set.
std::string implicitExchange(bool summary) {
  const unsigned T = 4, N = 6;
  Device device = modelDevice(T);
  Graph graph(device);
  graph.addCodelets("runtime_test_codelets.cpp");
  Tensor rows = graph.addVariable(FLOAT, {T, N}, "rows");
  Tensor weights = graph.addVariable(FLOAT, {N}, "weights");
  Tensor dots = graph.addVariable(FLOAT, {T}, "dots");
  Tensor counts = graph.addVariable(INT, {T}, "counts");
  Tensor total = graph.addVariable(INT, {T}, "total");
  std::vector<float> rv(T * N), wv(N);
  for (unsigned i = 0; i < T * N; ++i)
    rv[i] = float(i % 7) - 2.0f;
  for (unsigned i = 0; i < N; ++i)
    wv[i] = 0.5f * float(i + 1);
  graph.setInitialValue<float>(rows, rv);
  graph.setInitialValue<float>(weights, wv);
  graph.setInitialValue<int>(counts, std::vector<int>{1, 2, 3, 4});
  graph.setInitialValue<int>(total, std::vector<int>{10, 20, 30, 40});
  for (unsigned i = 0; i < N; ++i)
    graph.setTileMapping(weights[i], i % T);
  for (unsigned t = 0; t < T; ++t) {
    graph.setTileMapping(rows[t], t);
    graph.setTileMapping(dots[t], (t + 1) % T);
    graph.setTileMapping(counts[t], t);
  }
  graph.setTileMapping(total, T - 1);
  ComputeSet dot = graph.addComputeSet("dot"), add = graph.addComputeSet("accumulate");
  for (unsigned t = 0; t < T; ++t) {
    VertexRef v = graph.addVertex(dot, "TestDot", {{"a", rows[t]}, {"b", weights}, {"out", dots[t]}});
    graph.setTileMapping(v, t);
    graph.setPerfEstimate(v, 10 + t);
  }
  VertexRef acc = graph.addVertex(add, "TestAccumulate", {{"in", counts}, {"acc", total}});
  graph.setTileMapping(acc, 0);
  graph.createHostRead("dots", dots);
  graph.createHostRead("total", total);
  const poplar_host::MemoryReport before = poplar_host::memoryReport(graph);
  Engine engine(graph, Sequence({Execute(dot), Execute(add), Execute(add)}));
  engine.load(device);
  engine.run();
  std::vector<float> d(T);
  std::vector<int> tot(T);
  engine.readTensor("dots", d.data(), d.data() + T);
  engine.readTensor("total", tot.data(), tot.data() + T);
  if (summary) {
    std::ostringstream o;
    engine.printProfileSummary(o, OptionFlags{{"showExecutionSteps", "true"}});
    return o.str();
  }
  std::ostringstream o;
  o << "dots=" << join(d) << ";total=" << join(tot);
  for (const auto &r : poplar_host::computeSetReport(engine))
    o << ";cs_" << r.name << "=" << r.executions << "x" << r.implicitExchangeBytes;
  o << ";implicit=" << poplar_host::counters(engine).implicitExchangeBytes;
  // The exchange buffers count in the memory of the vertex's tile.
  for (const auto &tm : before.tiles)
    for (const auto &item : tm.items)
      if (item.name.rfind("<exchange>", 0) == 0)
        o << ";buffer_" << tm.tile << "=" << item.name << ":" << item.bytes;
  return o.str();
}

// Two vertices of one compute set writing the same element: Poplar forbids it.
std::string writeConflict(bool acrossTiles) {
  Device device = modelDevice(2);
  Graph graph(device);
  graph.addCodelets("runtime_test_codelets.cpp");
  Tensor x = graph.addVariable(UNSIGNED_INT, {8}, "shared_out");
  graph.setTileMapping(x, 0);
  ComputeSet cs = graph.addComputeSet("fill");
  VertexRef a = graph.addVertex(cs, "TestFill", {{"out", x.slice(0, 5)}});
  VertexRef b = graph.addVertex(cs, "TestFill", {{"out", x.slice(4, 8)}});
  graph.setInitialValue(a["value"], 1u);
  graph.setInitialValue(b["value"], 2u);
  graph.setTileMapping(a, 0);
  graph.setTileMapping(b, acrossTiles ? 1 : 0);
  Engine engine(graph, Execute(cs));
  return "no error";
}

// One vertex writes what another of the same compute set reads (Poplar refuses it).
std::string readWriteConflict() {
  Device device = modelDevice(2);
  Graph graph(device);
  graph.addCodelets("runtime_test_codelets.cpp");
  Tensor x = graph.addVariable(UNSIGNED_INT, {8}, "shared_out");
  Tensor more = graph.addVariable(BOOL, {}, "more");
  Tensor counter = graph.addVariable(UNSIGNED_INT, {}, "counter");
  graph.setTileMapping(x, 0);
  graph.setTileMapping(more, 0);
  graph.setTileMapping(counter, 0);
  ComputeSet cs = graph.addComputeSet("fill");
  VertexRef a = graph.addVertex(cs, "TestFill", {{"out", x.slice(0, 5)}});
  graph.setInitialValue(a["value"], 1u);
  graph.setTileMapping(a, 0);
  graph.setTileMapping(graph.addVertex(cs, "TestCountBelow", {{"counter", counter}, {"limit", x[4]}, {"more", more}}), 0);
  Engine engine(graph, Execute(cs));
  return "no error";
}

// Engine::load refuses a device whose target is not the graph's.
std::string loadRefused(const std::string &which) {
  Device model = modelDevice(4);
  if (which == "type") {
    Graph graph(Target::createIPUTarget(1, 4, "ipu2"));
    Engine engine(graph, Sequence());
    engine.load(model);
  } else if (which == "tiles") {
    Graph graph(modelDevice(8));
    Engine engine(graph, Sequence());
    engine.load(model);
  } else {
    IPUModel mk1("ipu1");
    mk1.tilesPerIPU = 4;
    Graph graph(mk1.createDevice());
    Engine engine(graph, Sequence());
    engine.load(model);
  }
  return "no error";
}

// Stream misuse: a Copy against the stream's direction or size, a run with a stream
// not connected, a host buffer that is not whole transfers.
std::string streamError(const std::string &which) {
  Device device = modelDevice(1);
  Graph graph(device);
  Tensor x = graph.addVariable(FLOAT, {4}, "x");
  graph.setTileMapping(x, 0);
  DataStream in = graph.addHostToDeviceFIFO("in", FLOAT, 4);
  DataStream three = graph.addHostToDeviceFIFO("three", FLOAT, 3);
  if (which == "direction")
    Engine engine(graph, Copy(x, in));
  else if (which == "size")
    Engine engine(graph, Copy(three, x));
  Engine engine(graph, Copy(in, x));
  engine.load(device);
  std::vector<float> buf(6);
  if (which == "ring")
    engine.connectStream("in", buf.data(), buf.data() + buf.size());
  engine.run();
  return "no error";
}

// getTileMapping lists each tile's intervals of the flattened tensor.
std::string tileMapping() {
  Device device = modelDevice(3);
  Graph graph(device);
  Tensor x = graph.addVariable(INT, {2, 5}, "x");
  graph.setTileMapping(x, 0);
  graph.setTileMapping(x.slice({0, 1}, {2, 3}), 2);
  graph.setTileMapping(x[1].slice(4, 5), 1);
  std::ostringstream o;
  const auto m = graph.getTileMapping(x);
  for (unsigned t = 0; t < m.size(); ++t) {
    o << "tile" << t << "=";
    for (const auto &i : m[t])
      o << "[" << i.begin() << "," << i.end() << ")";
    o << ";";
  }
  o << "contiguous=" << x[1].isContiguous() << x.slice(1, 3, 1).isContiguous();
  return o.str();
}

} // namespace foam_selftest
