// Host runtime: the vertex registry. FOAM_HOST_VERTEX(Type, fields...) records, for a
// codelet class, how to construct it, run it, and bind each named field into tile memory.
#ifndef POPLAR_HOST_REGISTRY_HPP
#define POPLAR_HOST_REGISTRY_HPP
#include <poplar/Vertex.hpp> // the field templates (Vertex.hpp includes this file at its end)
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <poplar/Type.hpp>
#include <string>
#include <type_traits>
#include <vector>

namespace poplar_host {

template <typename T> struct TypeOf {
  static constexpr bool known = false;
};
#define FOAM_PH_TYPEOF(C, K)                                                                                         \
  template <> struct TypeOf<C> {                                                                                     \
    static constexpr bool known = true;                                                                              \
    static constexpr poplar::Type type() { return poplar::K; }                                                       \
  };
FOAM_PH_TYPEOF(bool, BOOL)
FOAM_PH_TYPEOF(char, CHAR)
FOAM_PH_TYPEOF(signed char, CHAR)
FOAM_PH_TYPEOF(unsigned char, UNSIGNED_CHAR)
FOAM_PH_TYPEOF(short, SHORT)
FOAM_PH_TYPEOF(unsigned short, UNSIGNED_SHORT)
FOAM_PH_TYPEOF(half, HALF)
FOAM_PH_TYPEOF(int, INT)
FOAM_PH_TYPEOF(unsigned, UNSIGNED_INT)
FOAM_PH_TYPEOF(float, FLOAT)
#undef FOAM_PH_TYPEOF

enum class FieldKind { Vector, ScalarRef, Value };
enum class FieldDir { In, Out, InOut, None };

struct FieldDesc {
  std::string name;
  FieldKind kind;
  FieldDir dir;
  poplar::Type type;
  bool span = false;  // Vector: SPAN (pointer + size) rather than ONE_PTR
  unsigned align = 1; // Vector: required byte alignment of the region
  // Binds the field of the vertex object at `vertex`: a region (ptr, n elements) of
  // tile memory, or for Value fields the value's bytes at ptr.
  void (*bind)(void *vertex, void *ptr, std::size_t n) = nullptr;
  // Vertex state bytes on the IPU: SPAN 8, ONE_PTR 4, scalar reference 4, value its size rounded to 4.
  unsigned stateBytes() const {
    switch (kind) {
    case FieldKind::Vector: return span ? 8u : 4u;
    case FieldKind::ScalarRef: return 4u;
    default: return (type.size() + 3u) & ~3u;
    }
  }
};

// A vertex type's worker stack and code as measured on its host object by build.rs
// (poplar-bridge/build/codelet_costs.rs), before scaling to the IPU (Report.hpp).
struct HostMeasure {
  const char *name;
  std::uint64_t stackBytes, codeBytes;
};

struct VertexType {
  std::string name;
  std::string file; // codelet source the registration came from
  std::size_t size = 0, align = 1;
  bool multi = false;
  // On the IPU (Report.hpp): one worker's stack for compute(), and its code.
  std::uint64_t stackBytes = 0, codeBytes = 0;
  bool measured = false; // false: compiled outside build.rs, estimates used
  void (*construct)(void *) = nullptr;
  void (*destroy)(void *) = nullptr;
  bool (*run)(void *) = nullptr; // runs compute(), or compute(0..5) in worker order
  bool (*runWorker)(void *, unsigned) = nullptr; // MultiVertex only: compute(w) of one worker
  std::vector<FieldDesc> fields;
  const FieldDesc *field(const std::string &n) const {
    for (const auto &f : fields)
      if (f.name == n)
        return &f;
    return nullptr;
  }
};

struct FieldAccess {
  template <typename F, typename P> static void setPtr(F &f, P *p) { f.p_ = p; }
  template <typename F> static void setSize(F &f, std::size_t n) { f.n_ = n; }
};

template <typename F> struct FieldTraits {
  // A plain member such as `unsigned n;`: set with Graph::setInitialValue.
  static_assert(TypeOf<F>::known, "unsupported vertex field type");
  static void describe(FieldDesc &d) {
    d.kind = FieldKind::Value;
    d.dir = FieldDir::None;
    d.type = TypeOf<F>::type();
  }
  static void bind(F &f, void *p, std::size_t) { std::memcpy(&f, p, sizeof(F)); }
};

template <typename T, FieldDir D, typename Field> struct ScalarTraits {
  static_assert(TypeOf<T>::known, "unsupported scalar field element type");
  static void describe(FieldDesc &d) {
    d.kind = FieldKind::ScalarRef;
    d.dir = D;
    d.type = TypeOf<T>::type();
  }
  static void bind(Field &f, void *p, std::size_t) { FieldAccess::setPtr(f, static_cast<T *>(p)); }
};
template <typename T> struct FieldTraits<poplar::Input<T>> : ScalarTraits<T, FieldDir::In, poplar::Input<T>> {};
template <typename T> struct FieldTraits<poplar::Output<T>> : ScalarTraits<T, FieldDir::Out, poplar::Output<T>> {};
template <typename T> struct FieldTraits<poplar::InOut<T>> : ScalarTraits<T, FieldDir::InOut, poplar::InOut<T>> {};

template <typename T, poplar::VectorLayout L, unsigned A, FieldDir D, typename Field> struct VectorTraits {
  static_assert(TypeOf<T>::known, "unsupported vector field element type");
  static void describe(FieldDesc &d) {
    d.kind = FieldKind::Vector;
    d.dir = D;
    d.type = TypeOf<T>::type();
    d.span = L == poplar::VectorLayout::SPAN;
    d.align = A;
  }
  static void bind(Field &f, void *p, std::size_t n) {
    FieldAccess::setPtr(f, static_cast<T *>(p));
    if constexpr (L == poplar::VectorLayout::SPAN)
      FieldAccess::setSize(f, n);
  }
};
template <typename T, poplar::VectorLayout L, unsigned A, bool I>
struct FieldTraits<poplar::Input<poplar::Vector<T, L, A, I>>>
    : VectorTraits<T, L, A, FieldDir::In, poplar::Input<poplar::Vector<T, L, A, I>>> {};
template <typename T, poplar::VectorLayout L, unsigned A, bool I>
struct FieldTraits<poplar::Output<poplar::Vector<T, L, A, I>>>
    : VectorTraits<T, L, A, FieldDir::Out, poplar::Output<poplar::Vector<T, L, A, I>>> {};
template <typename T, poplar::VectorLayout L, unsigned A, bool I>
struct FieldTraits<poplar::InOut<poplar::Vector<T, L, A, I>>>
    : VectorTraits<T, L, A, FieldDir::InOut, poplar::InOut<poplar::Vector<T, L, A, I>>> {};

template <typename V, typename F, F V::*M> void bindMember(void *obj, void *p, std::size_t n) {
  FieldTraits<F>::bind(static_cast<V *>(obj)->*M, p, n);
}
template <typename V, typename F, F V::*M> FieldDesc makeField(const char *name) {
  FieldDesc d;
  d.name = name;
  FieldTraits<F>::describe(d);
  d.bind = &bindMember<V, F, M>;
  return d;
}

template <typename V> bool callCompute(V &v) {
  if constexpr (std::is_void<decltype(v.compute())>::value) {
    v.compute();
    return true;
  } else {
    return v.compute();
  }
}
template <typename V> bool callCompute(V &v, unsigned w) {
  if constexpr (std::is_void<decltype(v.compute(w))>::value) {
    v.compute(w);
    return true;
  } else {
    return v.compute(w);
  }
}
// runVertex runs a MultiVertex's workers one after another in worker order; the
// engine instead runs a tile's lone MultiVertex as six jobs on its pool (see README,
// "workers") — codelets must not wait for each other.
template <typename V> bool runVertex(void *obj) {
  V &v = *static_cast<V *>(obj);
  if constexpr (std::is_base_of<poplar::MultiVertex, V>::value) {
    bool ok = true;
    for (unsigned w = 0; w < poplar::MultiVertex::numWorkers(); ++w)
      ok = callCompute(v, w) && ok;
    return ok;
  } else {
    return callCompute(v);
  }
}

template <typename V> bool runWorker(void *obj, unsigned w) {
  if constexpr (std::is_base_of<poplar::MultiVertex, V>::value)
    return callCompute(*static_cast<V *>(obj), w);
  else
    return w == 0 && callCompute(*static_cast<V *>(obj));
}

template <typename V> VertexType makeVertexType(const char *name, const char *file, std::vector<FieldDesc> fields) {
  static_assert(std::is_base_of<poplar::Vertex, V>::value || std::is_base_of<poplar::MultiVertex, V>::value,
                "a codelet derives from poplar::Vertex or poplar::MultiVertex");
  VertexType t;
  t.name = name;
  t.file = file;
  t.size = sizeof(V);
  t.align = alignof(V);
  t.multi = std::is_base_of<poplar::MultiVertex, V>::value;
  t.construct = [](void *p) { new (p) V(); };
  t.destroy = [](void *p) { static_cast<V *>(p)->~V(); };
  t.run = &runVertex<V>;
  t.runWorker = &runWorker<V>;
  t.fields = std::move(fields);
  return t;
}

void registerVertexType(VertexType t);
// nullptr when unknown. Throws poplar::unknown_vertex_type when two codelet files register the name.
const VertexType *findVertexType(const std::string &name);
// Basenames of the codelet sources compiled into this build (generated by build.rs)
// or linked into the program beside it (their registrations name them).
const std::vector<std::string> &compiledCodeletFiles();
// Every registered vertex type, by name.
std::vector<const VertexType *> registeredVertexTypes();

struct Registrar {
  explicit Registrar(VertexType t) { registerVertexType(std::move(t)); }
};

} // namespace poplar_host

