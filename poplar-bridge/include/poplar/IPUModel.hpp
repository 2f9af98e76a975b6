// Host runtime of the Poplar API subset: poplar::IPUModel. Its device runs on the host
// runtime with the model's tile count and memory.
#ifndef POPLAR_IPUMODEL_HPP
#define POPLAR_IPUMODEL_HPP
#include <limits>
#include <poplar/Device.hpp>
#include <poplar/OptionFlags.hpp>

namespace poplar {

class IPUModel {
public:
  explicit IPUModel(const char *ipuVersion = "ipu2");
  Device createDevice(OptionFlags opts = {}, bool accurateHalf = false,
                      unsigned deviceManagerId = std::numeric_limits<unsigned>::max()) const;

  unsigned numIPUs = 1;
  unsigned tilesPerIPU = 1472;
  unsigned memoryPerTile = 638976;
  bool compileIPUCode = false;

private:
  std::string version_;
};

} // namespace poplar
#endif
