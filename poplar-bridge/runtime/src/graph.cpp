// poplar::Graph on the host runtime: records variables, mappings, vertices and
// connections; the rules that need the whole graph are checked by the Engine.
#include "state.hpp"
#include <algorithm>
#include <cstring>
#include <poplar/exceptions.hpp>

namespace poplar_host {

void TileIntervals::assign(std::size_t b, std::size_t e, unsigned tile) {
  if (b >= e)
    return;
  // Split any range straddling b or e, drop everything inside [b, e), insert the new one.
  auto split = [&](std::size_t at) {
    auto it = m_.upper_bound(at);
    if (it == m_.begin())
      return;
    --it;
    const std::size_t s = it->first, end = it->second.first;
    const unsigned t = it->second.second;
    if (s < at && at < end) {
      it->second.first = at;
      m_[at] = {end, t};
    }
  };
  split(b);
  split(e);
  m_.erase(m_.lower_bound(b), m_.lower_bound(e));
  m_[b] = {e, tile};
}

std::string GraphState::vertexName(unsigned v) const {
  const auto &vi = vertices[v];
  return "'" + vi.type->name + "' #" + std::to_string(v) + " in compute set '" + computeSets[vi.cs].name + "'";
}

void GraphState::checkTensor(const poplar::Tensor &t, const char *what) const {
  if (!t.valid())
    throw poplar::poplar_error(std::string(what) + ": invalid (default-constructed) tensor");
  if (!owns(t.hostData().graph))
    throw poplar::poplar_error(std::string(what) + ": tensor '" + t.getDebugStr() + "' belongs to another graph");
}

std::string tileList(const std::vector<unsigned> &tiles) {
  std::string s;
  for (std::size_t i = 0; i < tiles.size() && i < 8; ++i)
    s += (i ? ", " : "") + std::to_string(tiles[i]);
  if (tiles.size() > 8)
    s += ", ... (" + std::to_string(tiles.size()) + " tiles)";
  return s;
}

void HostValue::store(const poplar::Type &t, void *out) const {
  auto asFloat = [&]() -> float {
    switch (kind) {
    case Kind::Float: return f;
    case Kind::Half: return halfBitsToFloat(h);
    case Kind::Int: return static_cast<float>(i);
    default: return static_cast<float>(u);
    }
  };
  auto asInt = [&]() -> std::int64_t {
    switch (kind) {
    case Kind::Float: return static_cast<std::int64_t>(f);
    case Kind::Half: return static_cast<std::int64_t>(halfBitsToFloat(h));
    case Kind::Int: return i;
    default: return static_cast<std::int64_t>(u);
    }
  };
  auto put = [&](auto v) { std::memcpy(out, &v, sizeof v); };
  switch (t.kind()) {
  case TypeKind::Bool: put(static_cast<unsigned char>(kind == Kind::Float || kind == Kind::Half ? asFloat() != 0.0f : asInt() != 0)); break;
  case TypeKind::Char: put(static_cast<signed char>(asInt())); break;
  case TypeKind::UnsignedChar: put(static_cast<unsigned char>(asInt())); break;
  case TypeKind::Short: put(static_cast<short>(asInt())); break;
  case TypeKind::UnsignedShort: put(static_cast<unsigned short>(asInt())); break;
  case TypeKind::Half: put(kind == Kind::Half ? h : floatToHalfBits(asFloat())); break;
  case TypeKind::Int: put(static_cast<int>(asInt())); break;
  case TypeKind::UnsignedInt: put(static_cast<unsigned>(asInt())); break;
  case TypeKind::Float: put(asFloat()); break;
  default: throw poplar::poplar_error("value of invalid type");
  }
}

} // namespace poplar_host

