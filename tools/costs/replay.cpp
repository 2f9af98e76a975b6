// Replays vertices recorded by the host runtime (POPLAR_HOST_RECORD, poplar-bridge/
// host/record.hpp): each record is one vertex's field bytes before a compute set ran.
// The harness binds a fresh vertex object to copies of those bytes and runs it, one
// worker at a time, so that
//   - built with FOAM_PROBE counting (tools/costs/probe_counts.h), it prints each
//     worker's events (rays, cell steps, neighbours tested, ...), and
//   - run under `valgrind --tool=callgrind --collect-atstart=no`, it has callgrind
//     dump the instructions of each worker's compute() alone (a dump per worker,
//     labelled "r<record>w<worker>").
// Either way it checks each written field against the hash the recorder took after
// the real run: a replay that does not reproduce the run is reported, never used.
//
// usage: replay DIR [--select FILE] [--measure]
//   --select FILE  only the record indices listed in FILE (one per line)
//   --measure      callgrind client requests around each worker
#include <poplar_host/record_hash.hpp>
#include <poplar_host/registry.hpp>

#include <valgrind/callgrind.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#ifdef FOAM_PROBE_BUILD
#include "probe_counts.h"
#endif

// The codelet manifest build.rs generates for the runtime; the harness needs none.
void foam_codelet_manifest(std::vector<std::string> &) {}
const std::vector<poplar_host::HostMeasure> &foam_codelet_measures() {
  static const std::vector<poplar_host::HostMeasure> none;
  return none;
}

namespace {

struct Field {
  std::string name;
  std::size_t elements = 0, bytes = 0;
  std::uint64_t hash = 0;
  bool present = false;
};

struct Record {
  std::string cs, type;
  std::uint64_t exec = 0;
  unsigned tile = 0, vertex = 0;
  std::vector<Field> fields;
  std::map<std::string, std::uint64_t> post;
};

[[noreturn]] void die(const std::string &m) {
  std::fprintf(stderr, "replay: %s\n", m.c_str());
  std::exit(1);
}

std::vector<Record> readRecords(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    die("cannot read " + path);
  std::vector<Record> recs;
  // (cs, exec, vertex) -> record, for the "done"/"post" lines after a compute set.
  std::map<std::tuple<std::string, std::uint64_t, unsigned>, std::size_t> byKey;
  std::string line, lastCs;
  std::uint64_t lastExec = 0;
  Record *cur = nullptr;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "rec") {
      Record r;
      ls >> r.cs >> r.exec >> r.tile >> r.vertex >> r.type;
      lastCs = r.cs;
      lastExec = r.exec;
      byKey[{r.cs, r.exec, r.vertex}] = recs.size();
      recs.push_back(r);
      cur = &recs.back();
    } else if (tag == "f") {
      Field f;
      std::string h;
      ls >> f.name >> f.elements >> f.bytes >> h;
      f.present = h != "-";
      if (f.present)
        f.hash = std::strtoull(h.c_str(), nullptr, 16);
      cur->fields.push_back(f);
    } else if (tag == "done") {
      unsigned v;
      ls >> v;
      cur = &recs[byKey.at({lastCs, lastExec, v})];
    } else if (tag == "post") {
      std::string name, h;
      ls >> name >> h;
      cur->post[name] = std::strtoull(h.c_str(), nullptr, 16);
    }
  }
  return recs;
}

struct Blobs {
  std::map<std::uint64_t, std::pair<std::uint64_t, std::size_t>> where;
  std::FILE *data = nullptr;
  std::vector<std::uint8_t> get(std::uint64_t h, std::size_t n) const {
    auto it = where.find(h);
    if (it == where.end() || it->second.second != n)
      die("missing blob");
    std::vector<std::uint8_t> v(n);
    if (std::fseek(data, static_cast<long>(it->second.first), SEEK_SET) != 0 || std::fread(v.data(), 1, n, data) != n)
      die("short blob");
    return v;
  }
};

Blobs readBlobs(const std::string &dir) {
  Blobs b;
  std::ifstream idx(dir + "/blobs.txt");
  if (!idx)
    die("cannot read " + dir + "/blobs.txt");
  std::string h;
  std::uint64_t off;
  std::size_t n;
  while (idx >> h >> off >> n)
    b.where[std::strtoull(h.c_str(), nullptr, 16)] = {off, n};
  b.data = std::fopen((dir + "/blobs.bin").c_str(), "rb");
  if (!b.data)
    die("cannot read " + dir + "/blobs.bin");
  return b;
}

