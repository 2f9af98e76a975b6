// Codelets for the host runtime's own tests (compiled in with feature `selftest`).
// Written as IPU codelets: they compile unchanged with popc.
#include <poplar/Vertex.hpp>

using namespace poplar;

// Token ring step: count the visit and fold the tile id into a running hash.
class TestTokenStep : public Vertex {
public:
  InOut<Vector<unsigned>> token;
  unsigned tileId;
  bool compute() {
    token[0] = token[0] + 1;
    token[1] = token[1] * 31u + tileId;
    token[2] = tileId;
    return true;
  }
};

// Each worker sums its own disjoint range of `in` into partials[workerId]: correct with
// workers run serially (host) or concurrently (IPU), needs no barrier.
class TestPartialSum : public MultiVertex {
public:
  Input<Vector<float>> in;
  Output<Vector<float, VectorLayout::ONE_PTR>> partials;
  bool compute(unsigned workerId) {
    const unsigned n = in.size();
    const unsigned b = n * workerId / numWorkers(), e = n * (workerId + 1) / numWorkers();
    float s = 0.0f;
    for (unsigned i = b; i < e; ++i)
      s += in[i];
    partials[workerId] = s;
    return true;
  }
};

// Sums gathered partials in index order: one deterministic answer.
class TestSum : public Vertex {
public:
  Input<Vector<float>> in;
  Output<float> out;
  bool compute() {
    float s = 0.0f;
    for (float x : in)
      s += x;
    *out = s;
    return true;
  }
};

// Shows the host runtime's worker order: each worker records how many workers ran
// before it. Racy on hardware; only the runtime's tests use it.
class TestWorkerOrder : public MultiVertex {
public:
  InOut<Vector<unsigned>> seen;
  bool compute(unsigned workerId) {
    unsigned before = 0;
    for (unsigned i = 0; i < seen.size(); ++i)
      before += seen[i] != 0u ? 1u : 0u;
    seen[workerId] = before + 1u;
    return true;
  }
};

// Loop condition computed on the device: count up and say whether to go on.
class TestCountBelow : public Vertex {
public:
  InOut<unsigned> counter;
  Input<unsigned> limit;
  Output<bool> more;
  bool compute() {
    *counter = counter + 1u;
    *more = *counter < limit;
    return true;
  }
};

// Half arithmetic goes through float.
class TestHalfScale : public Vertex {
public:
  InOut<Vector<half>> v;
  float scale;
  bool compute() {
    for (unsigned i = 0; i < v.size(); ++i)
      v[i] = v[i] * scale;
    return true;
  }
};

// The cheapest useful vertex: the per-vertex overhead benchmark runs thousands.
class TestIncrement : public Vertex {
public:
  InOut<unsigned> x;
  bool compute() {
    *x = *x + 1u;
    return true;
  }
};

// Fails on purpose when told to.
class TestFailIf : public Vertex {
public:
  Input<unsigned> fail;
  bool compute() { return fail == 0u; }
};

// Dot product of two vectors; the test programs connect b to data spread over
// other tiles, so the runtime exchanges it in.
class TestDot : public Vertex {
public:
  Input<Vector<float>> a;
  Input<Vector<float>> b;
  Output<float> out;
  bool compute() {
    float s = 0.0f;
    for (unsigned i = 0; i < a.size(); ++i)
      s += a[i] * b[i];
    *out = s;
    return true;
  }
};

// acc[i] += in[i]: an InOut field, exchanged in and back out when it lives elsewhere.
class TestAccumulate : public Vertex {
public:
  Input<Vector<int>> in;
  InOut<Vector<int>> acc;
  bool compute() {
    for (unsigned i = 0; i < acc.size(); ++i)
      acc[i] += in[i];
    return true;
  }
};

// Writes value + index into every element of out.
class TestFill : public Vertex {
public:
  Output<Vector<unsigned>> out;
  unsigned value;
  bool compute() {
    for (unsigned i = 0; i < out.size(); ++i)
      out[i] = value + i;
    return true;
  }
};

#ifndef __POPC__
FOAM_HOST_VERTEX(TestTokenStep, token, tileId)
FOAM_HOST_VERTEX(TestPartialSum, in, partials)
FOAM_HOST_VERTEX(TestSum, in, out)
FOAM_HOST_VERTEX(TestWorkerOrder, seen)
FOAM_HOST_VERTEX(TestCountBelow, counter, limit, more)
FOAM_HOST_VERTEX(TestHalfScale, v, scale)
FOAM_HOST_VERTEX(TestIncrement, x)
FOAM_HOST_VERTEX(TestFailIf, fail)
FOAM_HOST_VERTEX(TestDot, a, b, out)
FOAM_HOST_VERTEX(TestAccumulate, in, acc)
FOAM_HOST_VERTEX(TestFill, out, value)
#endif
