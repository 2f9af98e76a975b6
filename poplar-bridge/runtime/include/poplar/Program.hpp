// Host runtime of the Poplar API subset: control programs (namespace poplar::program).
#ifndef POPLAR_PROGRAM_HPP
#define POPLAR_PROGRAM_HPP
#include <initializer_list>
#include <memory>
#include <poplar/ArrayRef.hpp>
#include <poplar/DataStream.hpp>
#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Tensor.hpp>
#include <vector>

namespace poplar {
enum class SyncType { INTERNAL, EXTERNAL, GLOBAL };
}

namespace poplar_host {
struct ProgNode;
}

namespace poplar {
namespace program {

class Program {
public:
  Program() = default;
  bool isEmpty() const;
  const std::shared_ptr<poplar_host::ProgNode> &hostNode() const { return n_; } // host runtime only

protected:
  std::shared_ptr<poplar_host::ProgNode> n_;
};

class Sequence : public Program {
public:
  Sequence(const DebugContext &dc = {});
  Sequence(std::initializer_list<Program> programs, const DebugContext &dc = {});
  void add(const Program &p);
};

class Execute : public Program {
public:
  explicit Execute(ComputeSet cs, const DebugContext &dc = {});
};

class Copy : public Program {
public:
  Copy(Tensor src, Tensor dst, bool dontOutline = false, const DebugContext &dc = {});
  // The next numElements of a host-to-device FIFO into dst, or src onto a
  // device-to-host FIFO.
  Copy(const DataStream &stream, Tensor dst, bool optimiseMemory = false, const DebugContext &dc = {});
  Copy(Tensor src, const DataStream &stream, bool optimiseMemory = false, const DebugContext &dc = {});
};

// Prints a tensor's elements on the host's standard output ("title: [1 2 3]").
class PrintTensor : public Program {
public:
  explicit PrintTensor(Tensor t, const DebugContext &dc = {});
  PrintTensor(StringRef title, Tensor t, const DebugContext &dc = {});
};

class Repeat : public Program {
public:
  Repeat(unsigned count, const Program &prog, const DebugContext &dc = {});
};

class RepeatWhileTrue : public Program {
public:
  RepeatWhileTrue(const Program &cond, Tensor predicate, const Program &body, const DebugContext &dc = {});
};

class Sync : public Program {
public:
  explicit Sync(SyncType type, const DebugContext &dc = {});
};

} // namespace program
} // namespace poplar
#endif
