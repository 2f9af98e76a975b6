// Host runtime of the Poplar API subset: poplar::Executable and poplar::compileGraph.
// compileGraph checks and lays out the graph as Engine's constructor does and keeps
// the result for an Engine to take (Engine(Executable &&)). The host runtime keeps an
// executable in memory only: serialize and deserialize, which the SDK implements to
// store a compiled graph on disk, throw poplar_error here.
#ifndef POPLAR_EXECUTABLE_HPP
#define POPLAR_EXECUTABLE_HPP
#include <istream>
#include <memory>
#include <ostream>
#include <poplar/ArrayRef.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

namespace poplar {

class Engine;
class Executable;

Executable compileGraph(Graph &&graph, ArrayRef<program::Program> progs, const OptionFlags &opts = {});

class Executable {
public:
  Executable(Executable &&) noexcept;
  Executable &operator=(Executable &&) noexcept;
  ~Executable();

  void serialize(std::ostream &out) const;
  static Executable deserialize(std::istream &in);

private:
  friend class Engine;
  friend Executable compileGraph(Graph &&, ArrayRef<program::Program>, const OptionFlags &);
  explicit Executable(std::unique_ptr<Engine> engine);
  std::unique_ptr<Engine> engine_;
};

} // namespace poplar
#endif
