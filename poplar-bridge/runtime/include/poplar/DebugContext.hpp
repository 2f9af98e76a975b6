// Host runtime of the Poplar API subset: poplar::DebugContext carries a debug name
// used in error messages and the memory report.
#ifndef POPLAR_DEBUGCONTEXT_HPP
#define POPLAR_DEBUGCONTEXT_HPP
#include <poplar/StringRef.hpp>
#include <string>

namespace poplar {

class DebugContext {
public:
  DebugContext() = default;
  DebugContext(const char *name) : name_(name ? name : "") {}
  DebugContext(const std::string &name) : name_(name) {}
  DebugContext(StringRef name) : name_(name.str()) {}
  DebugContext(const DebugContext &parent, StringRef name)
      : name_(parent.name_.empty() ? name.str() : parent.name_ + "/" + name.str()) {}
  const std::string &getPathName() const { return name_; }

private:
  std::string name_;
};

} // namespace poplar
#endif
