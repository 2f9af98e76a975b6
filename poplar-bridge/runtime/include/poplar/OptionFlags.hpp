// Host runtime of the Poplar API subset: poplar::OptionFlags, string key/value options.
// The host runtime accepts and stores every option; none changes its behaviour.
#ifndef POPLAR_OPTIONFLAGS_HPP
#define POPLAR_OPTIONFLAGS_HPP
#include <initializer_list>
#include <map>
#include <poplar/StringRef.hpp>
#include <string>
#include <utility>

namespace poplar {

class OptionFlags {
public:
  using OptionFlag = std::pair<const std::string, std::string>;
  using initializer_list_t = std::initializer_list<OptionFlag>;
  using const_iterator = std::map<std::string, std::string>::const_iterator;

  OptionFlags() = default;
  OptionFlags(initializer_list_t l) : m_(l) {}
  void set(initializer_list_t l) {
    for (const auto &kv : l)
      m_[kv.first] = kv.second;
  }
  void set(StringRef option, StringRef value) { m_[option.str()] = value.str(); }
  StringRef at(StringRef option) const { return m_.at(option.str()); }
  void clear() { m_.clear(); }
  const_iterator begin() const { return m_.begin(); }
  const_iterator end() const { return m_.end(); }

private:
  std::map<std::string, std::string> m_;
};

} // namespace poplar
#endif
