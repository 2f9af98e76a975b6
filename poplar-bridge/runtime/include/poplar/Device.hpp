// Host runtime of the Poplar API subset: poplar::Device. Every device of the host runtime
// is the same in-process machine executing the graph with the rules of its Target.
#ifndef POPLAR_DEVICE_HPP
#define POPLAR_DEVICE_HPP
#include <poplar/OptionFlags.hpp>
#include <poplar/Target.hpp>

namespace poplar {

class Device {
public:
  Device() = default;
  Device(Device &&) noexcept = default;
  Device &operator=(Device &&) noexcept = default;
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  bool attach() const {
    attached_ = true;
    return true;
  }
  void detach() const { attached_ = false; }
  const Target &getTarget() const { return target_; }
  unsigned getId() const { return id_; }
  bool isAttached() const { return attached_; }

  static Device createCPUDevice(unsigned numIPUs = 1);
  static Device createSimulatorDevice(const Target &target, const OptionFlags &opts = {});
  // Host runtime only.
  static Device hostDevice(const Target &target, unsigned id);

private:
  Target target_;
  unsigned id_ = 0;
  mutable bool attached_ = false;
};

} // namespace poplar
#endif
