// The C++ half of the cxx bridge: a Session owns a graph under construction, then the
// Engine built from it. Tensors, compute sets, vertices and programs are numbered
// handles so Rust can build a graph from a plan. C++ graph builders use graph().
#pragma once
#include "rust/cxx.h"
#include <cstdint>
#include <memory>
#include <optional>
#include <poplar/Device.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplar/Target.hpp>
#include <vector>

namespace foam_bridge {

struct Counters;
struct MemoryReport;
struct VertexCost;

class Session {
public:
  // The graph is built for the target of `device`, which the session keeps attached.
  explicit Session(poplar::Device device);
  ~Session();

  poplar::Graph &graph();
  std::uint32_t addTensor(poplar::Tensor t);
  const poplar::Tensor &tensor(std::uint32_t id) const;
  std::uint32_t addProgram(poplar::program::Program p);

  void add_codelets(rust::Str path);
  std::uint32_t add_variable(rust::Str type, rust::Slice<const std::size_t> shape, rust::Str name);
  void set_initial_bytes(std::uint32_t t, rust::Slice<const std::uint8_t> bytes);
  std::uint32_t slice(std::uint32_t t, std::size_t begin, std::size_t end, std::uint32_t dim);
  std::uint32_t index(std::uint32_t t, std::size_t i);
  std::uint32_t reshape(std::uint32_t t, rust::Slice<const std::size_t> shape);
  std::uint32_t concat(rust::Slice<const std::uint32_t> ts, std::uint32_t dim);
  std::size_t num_elements(std::uint32_t t) const;
  void set_tile_mapping(std::uint32_t t, std::uint32_t tile);
  std::uint32_t add_compute_set(rust::Str name);
  std::uint32_t add_vertex(std::uint32_t cs, rust::Str type, std::uint32_t tile);
  void connect(std::uint32_t v, rust::Str field, std::uint32_t t);
  void set_field_u32(std::uint32_t v, rust::Str field, std::uint32_t value);
  void set_field_i32(std::uint32_t v, rust::Str field, std::int32_t value);
  void set_field_f32(std::uint32_t v, rust::Str field, float value);
  void set_perf_estimate(std::uint32_t v, std::uint64_t cycles);
  void create_host_write(rust::Str handle, std::uint32_t t);
  void create_host_read(rust::Str handle, std::uint32_t t);

  std::uint32_t prog_execute(std::uint32_t cs);
  std::uint32_t prog_copy(std::uint32_t src, std::uint32_t dst);
  std::uint32_t prog_sequence(rust::Slice<const std::uint32_t> progs);
  std::uint32_t prog_repeat(std::uint32_t count, std::uint32_t body);
  std::uint32_t prog_repeat_while_true(std::uint32_t cond, std::uint32_t predicate, std::uint32_t body);
  std::uint32_t prog_sync();

  MemoryReport graph_memory_report() const;
  void compile(rust::Slice<const std::uint32_t> progs);
  // As compile, keeping the compiled executable in the file `path`: loaded from it
  // when it exists, else compiled and stored there (written to a temporary beside it
  // and renamed). Executables are stored by the Poplar SDK only.
  void compile_cached(rust::Slice<const std::uint32_t> progs, rust::Str path);
  void run(std::uint32_t prog);
  void write_tensor(rust::Str handle, rust::Slice<const std::uint8_t> bytes);
  void read_tensor(rust::Str handle, rust::Slice<std::uint8_t> bytes);
  Counters counters() const;
  void reset_counters();
  MemoryReport memory_report() const;
  std::uint32_t num_tiles() const;
  std::uint32_t bytes_per_tile() const;

private:
  poplar::Graph &building();
  poplar::Engine &engine() const;
  const poplar::Target &target() const { return device_.getTarget(); }
  poplar::Device device_;
  std::optional<poplar::Graph> graph_;
  std::unique_ptr<poplar::Engine> engine_;
  std::vector<poplar::Tensor> tensors_;
  std::vector<poplar::ComputeSet> computeSets_;
  std::vector<poplar::VertexRef> vertices_;
  std::vector<poplar::program::Program> programs_;
  std::uint64_t hostCalls_ = 0;
};

std::unique_ptr<Session> new_session(std::uint32_t num_ipus, std::uint32_t tiles_per_ipu);
rust::String codelets_gp();
rust::Vec<VertexCost> vertex_costs();

} // namespace foam_bridge
