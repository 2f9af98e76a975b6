// Host runtime internals: what a poplar::Graph records before an Engine lays it out.
#ifndef POPLAR_HOST_STATE_HPP
#define POPLAR_HOST_STATE_HPP
#include <cstdint>
#include <map>
#include <memory>
#include <poplar/DataStream.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>
#include <poplar_host/registry.hpp>
#include <poplar_host/value.hpp>
#include <set>
#include <string>
#include <vector>

namespace poplar_host {

// Which tile each element range of a variable is mapped to; later mappings override.
class TileIntervals {
public:
  void assign(std::size_t b, std::size_t e, unsigned tile);
  // (begin, end, tile), ascending.
  const std::map<std::size_t, std::pair<std::size_t, unsigned>> &ranges() const { return m_; }

private:
  std::map<std::size_t, std::pair<std::size_t, unsigned>> m_;
};

struct Var {
  poplar::Type type;
  std::size_t n = 0;
  std::string name;
  bool isConst = false;
  TileIntervals mapping;
  std::vector<std::uint8_t> init; // empty: zero-filled at load
};

struct Conn {
  bool isTensor = false;
  poplar::Tensor tensor;
  HostValue value{HostValue::Kind::Int};
};

struct VertexInfo {
  const VertexType *type = nullptr;
  unsigned cs = 0;
  long tile = -1;
  std::map<std::string, Conn> conns;
  std::uint64_t perfCycles = 0;
};

struct ComputeSetInfo {
  std::string name;
  std::vector<unsigned> vertices;
};

struct GraphState {
  poplar::Target target;
  std::vector<Var> vars;
  std::vector<VertexInfo> vertices;
  std::vector<ComputeSetInfo> computeSets;
  std::map<std::string, poplar::Tensor> hostWrites, hostReads;
  std::map<std::string, poplar::DataStream> streams;
  std::set<std::string> codeletFiles; // basenames added with addCodelets
  bool allCodelets = false;           // the build's codelet bundle was added
  // The graph this one was copied from (an Engine built from a const Graph&): its
  // tensors and streams are this graph's too.
  const GraphState *origin = nullptr;

  std::string vertexName(unsigned v) const;
  bool owns(const GraphState *g) const { return g == this || (g && g == origin); }
  void checkTensor(const poplar::Tensor &t, const char *what) const;
};

enum class ProgKind { Sequence, Execute, Copy, StreamCopy, PrintTensor, Repeat, RepeatWhileTrue, Sync };

struct ProgNode {
  ProgKind kind;
  std::string name; // debug name; PrintTensor: its title
  std::vector<poplar::program::Program> children; // Sequence; Repeat: body; RWT: cond, body
  unsigned cs = 0;
  unsigned count = 0;
  // Copy: src, dst; StreamCopy: a (to the stream) or b (from it); PrintTensor: a;
  // RWT: a = predicate
  poplar::Tensor a, b;
  poplar::DataStream stream;
};

std::string tileList(const std::vector<unsigned> &tiles);

} // namespace poplar_host
#endif
