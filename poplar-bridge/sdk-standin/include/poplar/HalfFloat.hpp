// Stand-in for the Poplar SDK's codelet header (see ../../README.md): `half`, the
// 16-bit float type codelets compute with. On an IPU target it is the processor's
// own type; for the CPU target (the IPU Model) a class converting through float.
#ifndef FOAM_STANDIN_POPLAR_HALFFLOAT_HPP
#define FOAM_STANDIN_POPLAR_HALFFLOAT_HPP

#ifndef __POPC__
#error "stand-in SDK header: compile as popc does (-D__POPC__, and -D__IPU__ for an IPU target)"
#endif

#ifdef __IPU__
using half = _Float16;
#else
class half {
public:
  half() = default;
  half(float f);
  operator float() const;

private:
  unsigned short bits_;
};
#endif

#endif
