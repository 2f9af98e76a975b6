#ifndef POPLAR_TARGETTYPE_HPP
#define POPLAR_TARGETTYPE_HPP
namespace poplar {
enum class TargetType { IPU, IPU_MODEL, CPU };
}
#endif
