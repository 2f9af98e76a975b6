// Host runtime: the vertex-input recorder (record.hpp). Files in the directory:
//   records.txt  "rec CS EXEC TILE VERTEX TYPE" then one "f NAME ELEMENTS BYTES HASH"
//                per field, then after the run one "post NAME HASH" per written field;
//   blobs.bin    every distinct field content once, back to back;
//   blobs.txt    "HASH OFFSET BYTES" per blob.
#include "record.hpp"
#include "engine_impl.hpp"
#include "state.hpp"
#include <poplar_host/record_hash.hpp>
#include <algorithm>
#include <cinttypes>
#include <cstring>
#include <cstdlib>
#include <poplar/exceptions.hpp>

namespace poplar_host {

std::unique_ptr<Recorder> Recorder::fromEnv() {
  const char *dir = std::getenv("POPLAR_HOST_RECORD");
  if (!dir || !*dir)
    return nullptr;
  auto r = std::unique_ptr<Recorder>(new Recorder());
  r->dir_ = dir;
  if (const char *e = std::getenv("POPLAR_HOST_RECORD_EVERY"))
    r->every_ = std::max(1, std::atoi(e));
  if (const char *e = std::getenv("POPLAR_HOST_RECORD_FIRST"))
    r->first_ = static_cast<unsigned>(std::max(0, std::atoi(e)));
  auto open = [&](const char *name) {
    std::FILE *f = std::fopen((r->dir_ + "/" + name).c_str(), "wb");
    if (!f)
      throw poplar::poplar_error("POPLAR_HOST_RECORD: cannot write " + r->dir_ + "/" + name);
    return f;
  };
  r->recs_ = open("records.txt");
  r->blobs_ = open("blobs.bin");
  r->index_ = open("blobs.txt");
  return r;
}

Recorder::~Recorder() {
  for (std::FILE *f : {recs_, blobs_, index_})
    if (f)
      std::fclose(f);
}

void Recorder::bind(unsigned vertex, RecordedField f) {
  if (fields_.size() <= vertex)
    fields_.resize(vertex + 1);
  fields_[vertex].push_back(std::move(f));
}

std::uint64_t Recorder::put(const std::uint8_t *p, std::size_t n) {
  const std::uint64_t h = recordHash(p, n);
  if (have_.insert(h).second) {
    std::fwrite(p, 1, n, blobs_);
    std::fprintf(index_, "%016" PRIx64 " %" PRIu64 " %zu\n", h, blobBytes_, n);
    blobBytes_ += n;
  }
  return h;
}

bool Recorder::wants(const CsPlan &p) const {
  // runCs counts the execution before the vertices run.
  return p.executions > first_ && (p.executions - 1 - first_) % every_ == 0;
}

void Recorder::before(const GraphState &s, const CsPlan &p) {
  for (std::size_t k = 0; k + 1 < p.tileStart.size(); ++k)
    for (std::size_t r = p.tileStart[k]; r < p.tileStart[k + 1]; ++r) {
      const unsigned id = p.runs[r].vertex;
      std::fprintf(recs_, "rec %s %" PRIu64 " %u %u %s\n", p.name.c_str(), p.executions, p.tiles[k], id,
                   s.vertices[id].type->name.c_str());
      for (const RecordedField &f : fields_.at(id)) {
        const std::uint8_t *src = f.ptr ? f.ptr : f.value.data();
        if (!src) {
          std::fprintf(recs_, "f %s %zu 0 -\n", f.desc->name.c_str(), f.elements);
          continue;
        }
        std::fprintf(recs_, "f %s %zu %zu %016" PRIx64 "\n", f.desc->name.c_str(), f.elements, f.bytes,
                     put(src, f.bytes));
      }
    }
}

void Recorder::after(const GraphState &, const CsPlan &p) {
  for (std::size_t r = 0; r < p.runs.size(); ++r) {
    const unsigned id = p.runs[r].vertex;
    std::fprintf(recs_, "done %u\n", id);
    for (const RecordedField &f : fields_.at(id))
      if (f.ptr && (f.desc->dir == FieldDir::Out || f.desc->dir == FieldDir::InOut))
        std::fprintf(recs_, "post %s %016" PRIx64 "\n", f.desc->name.c_str(), recordHash(f.ptr, f.bytes));
  }
  std::fflush(recs_);
  std::fflush(blobs_);
  std::fflush(index_);
}

} // namespace poplar_host
