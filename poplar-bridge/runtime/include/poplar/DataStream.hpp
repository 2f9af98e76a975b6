// Host runtime of the Poplar API subset: poplar::DataStream, a FIFO between the host
// and the device (Graph::addHostToDeviceFIFO / addDeviceToHostFIFO) that Copy programs
// read or fill and Engine::connectStream ties to host memory.
#ifndef POPLAR_DATASTREAM_HPP
#define POPLAR_DATASTREAM_HPP
#include <cstddef>
#include <poplar/Type.hpp>
#include <string>

namespace poplar_host {
struct GraphState;
}

namespace poplar {

enum class DataStreamType { HostToDeviceFIFO, DeviceToHostFIFO };

class DataStream {
public:
  DataStream() = default;
  DataStream(const poplar_host::GraphState *g, std::string handle, Type type, std::size_t n, DataStreamType kind)
      : g_(g), handle_(std::move(handle)), type_(type), n_(n), kind_(kind) {}
  const std::string &handle() const { return handle_; }
  Type elementType() const { return type_; }
  std::size_t numElements() const { return n_; }
  DataStreamType type() const { return kind_; }
  const poplar_host::GraphState *hostGraph() const { return g_; } // host runtime only

private:
  const poplar_host::GraphState *g_ = nullptr;
  std::string handle_;
  Type type_;
  std::size_t n_ = 0;
  DataStreamType kind_ = DataStreamType::HostToDeviceFIFO;
};

} // namespace poplar
#endif
