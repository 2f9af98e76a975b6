// Frame start: state tensors are zeroed on the device, so a new frame costs no
// host transfer beyond the camera record (and, for a camera the injectors do not
// hold, its camera regions and block lists). Runs only when the device is drained.
#include <poplar/Vertex.hpp>

#include <string.h>

#include "foam/codelet.h"

using namespace poplar;

class ZeroBytes : public Vertex {
public:
  InOut<Vector<unsigned char, VectorLayout::SPAN, 4>> data;

  bool compute() {
    memset(&data[0], 0, data.size());
    return true;
  }
};

class ZeroWords : public Vertex {
public:
  InOut<Vector<unsigned, VectorLayout::SPAN, 4>> data;

  bool compute() {
    memset(&data[0], 0, data.size() * sizeof(unsigned));
    return true;
  }
};

FOAM_STACK(ZeroBytes);
FOAM_STACK(ZeroWords);

#ifndef __POPC__
FOAM_HOST_VERTEX(ZeroBytes, data)
FOAM_HOST_VERTEX(ZeroWords, data)
#endif
