// Host runtime of the Poplar API subset: poplar::Type and the element type constants.
#ifndef POPLAR_TYPE_HPP
#define POPLAR_TYPE_HPP
#include <cstdint>
#include <string>

namespace poplar_host {
enum class TypeKind : std::uint8_t { Invalid, Bool, Char, UnsignedChar, Short, UnsignedShort, Half, Int, UnsignedInt, Float };
}

namespace poplar {

class Type {
public:
  constexpr Type() = default;
  constexpr explicit Type(poplar_host::TypeKind k) : k_(k) {}
  std::string toString() const {
    switch (k_) {
    case poplar_host::TypeKind::Bool: return "bool";
    case poplar_host::TypeKind::Char: return "char";
    case poplar_host::TypeKind::UnsignedChar: return "unsigned char";
    case poplar_host::TypeKind::Short: return "short";
    case poplar_host::TypeKind::UnsignedShort: return "unsigned short";
    case poplar_host::TypeKind::Half: return "half";
    case poplar_host::TypeKind::Int: return "int";
    case poplar_host::TypeKind::UnsignedInt: return "unsigned int";
    case poplar_host::TypeKind::Float: return "float";
    default: return "<invalid type>";
    }
  }
  constexpr bool operator==(const Type &o) const { return k_ == o.k_; }
  constexpr bool operator!=(const Type &o) const { return k_ != o.k_; }
  constexpr bool operator<(const Type &o) const { return k_ < o.k_; }
  constexpr poplar_host::TypeKind kind() const { return k_; }
  // Bytes per element on the IPU (the same for every target the runtime models).
  // One expression: the public headers compile as C++11, as Poplar programs do.
  constexpr unsigned size() const {
    return k_ == poplar_host::TypeKind::Bool || k_ == poplar_host::TypeKind::Char ||
                   k_ == poplar_host::TypeKind::UnsignedChar
               ? 1
           : k_ == poplar_host::TypeKind::Short || k_ == poplar_host::TypeKind::UnsignedShort ||
                   k_ == poplar_host::TypeKind::Half
               ? 2
           : k_ == poplar_host::TypeKind::Int || k_ == poplar_host::TypeKind::UnsignedInt ||
                   k_ == poplar_host::TypeKind::Float
               ? 4
               : 0;
  }

private:
  poplar_host::TypeKind k_ = poplar_host::TypeKind::Invalid;
};

constexpr Type BOOL{poplar_host::TypeKind::Bool};
constexpr Type CHAR{poplar_host::TypeKind::Char};
constexpr Type UNSIGNED_CHAR{poplar_host::TypeKind::UnsignedChar};
constexpr Type SIGNED_CHAR{poplar_host::TypeKind::Char};
constexpr Type SHORT{poplar_host::TypeKind::Short};
constexpr Type UNSIGNED_SHORT{poplar_host::TypeKind::UnsignedShort};
constexpr Type HALF{poplar_host::TypeKind::Half};
constexpr Type INT{poplar_host::TypeKind::Int};
constexpr Type UNSIGNED_INT{poplar_host::TypeKind::UnsignedInt};
constexpr Type FLOAT{poplar_host::TypeKind::Float};

} // namespace poplar
#endif