#define FOAM_PH_CAT_(a, b) a##b
#define FOAM_PH_CAT(a, b) FOAM_PH_CAT_(a, b)
#define FOAM_PH_FIELD(V, f) ::poplar_host::makeField<V, decltype(V::f), &V::f>(#f)
#define FOAM_PH_NARGS(...) FOAM_PH_NARGS_(__VA_ARGS__, 40, 39, 38, 37, 36, 35, 34, 33, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define FOAM_PH_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, _33, _34, _35, _36, _37, _38, _39, _40, N, ...) N
#define FOAM_PH_F1(V, a) FOAM_PH_FIELD(V, a)
#define FOAM_PH_F2(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F1(V, __VA_ARGS__)
#define FOAM_PH_F3(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F2(V, __VA_ARGS__)
#define FOAM_PH_F4(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F3(V, __VA_ARGS__)
#define FOAM_PH_F5(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F4(V, __VA_ARGS__)
#define FOAM_PH_F6(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F5(V, __VA_ARGS__)
#define FOAM_PH_F7(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F6(V, __VA_ARGS__)
#define FOAM_PH_F8(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F7(V, __VA_ARGS__)
#define FOAM_PH_F9(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F8(V, __VA_ARGS__)
#define FOAM_PH_F10(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F9(V, __VA_ARGS__)
#define FOAM_PH_F11(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F10(V, __VA_ARGS__)
#define FOAM_PH_F12(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F11(V, __VA_ARGS__)
#define FOAM_PH_F13(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F12(V, __VA_ARGS__)
#define FOAM_PH_F14(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F13(V, __VA_ARGS__)
#define FOAM_PH_F15(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F14(V, __VA_ARGS__)
#define FOAM_PH_F16(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F15(V, __VA_ARGS__)
#define FOAM_PH_F17(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F16(V, __VA_ARGS__)
#define FOAM_PH_F18(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F17(V, __VA_ARGS__)
#define FOAM_PH_F19(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F18(V, __VA_ARGS__)
#define FOAM_PH_F20(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F19(V, __VA_ARGS__)
#define FOAM_PH_F21(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F20(V, __VA_ARGS__)
#define FOAM_PH_F22(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F21(V, __VA_ARGS__)
#define FOAM_PH_F23(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F22(V, __VA_ARGS__)
#define FOAM_PH_F24(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F23(V, __VA_ARGS__)
#define FOAM_PH_F25(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F24(V, __VA_ARGS__)
#define FOAM_PH_F26(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F25(V, __VA_ARGS__)
#define FOAM_PH_F27(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F26(V, __VA_ARGS__)
#define FOAM_PH_F28(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F27(V, __VA_ARGS__)
#define FOAM_PH_F29(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F28(V, __VA_ARGS__)
#define FOAM_PH_F30(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F29(V, __VA_ARGS__)
#define FOAM_PH_F31(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F30(V, __VA_ARGS__)
#define FOAM_PH_F32(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F31(V, __VA_ARGS__)
#define FOAM_PH_F33(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F32(V, __VA_ARGS__)
#define FOAM_PH_F34(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F33(V, __VA_ARGS__)
#define FOAM_PH_F35(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F34(V, __VA_ARGS__)
#define FOAM_PH_F36(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F35(V, __VA_ARGS__)
#define FOAM_PH_F37(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F36(V, __VA_ARGS__)
#define FOAM_PH_F38(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F37(V, __VA_ARGS__)
#define FOAM_PH_F39(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F38(V, __VA_ARGS__)
#define FOAM_PH_F40(V, a, ...) FOAM_PH_FIELD(V, a), FOAM_PH_F39(V, __VA_ARGS__)
#define FOAM_PH_FIELDS(V, ...) FOAM_PH_CAT(FOAM_PH_F, FOAM_PH_NARGS(__VA_ARGS__))(V, __VA_ARGS__)

// Registers codelet class V (derived from poplar::Vertex or poplar::MultiVertex) and
// its fields (1 to 40 names) with the host runtime. Use once per vertex class, at
// namespace scope, under #ifndef __POPC__ (popc defines __POPC__ for every target it
// compiles for, __IPU__ only for IPU targets).
#define FOAM_HOST_VERTEX(V, ...)                                                                                     \
  static const ::poplar_host::Registrar FOAM_PH_CAT(foam_host_vertex_registrar_, V){                                 \
      ::poplar_host::makeVertexType<V>(#V, __FILE__, {FOAM_PH_FIELDS(V, __VA_ARGS__)})};

#endif
