// Host runtime of the Poplar API subset: poplar::Target, the machine a graph is built
// for. Mk2 (ipu2) facts: 1472 tiles per IPU, 638,976 bytes per tile, 6 workers, 1.33 GHz.
#ifndef POPLAR_TARGET_HPP
#define POPLAR_TARGET_HPP
#include <poplar/OptionFlags.hpp>
#include <poplar/StringRef.hpp>
#include <poplar/TargetType.hpp>
#include <poplar/Type.hpp>
#include <string>

namespace poplar {

class Target {
public:
  Target() = default;
  // systemType: "ipu2" (also any "IPU-POD*"/"_TEST_SYSTEM" name, modelled as Mk2) or "ipu1".
  static Target createIPUTarget(unsigned numIPUs, StringRef systemType, const OptionFlags &opts = {});
  static Target createIPUTarget(unsigned numIPUs, unsigned tilesPerIPU, StringRef systemType,
                                const OptionFlags &opts = {});
  static Target createCPUTarget(bool accurateHalf = false, unsigned numIPUs = 1);

  TargetType getTargetType() const { return type_; }
  const std::string &getTargetSystemString() const { return system_; }
  // The processor the code is compiled for: "ipu1", "ipu2" or "ipu21"; "cpu" for
  // the CPU target. An IPU Model reports the IPU it models.
  const std::string &getTargetArchString() const { return arch_; }
  unsigned getNumIPUs() const { return numIPUs_; }
  unsigned getTilesPerIPU() const { return tilesPerIPU_; }
  unsigned getNumTiles() const { return numIPUs_ * tilesPerIPU_; }
  unsigned getNumWorkerContexts() const { return 6; }
  unsigned getBytesPerTile() const { return bytesPerTile_; }
  std::uint64_t getMemoryBytes() const { return std::uint64_t(bytesPerTile_) * getNumTiles(); }
  double getTileClockFrequency() const { return clockHz_; }
  unsigned getTypeSize(const Type &t) const { return t.size(); }
  unsigned getDataPathWidth() const { return 64; }
  unsigned getExchangeBytesPerCycle() const { return 4; }

  // Host runtime only: the IPU model an IPUModel/Device builds on.
  static Target hostModel(TargetType type, const std::string &system, const std::string &arch, unsigned numIPUs,
                          unsigned tilesPerIPU, unsigned bytesPerTile, double clockHz);

private:
  TargetType type_ = TargetType::IPU;
  std::string system_ = "ipu2";
  std::string arch_ = "ipu2";
  unsigned numIPUs_ = 1;
  unsigned tilesPerIPU_ = 1472;
  unsigned bytesPerTile_ = 638976;
  double clockHz_ = 1.33e9;
};

} // namespace poplar
#endif