namespace poplar {
using namespace poplar_host;

Graph::Graph(const Target &target) : s_(std::make_unique<GraphState>()) { s_->target = target; }
Graph::Graph(const Device &device) : Graph(device.getTarget()) {}
Graph::Graph(Graph &&) noexcept = default;
Graph &Graph::operator=(Graph &&) noexcept = default;
Graph::~Graph() = default;

const Target &Graph::getTarget() const { return s_->target; }

static std::string basename(const std::string &p) {
  const auto k = p.find_last_of('/');
  return k == std::string::npos ? p : p.substr(k + 1);
}

bool Graph::addCodelets(StringRef src, CodeletFileType, StringRef, StringRef) {
  // On the host the codelets are compiled into the build (build.rs); adding one checks
  // that the named source is among them. FOAM_CODELETS_GP names the whole bundle.
  const std::string base = basename(src.str());
  if (base == "foam_codelets.gp") {
    s_->allCodelets = true;
    return true;
  }
  const auto &files = compiledCodeletFiles();
  if (std::find(files.begin(), files.end(), base) == files.end()) {
    std::string list;
    for (const auto &f : files)
      list += (list.empty() ? "" : ", ") + f;
    throw poplar_error("addCodelets('" + src.str() + "'): '" + base +
                       "' is not compiled into the host runtime (compiled: " + (list.empty() ? "none" : list) +
                       "); put it in codelets/ and rebuild");
  }
  s_->codeletFiles.insert(base);
  return true;
}

Tensor Graph::addVariable(const Type &type, ArrayRef<std::size_t> shape, const DebugContext &dc) {
  if (type.size() == 0)
    throw poplar_error("addVariable '" + dc.getPathName() + "': invalid element type");
  std::size_t n = 1;
  for (std::size_t d : shape)
    n *= d;
  Var v;
  v.type = type;
  v.n = n;
  v.name = dc.getPathName().empty() ? "var" + std::to_string(s_->vars.size()) : dc.getPathName();
  s_->vars.push_back(std::move(v));
  auto d = std::make_shared<TensorData>();
  d->graph = s_.get();
  d->type = type;
  d->shape = shape.vec();
  if (n)
    d->segs.push_back({static_cast<std::uint32_t>(s_->vars.size() - 1), 0, n});
  return Tensor(d);
}

Tensor Graph::addConstantStorage(const Type &type, ArrayRef<std::size_t> shape, const DebugContext &dc) {
  Tensor t = addVariable(type, shape, dc);
  s_->vars.back().isConst = true;
  return t;
}

void Graph::setTileMapping(const Tensor &t, unsigned tileNum) {
  s_->checkTensor(t, "setTileMapping");
  if (tileNum >= s_->target.getNumTiles())
    throw invalid_tile_mapping("setTileMapping('" + t.getDebugStr() + "', tile " + std::to_string(tileNum) +
                               "): the target has " + std::to_string(s_->target.getNumTiles()) + " tiles");
  for (const auto &sg : t.hostData().segs)
    s_->vars[sg.var].mapping.assign(sg.begin, sg.end, tileNum);
}

Graph::TileToTensorMapping Graph::getTileMapping(const Tensor &t) const {
  s_->checkTensor(t, "getTileMapping");
  TileToTensorMapping m(s_->target.getNumTiles());
  std::size_t at = 0; // position in the view's flattened order
  for (const auto &sg : t.hostData().segs) {
    const auto &ranges = s_->vars[sg.var].mapping.ranges();
    std::size_t pos = sg.begin;
    auto it = ranges.upper_bound(pos);
    if (it != ranges.begin())
      --it;
    for (; pos < sg.end; ++it) {
      if (it == ranges.end() || it->first > pos || it->second.first <= pos)
        throw invalid_tile_mapping("getTileMapping('" + t.getDebugStr() + "'): element " + std::to_string(at) +
                                   " is mapped to no tile");
      const std::size_t e = std::min(sg.end, it->second.first);
      auto &list = m[it->second.second];
      const std::size_t b = at + (pos - sg.begin), en = at + (e - sg.begin);
      if (!list.empty() && list.back().end() == b)
        list.back() = Interval(list.back().begin(), en);
      else
        list.emplace_back(b, en);
      pos = e;
    }
    at += sg.end - sg.begin;
  }
  return m;
}

void Graph::setTileMapping(VertexRef v, unsigned tileNum) {
  if (v.hostGraph() != s_.get() || v.getId() >= s_->vertices.size())
    throw poplar_error("setTileMapping: vertex does not belong to this graph");
  if (tileNum >= s_->target.getNumTiles())
    throw invalid_tile_mapping("setTileMapping(vertex " + s_->vertexName(v.getId()) + ", tile " +
                               std::to_string(tileNum) + "): the target has " +
                               std::to_string(s_->target.getNumTiles()) + " tiles");
  s_->vertices[v.getId()].tile = tileNum;
}

ComputeSet Graph::addComputeSet(const DebugContext &dc) {
  s_->computeSets.push_back({dc.getPathName().empty() ? "cs" + std::to_string(s_->computeSets.size()) : dc.getPathName(), {}});
  return ComputeSet(static_cast<unsigned>(s_->computeSets.size() - 1));
}

VertexRef Graph::addVertex(ComputeSet cs, StringRef vertexType) { return addVertex(cs, vertexType, {}); }

VertexRef Graph::addVertex(ComputeSet cs, StringRef vertexType, ArrayRef<ConnectionDesc> connections) {
  if (cs.getId() >= s_->computeSets.size())
    throw poplar_error("addVertex('" + vertexType.str() + "'): compute set does not belong to this graph");
  const VertexType *vt = findVertexType(vertexType.str());
  if (!vt)
    throw unknown_vertex_type("addVertex: unknown vertex type '" + vertexType.str() +
                              "' (no codelet registers it with FOAM_HOST_VERTEX)");
  const std::string file = basename(vt->file);
  if (!s_->allCodelets && !s_->codeletFiles.count(file))
    throw unknown_vertex_type("addVertex: vertex type '" + vertexType.str() + "' is defined in '" + file +
                              "', which was not added with Graph::addCodelets");
  VertexInfo vi;
  vi.type = vt;
  vi.cs = cs.getId();
  s_->vertices.push_back(std::move(vi));
  const unsigned id = static_cast<unsigned>(s_->vertices.size() - 1);
  s_->computeSets[cs.getId()].vertices.push_back(id);
  VertexRef v(s_.get(), id);
  for (const auto &c : connections)
    connect(v[c.field], c.tensor);
  return v;
}

static const FieldDesc &fieldOf(GraphState &s, const FieldRef &f, const char *what) {
  const VertexRef &v = f.vertex();
  if (v.hostGraph() != &s || v.getId() >= s.vertices.size())
    throw poplar_error(std::string(what) + ": vertex does not belong to this graph");
  const FieldDesc *fd = s.vertices[v.getId()].type->field(f.name());
  if (!fd)
    throw unknown_field(std::string(what) + ": vertex " + s.vertexName(v.getId()) + " has no field '" + f.name() +
                        "' (fields are listed in its FOAM_HOST_VERTEX line)");
  return *fd;
}

void Graph::connect(FieldRef field, const Tensor &tensor) {
  const FieldDesc &fd = fieldOf(*s_, field, "connect");
  s_->checkTensor(tensor, "connect");
  const std::string who = "vertex " + s_->vertexName(field.vertex().getId()) + " field '" + field.name() + "'";
  if (fd.kind == FieldKind::Value)
    throw graph_connection_error("connect: " + who + " is a plain value; set it with setInitialValue");
  if (tensor.elementType() != fd.type)
    throw graph_connection_error("connect: " + who + " has element type " + fd.type.toString() + " but tensor '" +
                                 tensor.getDebugStr() + "' is " + tensor.elementType().toString());
  if (fd.kind == FieldKind::ScalarRef && tensor.numElements() != 1)
    throw graph_connection_error("connect: scalar " + who + " needs a 1-element tensor, '" + tensor.getDebugStr() +
                                 "' has " + std::to_string(tensor.numElements()));
  auto &c = s_->vertices[field.vertex().getId()].conns[field.name()];
  c.isTensor = true;
  c.tensor = tensor;
}

void Graph::setFieldValue(const FieldRef &field, const HostValue &v) {
  const FieldDesc &fd = fieldOf(*s_, field, "setInitialValue");
  if (fd.kind != FieldKind::Value)
    throw graph_connection_error("setInitialValue: vertex " + s_->vertexName(field.vertex().getId()) + " field '" +
                                 field.name() + "' is an Input/Output/InOut field; connect a tensor to it");
  auto &c = s_->vertices[field.vertex().getId()].conns[field.name()];
  c.isTensor = false;
  c.value = v;
}

void Graph::setTensorValues(const Tensor &t, const HostValue *vs, std::size_t n, bool broadcast) {
  s_->checkTensor(t, "setInitialValue");
  if (!broadcast && n != t.numElements())
    throw poplar_error("setInitialValue('" + t.getDebugStr() + "'): " + std::to_string(n) + " values for " +
                       std::to_string(t.numElements()) + " elements");
  const unsigned es = t.elementType().size();
  std::size_t k = 0;
  for (const auto &sg : t.hostData().segs) {
    Var &var = s_->vars[sg.var];
    if (var.init.empty())
      var.init.assign(var.n * es, 0);
    for (std::size_t e = sg.begin; e < sg.end; ++e, ++k)
      vs[broadcast ? 0 : k].store(var.type, &var.init[e * es]);
  }
}

void Graph::setInitialValueHalf(const Tensor &t, ArrayRef<std::uint16_t> values) {
  if (t.elementType() != HALF)
    throw poplar_error("setInitialValueHalf('" + t.getDebugStr() + "'): tensor type is " + t.elementType().toString());
  std::vector<HostValue> vs;
  for (auto b : values)
    vs.push_back(HostValue::of(half::fromBits(b)));
  setTensorValues(t, vs.data(), vs.size(), false);
}

void Graph::setPerfEstimate(const VertexRef &v, std::uint64_t cycles, std::uint64_t) {
  if (v.hostGraph() != s_.get() || v.getId() >= s_->vertices.size())
    throw poplar_error("setPerfEstimate: vertex does not belong to this graph");
  s_->vertices[v.getId()].perfCycles = cycles;
}

void Graph::createHostWrite(StringRef handle, const Tensor &t, bool) {
  s_->checkTensor(t, "createHostWrite");
  if (!s_->hostWrites.emplace(handle.str(), t).second)
    throw poplar_error("createHostWrite: handle '" + handle.str() + "' already exists");
}
static DataStream addFifo(GraphState &s, StringRef handle, const Type &type, std::size_t n, DataStreamType kind,
                          const char *what) {
  if (type.size() == 0)
    throw poplar_error(std::string(what) + "('" + handle.str() + "'): invalid element type");
  DataStream d(&s, handle.str(), type, n, kind);
  if (!s.streams.emplace(handle.str(), d).second)
    throw poplar_error(std::string(what) + ": handle '" + handle.str() + "' already exists");
  return d;
}
DataStream Graph::addHostToDeviceFIFO(StringRef handle, const Type &type, std::size_t n, const OptionFlags &) {
  return addFifo(*s_, handle, type, n, DataStreamType::HostToDeviceFIFO, "addHostToDeviceFIFO");
}
DataStream Graph::addDeviceToHostFIFO(StringRef handle, const Type &type, std::size_t n, const OptionFlags &) {
  return addFifo(*s_, handle, type, n, DataStreamType::DeviceToHostFIFO, "addDeviceToHostFIFO");
}

void Graph::createHostRead(StringRef handle, const Tensor &t, bool) {
  s_->checkTensor(t, "createHostRead");
  if (!s_->hostReads.emplace(handle.str(), t).second)
    throw poplar_error("createHostRead: handle '" + handle.str() + "' already exists");
}

} // namespace poplar
