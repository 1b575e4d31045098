#pragma once
// Live progress of a copy: counters updated by workers, a reporter thread that draws a bar on a
// terminal (redrawn every 200 ms) or prints one status line every 10 s otherwise, and the
// bandwidth limiter (--bwlimit) shared by all workers.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>
#include <thread>
#include <utility>

#include "base/mutex.h"

namespace ferry::transfer {

struct ProgressCounters {
  std::atomic<uint64_t> bytes_total{0}, bytes_done{0}, files_total{0}, files_done{0},
      files_skipped{0}, files_failed{0};
  // False while the source is still being listed: totals are still growing.
  std::atomic<bool> listing_done{true};
};

enum class ProgressMode { kAuto, kBar, kLines, kNone };

// The ETA shown to a user, honest about what is known: "-" while nothing moves yet, "listing"
// while the total is still growing, "stalled 12s" when no byte arrived for 5 s or more, else the
// remaining bytes over the recent rate (not the average since the start, which hides stalls).
std::string EtaText(uint64_t done, uint64_t total, double recent_rate, double stalled_seconds,
                    bool listing_done);

class ProgressReporter final {
 public:
  ProgressReporter(const ProgressCounters& counters, ProgressMode mode, std::FILE* out = stderr);
  ~ProgressReporter();  // stops and clears the bar
  void Stop();

 private:
  void Loop();
  std::string Line(bool bar);
  void Sample();
  const ProgressCounters& c_;
  // (time, bytes_done) every 200 ms over the last 10 s, for the recent rate.
  std::deque<std::pair<std::chrono::steady_clock::time_point, uint64_t>> samples_;
  std::chrono::steady_clock::time_point last_progress_;
  uint64_t last_done_ = 0;
  bool bar_ = false;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  Mutex mu_;
  CondVar cv_;
  bool stop_ GUARDED_BY(mu_) = false;
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
  Mutex mu_;
  double tokens_ GUARDED_BY(mu_) = 0;
  std::chrono::steady_clock::time_point last_ GUARDED_BY(mu_) = std::chrono::steady_clock::now();
};

}  // namespace ferry::transfer