// The call callgrind measures: one worker (or a whole single-worker vertex).
__attribute__((noinline)) bool runOne(const poplar_host::VertexType *t, void *obj, unsigned w) {
  return t->multi ? t->runWorker(obj, w) : t->run(obj);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    die("usage: replay DIR [--select FILE] [--measure]");
  const std::string dir = argv[1];
  bool measure = false;
  std::set<std::size_t> select;
  bool selecting = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--measure") {
      measure = true;
    } else if (a == "--select" && i + 1 < argc) {
      std::ifstream s(argv[++i]);
      if (!s)
        die(std::string("cannot read ") + argv[i]);
      std::size_t k;
      while (s >> k)
        select.insert(k);
      selecting = true;
    } else {
      die("unknown argument " + a);
    }
  }
  const std::vector<Record> recs = readRecords(dir + "/records.txt");
  const Blobs blobs = readBlobs(dir);

  std::printf("record\tcs\texec\ttile\ttype\tworker\tok");
#ifdef FOAM_PROBE_BUILD
  for (const char *n : foam_probe_names)
    std::printf("\t%s", n);
#endif
  std::printf("\n");
  std::size_t bad = 0, run = 0;
  for (std::size_t k = 0; k < recs.size(); ++k) {
    if (selecting && !select.count(k))
      continue;
    const Record &r = recs[k];
    const poplar_host::VertexType *t = poplar_host::findVertexType(r.type);
    if (!t)
      die("record " + std::to_string(k) + ": unknown vertex type " + r.type);
    void *obj = std::aligned_alloc(64, (t->size + 63) & ~std::size_t(63));
    t->construct(obj);
    std::vector<std::vector<std::uint8_t>> mem(t->fields.size());
    for (std::size_t i = 0; i < t->fields.size(); ++i) {
      const poplar_host::FieldDesc &d = t->fields[i];
      const Field *f = nullptr;
      for (const Field &x : r.fields)
        if (x.name == d.name)
          f = &x;
      if (!f || !f->present)
        die("record " + std::to_string(k) + ": field " + d.name + " not recorded");
      mem[i] = blobs.get(f->hash, f->bytes);
      mem[i].reserve(f->bytes + 64);
      d.bind(obj, mem[i].data(), f->elements);
    }
    const unsigned workers = t->multi ? 6u : 1u;
    for (unsigned w = 0; w < workers; ++w) {
#ifdef FOAM_PROBE_BUILD
      foam_probe_reset();
#endif
      bool ok;
      if (measure) {
        CALLGRIND_ZERO_STATS;
        CALLGRIND_TOGGLE_COLLECT;
        ok = runOne(t, obj, w);
        CALLGRIND_TOGGLE_COLLECT;
        const std::string label = "r" + std::to_string(k) + "w" + std::to_string(w);
        CALLGRIND_DUMP_STATS_AT(label.c_str());
      } else {
        ok = runOne(t, obj, w);
      }
      std::printf("%zu\t%s\t%" PRIu64 "\t%u\t%s\t%u\t%d", k, r.cs.c_str(), r.exec, r.tile, r.type.c_str(), w, ok ? 1 : 0);
#ifdef FOAM_PROBE_BUILD
      for (unsigned long c : foam_probe_values())
        std::printf("\t%lu", c);
#endif
      std::printf("\n");
    }
    for (std::size_t i = 0; i < t->fields.size(); ++i) {
      auto p = r.post.find(t->fields[i].name);
      if (p != r.post.end() && poplar_host::recordHash(mem[i].data(), mem[i].size()) != p->second) {
        std::fprintf(stderr, "replay: record %zu (%s on tile %u): field %s differs from the recorded run\n", k,
                     r.type.c_str(), r.tile, t->fields[i].name.c_str());
        ++bad;
      }
    }
    t->destroy(obj);
    std::free(obj);
    ++run;
  }
  std::fprintf(stderr, "replay: %zu records run, %zu written fields differ from the recorded run\n", run, bad);
  return bad ? 2 : 0;
}
