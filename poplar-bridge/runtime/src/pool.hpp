// A persistent thread pool: run(n, job) calls job(i) for every i in [0, n) on the pool's
// threads and the calling thread, and returns when all are done.
#ifndef POPLAR_HOST_POOL_HPP
#define POPLAR_HOST_POOL_HPP
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace poplar_host {

class Pool {
public:
  explicit Pool(unsigned threads); // total threads including the caller
  ~Pool();
  Pool(const Pool &) = delete;
  Pool &operator=(const Pool &) = delete;
  unsigned size() const { return static_cast<unsigned>(ts_.size()) + 1; }

  template <typename F> void run(std::size_t n, F &job) {
    if (n == 0)
      return;
    if (ts_.empty() || n == 1) {
      for (std::size_t i = 0; i < n; ++i)
        job(i);
      return;
    }
    dispatch(n, [](void *c, std::size_t i) { (*static_cast<F *>(c))(i); }, &job);
  }

  // FOAM_THREADS (a positive integer) or all hardware threads.
  static unsigned threadsFromEnv();

private:
  void dispatch(std::size_t n, void (*fn)(void *, std::size_t), void *ctx);
  void work();
  void loop();

  std::vector<std::thread> ts_;
  std::mutex m_;
  std::condition_variable wake_, done_;
  std::uint64_t gen_ = 0;
  bool stop_ = false;
  std::size_t n_ = 0;
  void (*fn_)(void *, std::size_t) = nullptr;
  void *ctx_ = nullptr;
  std::atomic<std::size_t> next_{0};
  unsigned busy_ = 0;
};

} // namespace poplar_host
#endif
