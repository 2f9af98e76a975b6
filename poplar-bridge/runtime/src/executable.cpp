// poplar::Executable: a compiled graph waiting for its Engine (poplar/Executable.hpp).
#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/exceptions.hpp>

namespace poplar {

Executable::Executable(std::unique_ptr<Engine> engine) : engine_(std::move(engine)) {}
Executable::Executable(Executable &&) noexcept = default;
Executable &Executable::operator=(Executable &&) noexcept = default;
Executable::~Executable() = default;

Executable compileGraph(Graph &&graph, ArrayRef<program::Program> progs, const OptionFlags &opts) {
  return Executable(std::make_unique<Engine>(std::move(graph), progs, opts));
}

Engine::Engine(Executable &&exe, const OptionFlags &) : Engine(std::move(*exe.engine_)) {
  exe.engine_.reset();
}

void Executable::serialize(std::ostream &) const {
  throw poplar_error("Executable::serialize: the host runtime keeps a compiled graph in memory only; "
                     "storing it needs the Poplar SDK");
}
Executable Executable::deserialize(std::istream &) {
  throw poplar_error("Executable::deserialize: the host runtime has no stored executables; "
                     "loading one needs the Poplar SDK");
}

} // namespace poplar
