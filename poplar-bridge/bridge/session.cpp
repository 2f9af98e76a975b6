#include "poplar-bridge/bridge/session.h"
#include "poplar-bridge/src/lib.rs.h"
#include <poplar/DeviceManager.hpp>
#include <poplar/Executable.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>
#ifndef FOAM_POPLAR_SDK
#include <poplar_host/Report.hpp>
#include <poplar_host/registry.hpp>
#endif
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

namespace foam_bridge {

static std::string s(rust::Str x) { return std::string(x); }

static poplar::Type parseType(const std::string &t) {
  static const std::pair<const char *, poplar::Type> types[] = {
      {"BOOL", poplar::BOOL},   {"CHAR", poplar::CHAR},   {"UNSIGNED_CHAR", poplar::UNSIGNED_CHAR},
      {"SHORT", poplar::SHORT}, {"UNSIGNED_SHORT", poplar::UNSIGNED_SHORT},
      {"HALF", poplar::HALF},   {"INT", poplar::INT},     {"UNSIGNED_INT", poplar::UNSIGNED_INT},
      {"FLOAT", poplar::FLOAT}};
  for (const auto &kv : types)
    if (t == kv.first)
      return kv.second;
  throw std::invalid_argument("unknown element type '" + t +
                              "' (BOOL, CHAR, UNSIGNED_CHAR, SHORT, UNSIGNED_SHORT, HALF, INT, UNSIGNED_INT, FLOAT)");
}

Session::Session(poplar::Device device) : device_(std::move(device)) { graph_.emplace(device_.getTarget()); }
Session::~Session() = default;

poplar::Graph &Session::graph() { return building(); }
poplar::Graph &Session::building() {
  if (!graph_)
    throw std::logic_error("the graph was already compiled into an engine");
  return *graph_;
}
poplar::Engine &Session::engine() const {
  if (!engine_)
    throw std::logic_error("no engine yet: call compile first");
  return *engine_;
}

std::uint32_t Session::addTensor(poplar::Tensor t) {
  tensors_.push_back(std::move(t));
  return static_cast<std::uint32_t>(tensors_.size() - 1);
}
const poplar::Tensor &Session::tensor(std::uint32_t id) const {
  if (id >= tensors_.size())
    throw std::out_of_range("unknown tensor handle " + std::to_string(id));
  return tensors_[id];
}
std::uint32_t Session::addProgram(poplar::program::Program p) {
  programs_.push_back(std::move(p));
  return static_cast<std::uint32_t>(programs_.size() - 1);
}
static const poplar::program::Program &prog(const std::vector<poplar::program::Program> &ps, std::uint32_t id) {
  if (id >= ps.size())
    throw std::out_of_range("unknown program handle " + std::to_string(id));
  return ps[id];
}
template <typename T> static const T &handle(const std::vector<T> &v, std::uint32_t id, const char *what) {
  if (id >= v.size())
    throw std::out_of_range(std::string("unknown ") + what + " handle " + std::to_string(id));
  return v[id];
}

void Session::add_codelets(rust::Str path) { building().addCodelets(s(path)); }

std::uint32_t Session::add_variable(rust::Str type, rust::Slice<const std::size_t> shape, rust::Str name) {
  std::vector<std::size_t> sh(shape.begin(), shape.end());
  return addTensor(building().addVariable(parseType(s(type)), sh, s(name)));
}

template <typename T> static void setTyped(poplar::Graph &g, const poplar::Tensor &t, const std::uint8_t *p, std::size_t n) {
  std::vector<T> v(n);
  std::memcpy(v.data(), p, n * sizeof(T));
  g.setInitialValue<T>(t, poplar::ArrayRef<T>(v));
}

void Session::set_initial_bytes(std::uint32_t id, rust::Slice<const std::uint8_t> bytes) {
  const poplar::Tensor &t = tensor(id);
  const poplar::Type ty = t.elementType();
  const std::size_t n = t.numElements(), es = target().getTypeSize(ty);
  if (bytes.size() != n * es)
    throw std::invalid_argument("set_initial_bytes: " + std::to_string(bytes.size()) + " bytes for tensor '" +
                                t.getDebugStr() + "' of " + std::to_string(n * es) + " bytes");
  poplar::Graph &g = building();
  const std::uint8_t *p = bytes.data();
  if (ty == poplar::HALF) {
    std::vector<std::uint16_t> v(n);
    std::memcpy(v.data(), p, n * 2);
    g.setInitialValueHalf(t, v);
  } else if (ty == poplar::FLOAT) setTyped<float>(g, t, p, n);
  else if (ty == poplar::INT) setTyped<int>(g, t, p, n);
  else if (ty == poplar::UNSIGNED_INT) setTyped<unsigned>(g, t, p, n);
  else if (ty == poplar::SHORT) setTyped<short>(g, t, p, n);
  else if (ty == poplar::UNSIGNED_SHORT) setTyped<unsigned short>(g, t, p, n);
  else if (ty == poplar::CHAR) setTyped<signed char>(g, t, p, n);
  else setTyped<unsigned char>(g, t, p, n); // UNSIGNED_CHAR, BOOL
}

std::uint32_t Session::slice(std::uint32_t t, std::size_t begin, std::size_t end, std::uint32_t dim) {
  return addTensor(tensor(t).slice(begin, end, dim));
}
std::uint32_t Session::index(std::uint32_t t, std::size_t i) { return addTensor(tensor(t)[i]); }
std::uint32_t Session::reshape(std::uint32_t t, rust::Slice<const std::size_t> shape) {
  std::vector<std::size_t> sh(shape.begin(), shape.end());
  return addTensor(tensor(t).reshape(sh));
}
std::uint32_t Session::concat(rust::Slice<const std::uint32_t> ts, std::uint32_t dim) {
  std::vector<poplar::Tensor> v;
  for (auto id : ts)
    v.push_back(tensor(id));
  return addTensor(poplar::concat(v, dim));
}
std::size_t Session::num_elements(std::uint32_t t) const { return tensor(t).numElements(); }
void Session::set_tile_mapping(std::uint32_t t, std::uint32_t tile) { building().setTileMapping(tensor(t), tile); }

std::uint32_t Session::add_compute_set(rust::Str name) {
  computeSets_.push_back(building().addComputeSet(s(name)));
  return static_cast<std::uint32_t>(computeSets_.size() - 1);
}
std::uint32_t Session::add_vertex(std::uint32_t cs, rust::Str type, std::uint32_t tile) {
  poplar::Graph &g = building();
  auto v = g.addVertex(handle(computeSets_, cs, "compute set"), s(type));
  g.setTileMapping(v, tile);
  vertices_.push_back(v);
  return static_cast<std::uint32_t>(vertices_.size() - 1);
}
void Session::connect(std::uint32_t v, rust::Str field, std::uint32_t t) {
  building().connect(handle(vertices_, v, "vertex")[s(field)], tensor(t));
}
void Session::set_field_u32(std::uint32_t v, rust::Str field, std::uint32_t value) {
  building().setInitialValue(handle(vertices_, v, "vertex")[s(field)], value);
}
void Session::set_field_i32(std::uint32_t v, rust::Str field, std::int32_t value) {
  building().setInitialValue(handle(vertices_, v, "vertex")[s(field)], value);
}
void Session::set_field_f32(std::uint32_t v, rust::Str field, float value) {
  building().setInitialValue(handle(vertices_, v, "vertex")[s(field)], value);
}
void Session::set_perf_estimate(std::uint32_t v, std::uint64_t cycles) {
  building().setPerfEstimate(handle(vertices_, v, "vertex"), cycles);
}
void Session::create_host_write(rust::Str h, std::uint32_t t) { building().createHostWrite(s(h), tensor(t)); }
void Session::create_host_read(rust::Str h, std::uint32_t t) { building().createHostRead(s(h), tensor(t)); }

std::uint32_t Session::prog_execute(std::uint32_t cs) {
  return addProgram(poplar::program::Execute(handle(computeSets_, cs, "compute set")));
}
std::uint32_t Session::prog_copy(std::uint32_t src, std::uint32_t dst) {
  return addProgram(poplar::program::Copy(tensor(src), tensor(dst)));
}
std::uint32_t Session::prog_sequence(rust::Slice<const std::uint32_t> ps) {
  poplar::program::Sequence seq;
  for (auto id : ps)
    seq.add(prog(programs_, id));
  return addProgram(seq);
}
std::uint32_t Session::prog_repeat(std::uint32_t count, std::uint32_t body) {
  return addProgram(poplar::program::Repeat(count, prog(programs_, body)));
}
std::uint32_t Session::prog_repeat_while_true(std::uint32_t cond, std::uint32_t predicate, std::uint32_t body) {
  return addProgram(poplar::program::RepeatWhileTrue(prog(programs_, cond), tensor(predicate), prog(programs_, body)));
}
std::uint32_t Session::prog_sync() { return addProgram(poplar::program::Sync(poplar::SyncType::INTERNAL)); }

void Session::compile(rust::Slice<const std::uint32_t> ps) {
  std::vector<poplar::program::Program> v;
  for (auto id : ps)
    v.push_back(prog(programs_, id));
  poplar::Graph g = std::move(building());
  graph_.reset();
  engine_ = std::make_unique<poplar::Engine>(std::move(g), v);
  engine_->load(device_);
}

void Session::compile_cached(rust::Slice<const std::uint32_t> ps, rust::Str path) {
  const std::string file = s(path);
  std::ifstream in(file, std::ios::binary);
  if (in) {
    poplar::Executable exe = poplar::Executable::deserialize(in);
    graph_.reset();
    engine_ = std::make_unique<poplar::Engine>(std::move(exe));
  } else {
    std::vector<poplar::program::Program> v;
    for (auto id : ps)
      v.push_back(prog(programs_, id));
    poplar::Graph g = std::move(building());
    graph_.reset();
    poplar::Executable exe = poplar::compileGraph(std::move(g), v);
    const std::string temp = file + ".partial";
    {
      std::ofstream out(temp, std::ios::binary | std::ios::trunc);
      if (!out)
        throw std::runtime_error("cannot write the executable " + temp);
      try {
        exe.serialize(out);
      } catch (...) {
        out.close();
        std::remove(temp.c_str());
        throw;
      }
      out.flush();
      if (!out) {
        std::remove(temp.c_str());
        throw std::runtime_error("writing the executable " + temp + " failed");
      }
    }
    if (std::rename(temp.c_str(), file.c_str()) != 0) {
      std::remove(temp.c_str());
      throw std::runtime_error("cannot rename " + temp + " to " + file);
    }
    engine_ = std::make_unique<poplar::Engine>(std::move(exe));
  }
  engine_->load(device_);
}

void Session::run(std::uint32_t p) {
  ++hostCalls_;
  engine().run(p);
}
void Session::write_tensor(rust::Str h, rust::Slice<const std::uint8_t> bytes) {
  ++hostCalls_;
  engine().writeTensor(s(h), bytes.data(), bytes.data() + bytes.size());
}
void Session::read_tensor(rust::Str h, rust::Slice<std::uint8_t> bytes) {
  ++hostCalls_;
  engine().readTensor(s(h), bytes.data(), bytes.data() + bytes.size());
}

std::uint32_t Session::num_tiles() const { return target().getNumTiles(); }
std::uint32_t Session::bytes_per_tile() const { return target().getBytesPerTile(); }

#ifndef FOAM_POPLAR_SDK
static MemoryReport convert(const poplar_host::MemoryReport &r) {
  MemoryReport m;
  m.num_tiles = r.numTiles;
  m.bytes_per_tile = r.bytesPerTile;
  for (const auto &t : r.tiles) {
    m.tiles.push_back({t.tile, t.tensorBytes, t.vertexStateBytes, t.codeBytes, t.stackBytes});
    for (const auto &i : t.items)
      m.items.push_back({t.tile,
                         i.kind == poplar_host::MemoryKind::Tensor        ? MemoryKind::Tensor
                         : i.kind == poplar_host::MemoryKind::VertexState ? MemoryKind::VertexState
                         : i.kind == poplar_host::MemoryKind::Code        ? MemoryKind::Code
                                                                          : MemoryKind::Stack,
                         rust::String(i.name), i.bytes});
  }
  return m;
}
MemoryReport Session::graph_memory_report() const {
  if (!graph_)
    throw std::logic_error("the graph was already compiled: use memory_report");
  return convert(poplar_host::memoryReport(*graph_));
}
MemoryReport Session::memory_report() const { return convert(poplar_host::memoryReport(engine())); }
Counters Session::counters() const {
  const auto c = poplar_host::counters(engine());
  return Counters{c.computeSteps,   c.vertexRuns,       c.copies,
                  c.bytesExchanged, c.bytesCopiedOnTile, c.hostCalls,
                  c.estimatedCycles, c.implicitExchangeBytes, c.streamBytes, c.bytesAcrossIPUs};
}
rust::Vec<VertexCost> vertex_costs() {
  rust::Vec<VertexCost> v;
  for (const poplar_host::VertexType *t : poplar_host::registeredVertexTypes())
    v.push_back(VertexCost{rust::String(t->name), t->stackBytes, t->codeBytes, t->measured});
  return v;
}
void Session::reset_counters() { poplar_host::resetCounters(engine()); }
#else
// On hardware the memory report and execution counters come from PopVision
// (POPLAR_ENGINE_OPTIONS autoReport); the bridge only counts its own host calls.
MemoryReport Session::graph_memory_report() const {
  throw std::runtime_error("memory report not available with the Poplar SDK: use PopVision");
}
MemoryReport Session::memory_report() const { return graph_memory_report(); }
Counters Session::counters() const { return Counters{0, 0, 0, 0, 0, hostCalls_, 0, 0, 0, 0}; }
void Session::reset_counters() { hostCalls_ = 0; }
// popc decides stacks and code with the SDK.
rust::Vec<VertexCost> vertex_costs() { return {}; }
#endif

// The popc target whose code a device runs: an IPU its own arch, the IPU Model and
// the CPU target code compiled for the host.
static std::string codeTarget(const poplar::Target &t) {
  return t.getTargetType() == poplar::TargetType::IPU ? t.getTargetArchString() : "cpu";
}

// IPU hardware with this many tiles if any can be attached (none exists behind the
// host runtime), else an IPU Model of Mk2 IPUs.
static poplar::Device attachDevice(std::uint32_t num_ipus, std::uint32_t tiles_per_ipu) {
  auto devices = poplar::DeviceManager::createDeviceManager().getDevices(poplar::TargetType::IPU, num_ipus);
  for (auto &d : devices)
    if (d.getTarget().getTilesPerIPU() == tiles_per_ipu && d.attach())
      return std::move(d);
  poplar::IPUModel model("ipu2");
  model.numIPUs = num_ipus;
  model.tilesPerIPU = tiles_per_ipu;
  poplar::Device d = model.createDevice();
  d.attach();
  return d;
}

std::unique_ptr<Session> new_session(std::uint32_t num_ipus, std::uint32_t tiles_per_ipu) {
  poplar::Device device = attachDevice(num_ipus, tiles_per_ipu);
  const std::string code = codeTarget(device.getTarget());
#ifdef FOAM_POPC_TARGETS
  // The codelet bundle holds code for the targets build.rs gave popc only.
  const std::string built = "," + std::string(FOAM_POPC_TARGETS) + ",";
  if (built.find("," + code + ",") == std::string::npos)
    throw std::runtime_error("the attached device runs " + code + " code but the codelets were compiled by popc for " +
                             std::string(FOAM_POPC_TARGETS) + " only (poplar-bridge/build.rs)");
#endif
  (void)code;
  return std::make_unique<Session>(std::move(device));
}
rust::String codelets_gp() { return rust::String(FOAM_CODELETS_GP); }

} // namespace foam_bridge
