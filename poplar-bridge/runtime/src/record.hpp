// Host runtime: an optional recorder of vertex inputs, for measuring codelets off-line
// (tools/costs: a replay harness runs each recorded vertex under callgrind). Off unless
// POPLAR_HOST_RECORD names a directory. Then every POPLAR_HOST_RECORD_EVERY-th
// execution (default 10) of each compute set is recorded: for every vertex, the bytes
// of each field before the compute set runs (content-addressed, each distinct blob
// stored once) and a hash of each written field after it, so a replay can check that
// it reproduces the run.
#ifndef POPLAR_HOST_RECORD_HPP
#define POPLAR_HOST_RECORD_HPP
#include <poplar_host/registry.hpp>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

namespace poplar_host {

struct CsPlan;
struct GraphState;

struct RecordedField {
  const FieldDesc *desc = nullptr;
  std::uint8_t *ptr = nullptr;     // tile memory the field is bound to (null: a Value field)
  std::size_t elements = 0, bytes = 0;
  std::vector<std::uint8_t> value; // a Value field's bytes
};

class Recorder {
public:
  static std::unique_ptr<Recorder> fromEnv();
  ~Recorder();
  void bind(unsigned vertex, RecordedField f);
  bool wants(const CsPlan &p) const;
  void before(const GraphState &s, const CsPlan &p);
  void after(const GraphState &s, const CsPlan &p);

private:
  std::string dir_;
  unsigned every_ = 10, first_ = 0;
  std::FILE *recs_ = nullptr, *blobs_ = nullptr, *index_ = nullptr;
  std::uint64_t blobBytes_ = 0;
  std::unordered_set<std::uint64_t> have_;
  std::vector<std::vector<RecordedField>> fields_; // by vertex id
  std::uint64_t put(const std::uint8_t *p, std::size_t n);
};

} // namespace poplar_host
#endif
