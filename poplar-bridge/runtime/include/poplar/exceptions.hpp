// Host runtime of the Poplar API subset: the exception types Poplar throws. Every
// message names the tile, tensor, vertex or handle at fault.
#ifndef POPLAR_EXCEPTIONS_HPP
#define POPLAR_EXCEPTIONS_HPP
#include <stdexcept>
#include <string>

namespace poplar {

struct poplar_error : std::runtime_error {
  std::string type;
  explicit poplar_error(const std::string &s) : std::runtime_error(s), type("poplar_error") {}
  explicit poplar_error(const char *s) : poplar_error(std::string(s)) {}
};
struct graph_memory_allocation_error : poplar_error {
  using poplar_error::poplar_error;
};
struct invalid_tile_mapping : poplar_error {
  using poplar_error::poplar_error;
};
struct graph_connection_error : poplar_error {
  using poplar_error::poplar_error;
};
struct unknown_vertex_type : poplar_error {
  using poplar_error::poplar_error;
};
struct unknown_field : poplar_error {
  using poplar_error::poplar_error;
};
struct invalid_program : poplar_error {
  using poplar_error::poplar_error;
};
struct graph_program_compilation_error : poplar_error {
  using poplar_error::poplar_error;
};
struct stream_connection_error : poplar_error {
  using poplar_error::poplar_error;
};
struct runtime_error : poplar_error {
  using poplar_error::poplar_error;
};

} // namespace poplar
#endif
