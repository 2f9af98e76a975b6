#include "pool.hpp"
#include <cstdlib>
#include <poplar/exceptions.hpp>
#include <string>

namespace poplar_host {

unsigned Pool::threadsFromEnv() {
  const char *e = std::getenv("FOAM_THREADS");
  if (e && *e) {
    char *end = nullptr;
    const long v = std::strtol(e, &end, 10);
    if (*end != '\0' || v < 1 || v > 4096)
      throw poplar::poplar_error(std::string("FOAM_THREADS must be a positive integer, got '") + e + "'");
    return static_cast<unsigned>(v);
  }
  const unsigned h = std::thread::hardware_concurrency();
  return h ? h : 1;
}

Pool::Pool(unsigned threads) {
  for (unsigned i = 1; i < threads; ++i)
    ts_.emplace_back([this] { loop(); });
}

Pool::~Pool() {
  {
    std::lock_guard<std::mutex> g(m_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto &t : ts_)
    t.join();
}

void Pool::work() {
  for (std::size_t i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < n_;)
    fn_(ctx_, i);
}

void Pool::loop() {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> g(m_);
      wake_.wait(g, [&] { return stop_ || gen_ != seen; });
      if (stop_)
        return;
      seen = gen_;
    }
    work();
    std::lock_guard<std::mutex> g(m_);
    if (--busy_ == 0)
      done_.notify_one();
  }
}

void Pool::dispatch(std::size_t n, void (*fn)(void *, std::size_t), void *ctx) {
  {
    std::lock_guard<std::mutex> g(m_);
    n_ = n;
    fn_ = fn;
    ctx_ = ctx;
    next_.store(0, std::memory_order_relaxed);
    busy_ = static_cast<unsigned>(ts_.size());
    ++gen_;
  }
  wake_.notify_all();
  work();
  std::unique_lock<std::mutex> g(m_);
  done_.wait(g, [&] { return busy_ == 0; });
}

} // namespace poplar_host
