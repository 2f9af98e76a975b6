// Host runtime of the Poplar API subset: poplar::IPUModel. Its device runs on the host
// runtime with the model's tile count and memory.
#ifndef POPLAR_IPUMODEL_HPP
#define POPLAR_IPUMODEL_HPP
#include <limits>
#include <string>
#include <poplar/Device.hpp>
#include <poplar/OptionFlags.hpp>

namespace poplar {

class IPUModel {
public:
  explicit IPUModel(const char *ipuVersion = "ipu2");
  Device createDevice(OptionFlags opts = {}, bool accurateHalf = false,
                      unsigned deviceManagerId = std::numeric_limits<unsigned>::max()) const;

  // The host runtime models no sync latency, which is what NO_DELAY asks for.
  enum class RelativeSyncDelayType { NO_DELAY };

  unsigned numIPUs = 1;
  unsigned tilesPerIPU = 1472;
  unsigned memoryPerTile = 638976;
  bool compileIPUCode = false;
  // Accepted for programs that set them (the tutorials do); they change nothing here.
  unsigned minIPUSyncDelay = 0;
  RelativeSyncDelayType relativeSyncDelay = RelativeSyncDelayType::NO_DELAY;

private:
  std::string version_;
};

} // namespace poplar
#endif
