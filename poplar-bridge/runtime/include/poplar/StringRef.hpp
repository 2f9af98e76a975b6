// Host runtime of the Poplar API subset: poplar::StringRef, a non-owning string view.
#ifndef POPLAR_STRINGREF_HPP
#define POPLAR_STRINGREF_HPP
#include <cstring>
#include <string>

namespace poplar {

class StringRef {
public:
  StringRef() = default;
  StringRef(const char *s) : p_(s ? s : ""), n_(s ? std::strlen(s) : 0) {}
  StringRef(const char *s, std::size_t n) : p_(s), n_(n) {}
  StringRef(const std::string &s) : p_(s.data()), n_(s.size()) {}
  const char *data() const { return p_; }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  std::string str() const { return std::string(p_, n_); }
  operator std::string() const { return str(); }
  const char *begin() const { return p_; }
  const char *end() const { return p_ + n_; }

private:
  const char *p_ = "";
  std::size_t n_ = 0;
};

} // namespace poplar
#endif
