#pragma once
// Live progress of a copy: counters updated by workers, a reporter thread that draws a bar on a
// terminal (redrawn every 200 ms) or prints one status line every 10 s otherwise, and the
// bandwidth limiter (--bwlimit) shared by all workers.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <thread>

namespace ferry::transfer {

struct ProgressCounters {
  std::atomic<uint64_t> bytes_total{0}, bytes_done{0}, files_total{0}, files_done{0},
      files_skipped{0}, files_failed{0};
};

enum class ProgressMode { kAuto, kBar, kLines, kNone };

class ProgressReporter final {
 public:
  ProgressReporter(const ProgressCounters& counters, ProgressMode mode, std::FILE* out = stderr);
  ~ProgressReporter();  // stops and clears the bar
  void Stop();

 private:
  void Loop();
  std::string Line(bool bar) const;
  const ProgressCounters& c_;
  bool bar_ = false;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

// Token bucket: Acquire(n) sleeps so that the long-run rate stays at most `bytes_per_second`
// (bursts up to a quarter second's worth). Thread-safe; a rate of 0 never waits.
class RateLimiter final {
 public:
  explicit RateLimiter(uint64_t bytes_per_second) : rate_(bytes_per_second) {}
  void Acquire(uint64_t bytes);

 private:
  uint64_t rate_;
  std::mutex mu_;
  double tokens_ = 0;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace ferry::transfer
