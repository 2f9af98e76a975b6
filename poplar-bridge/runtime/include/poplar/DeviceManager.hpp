// Host runtime of the Poplar API subset: poplar::DeviceManager.
// There is no IPU hardware behind the host runtime: getDevices(TargetType::IPU, n)
// returns no devices, exactly as the SDK does on a machine without IPUs, so code that
// falls back to the IPU model behaves the same here and there. IPU_MODEL and CPU return
// one host device (an n-IPU Mk2 model, or the 1-tile CPU target).
#ifndef POPLAR_DEVICEMANAGER_HPP
#define POPLAR_DEVICEMANAGER_HPP
#include <poplar/Device.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/TargetType.hpp>
#include <vector>

namespace poplar {

class DeviceManager {
public:
  static DeviceManager createDeviceManager() { return DeviceManager(); }
  std::vector<Device> getDevices(TargetType type, unsigned requiredNumIPUs, const OptionFlags &opts = {}) const;
  std::vector<Device> getDevices(const OptionFlags &opts = {}) const;
  std::size_t getNumDevices() const { return 0; }
};

} // namespace poplar
#endif
