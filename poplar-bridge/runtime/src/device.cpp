// Targets and devices of the host runtime (see DeviceManager.hpp for what getDevices returns).
#include <poplar/Device.hpp>
#include <poplar/DeviceManager.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/Target.hpp>
#include <poplar/exceptions.hpp>

namespace poplar {

namespace {
struct IpuKind {
  const char *arch;
  unsigned tilesPerIPU, bytesPerTile;
  double clockHz;
};
IpuKind ipuKind(const std::string &system) {
  if (system == "ipu1")
    return {"ipu1", 1216, 262144, 1.6e9};
  if (system == "ipu21")
    return {"ipu21", 1472, 638976, 1.85e9};
  if (system == "ipu2" || system.rfind("IPU-POD", 0) == 0 || system.rfind("IPU-M", 0) == 0 || system == "_TEST_SYSTEM")
    return {"ipu2", 1472, 638976, 1.33e9};
  throw poplar_error("unknown IPU system type '" + system + "' (the host runtime models ipu1, ipu2 and ipu21)");
}
} // namespace

Target Target::hostModel(TargetType type, const std::string &system, const std::string &arch, unsigned numIPUs,
                         unsigned tilesPerIPU, unsigned bytesPerTile, double clockHz) {
  if (numIPUs == 0 || tilesPerIPU == 0)
    throw poplar_error("a target needs at least one IPU and one tile per IPU");
  Target t;
  t.type_ = type;
  t.system_ = system;
  t.arch_ = arch;
  t.numIPUs_ = numIPUs;
  t.tilesPerIPU_ = tilesPerIPU;
  t.bytesPerTile_ = bytesPerTile;
  t.clockHz_ = clockHz;
  return t;
}

Target Target::createIPUTarget(unsigned numIPUs, StringRef systemType, const OptionFlags &) {
  const IpuKind k = ipuKind(systemType.str());
  return hostModel(TargetType::IPU, systemType.str(), k.arch, numIPUs, k.tilesPerIPU, k.bytesPerTile, k.clockHz);
}
Target Target::createIPUTarget(unsigned numIPUs, unsigned tilesPerIPU, StringRef systemType, const OptionFlags &) {
  const IpuKind k = ipuKind(systemType.str());
  return hostModel(TargetType::IPU, systemType.str(), k.arch, numIPUs, tilesPerIPU, k.bytesPerTile, k.clockHz);
}
Target Target::createCPUTarget(bool, unsigned numIPUs) {
  // Poplar's CPU target is one tile per IPU with effectively unlimited memory.
  return hostModel(TargetType::CPU, "cpu", "cpu", numIPUs, 1, 0xffffffffu, 1.33e9);
}

Device Device::hostDevice(const Target &target, unsigned id) {
  Device d;
  d.target_ = target;
  d.id_ = id;
  return d;
}
Device Device::createCPUDevice(unsigned numIPUs) { return hostDevice(Target::createCPUTarget(false, numIPUs), 0); }
Device Device::createSimulatorDevice(const Target &target, const OptionFlags &) { return hostDevice(target, 0); }

std::vector<Device> DeviceManager::getDevices(TargetType type, unsigned requiredNumIPUs, const OptionFlags &) const {
  std::vector<Device> r;
  if (type == TargetType::IPU_MODEL) {
    IPUModel model("ipu2");
    model.numIPUs = requiredNumIPUs ? requiredNumIPUs : 1;
    r.push_back(model.createDevice());
  }
  else if (type == TargetType::CPU)
    r.push_back(Device::createCPUDevice(requiredNumIPUs ? requiredNumIPUs : 1));
  return r; // TargetType::IPU: no hardware behind the host runtime
}
std::vector<Device> DeviceManager::getDevices(const OptionFlags &) const { return {}; }

IPUModel::IPUModel(const char *ipuVersion) : version_(ipuVersion ? ipuVersion : "ipu2") {
  const IpuKind k = ipuKind(version_);
  tilesPerIPU = k.tilesPerIPU;
  memoryPerTile = k.bytesPerTile;
}

Device IPUModel::createDevice(OptionFlags, bool, unsigned) const {
  const IpuKind k = ipuKind(version_);
  return Device::hostDevice(
      Target::hostModel(TargetType::IPU_MODEL, version_, k.arch, numIPUs, tilesPerIPU, memoryPerTile, k.clockHz), 0);
}

} // namespace poplar
