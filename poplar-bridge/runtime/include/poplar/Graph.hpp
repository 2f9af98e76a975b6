// Host runtime of the Poplar API subset: poplar::Graph.
#ifndef POPLAR_GRAPH_HPP
#define POPLAR_GRAPH_HPP
#include <cstdint>
#include <memory>
#include <poplar/ArrayRef.hpp>
#include <poplar/DataStream.hpp>
#include <poplar/DebugContext.hpp>
#include <poplar/Device.hpp>
#include <poplar/Interval.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/StringRef.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/Type.hpp>
#include <poplar/exceptions.hpp>
#include <poplar_host/half.hpp>
#include <poplar_host/value.hpp>
#include <string>
#include <type_traits>
#include <vector>

namespace poplar {

enum class CodeletFileType { PreprocessedAsmSource, AsmSource, CSource, CppSource, IrSource, Object, Auto };

class ComputeSet {
public:
  ComputeSet() = default;
  explicit ComputeSet(unsigned id) : id_(id) {}
  unsigned getId() const { return id_; }

private:
  unsigned id_ = ~0u;
};

class FieldRef;

class VertexRef {
public:
  VertexRef() = default;
  VertexRef(const poplar_host::GraphState *g, unsigned id) : g_(g), id_(id) {}
  FieldRef operator[](StringRef fieldName) const;
  unsigned getId() const { return id_; }
  const poplar_host::GraphState *hostGraph() const { return g_; } // host runtime only

private:
  const poplar_host::GraphState *g_ = nullptr;
  unsigned id_ = ~0u;
};

class FieldRef {
public:
  FieldRef(VertexRef v, std::string name) : v_(v), name_(std::move(name)) {}
  const VertexRef &vertex() const { return v_; }
  const std::string &name() const { return name_; }

private:
  VertexRef v_;
  std::string name_;
};

inline FieldRef VertexRef::operator[](StringRef fieldName) const { return FieldRef(*this, fieldName.str()); }

class Graph {
public:
  struct ConnectionDesc {
    std::string field;
    Tensor tensor;
    ConnectionDesc(StringRef f, Tensor t) : field(f.str()), tensor(std::move(t)) {}
  };

  // Element intervals of a tensor (in its flattened order) held by each tile.
  using TileToTensorMapping = std::vector<std::vector<Interval>>;

  explicit Graph(const Target &target);
  explicit Graph(const Device &device);
  Graph(Graph &&) noexcept;
  Graph &operator=(Graph &&) noexcept;
  ~Graph();

  const Target &getTarget() const;

  bool addCodelets(StringRef src, CodeletFileType type = CodeletFileType::Auto, StringRef compileFlags = "",
                   StringRef targetName = "");

  Tensor addVariable(const Type &type, ArrayRef<std::size_t> shape, const DebugContext &debugContext = {});

  template <typename T>
  Tensor addConstant(const Type &type, ArrayRef<std::size_t> shape, ArrayRef<T> values,
                     const DebugContext &debugContext = {"<const>"}) {
    Tensor t = addConstantStorage(type, shape, debugContext);
    setInitialValue<T>(t, values);
    return t;
  }
  template <typename T, typename = typename std::enable_if<poplar_host::IsHostValue<T>::value>::type>
  Tensor addConstant(const Type &type, ArrayRef<std::size_t> shape, T val,
                     const DebugContext &debugContext = {"<const>"}) {
    Tensor t = addConstantStorage(type, shape, debugContext);
    setInitialValue(t, val);
    return t;
  }

  void setTileMapping(const Tensor &t, unsigned tileNum);
  void setTileMapping(VertexRef v, unsigned tileNum);
  // Throws if some element of `t` is mapped to no tile.
  TileToTensorMapping getTileMapping(const Tensor &t) const;

  ComputeSet addComputeSet(const DebugContext &debugContext = {});
  VertexRef addVertex(ComputeSet cs, StringRef vertexType);
  VertexRef addVertex(ComputeSet cs, StringRef vertexType, ArrayRef<ConnectionDesc> connections);
  void connect(FieldRef field, const Tensor &tensor);

  // A plain (non-Input/Output) field, or a scalar Input field, given a fixed value.
  template <typename T, typename = typename std::enable_if<poplar_host::IsHostValue<T>::value>::type>
  void setInitialValue(FieldRef field, T val) {
    setFieldValue(field, poplar_host::HostValue::of(val));
  }
  template <typename T, typename = typename std::enable_if<poplar_host::IsHostValue<T>::value>::type>
  void setInitialValue(const Tensor &t, T val) {
    const auto v = poplar_host::HostValue::of(val);
    setTensorValues(t, &v, 1, true);
  }
  template <typename T> void setInitialValue(const Tensor &t, ArrayRef<T> values) {
    static_assert(poplar_host::IsHostValue<T>::value, "setInitialValue: unsupported element type");
    std::vector<poplar_host::HostValue> vs;
    vs.reserve(values.size());
    for (const T &v : values)
      vs.push_back(poplar_host::HostValue::of(v));
    setTensorValues(t, vs.data(), vs.size(), false);
  }
  void setInitialValueHalf(const Tensor &t, ArrayRef<std::uint16_t> values);

  void setPerfEstimate(const VertexRef &v, std::uint64_t cycles, std::uint64_t flops = 0);

  void createHostWrite(StringRef handle, const Tensor &t, bool rearrangeOnHost = false);
  void createHostRead(StringRef handle, const Tensor &t, bool rearrangeOnHost = false);

  // FIFOs between host and device of numElements elements per Copy.
  DataStream addHostToDeviceFIFO(StringRef handle, const Type &elementType, std::size_t numElements,
                                 const OptionFlags &options = {});
  DataStream addDeviceToHostFIFO(StringRef handle, const Type &elementType, std::size_t numElements,
                                 const OptionFlags &options = {});

  poplar_host::GraphState &hostState() const { return *s_; }                  // host runtime only
  std::unique_ptr<poplar_host::GraphState> &hostStatePtr() { return s_; }     // host runtime only

private:
  Tensor addConstantStorage(const Type &type, ArrayRef<std::size_t> shape, const DebugContext &dc);
  void setFieldValue(const FieldRef &field, const poplar_host::HostValue &v);
  void setTensorValues(const Tensor &t, const poplar_host::HostValue *vs, std::size_t n, bool broadcast);
  std::unique_ptr<poplar_host::GraphState> s_;
};

} // namespace poplar
#endif
