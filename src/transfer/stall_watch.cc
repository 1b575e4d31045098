#include "transfer/stall_watch.h"

#include <fmt/format.h>

#include "base/log.h"

namespace ferry::transfer {

StallWatch::StallWatch(std::function<uint64_t()> progress, std::function<std::string()> endpoints,
                       std::function<uint64_t()> retries, std::chrono::milliseconds after)
    : progress_(std::move(progress)),
      endpoints_(std::move(endpoints)),
      retries_(std::move(retries)),
      after_(after),
      thread_([this] { Loop(); }) {}

StallWatch::~StallWatch() {
  {
    MutexLock lock(mu_);
    stop_ = true;
  }
  cv_.NotifyAll();
  thread_.join();
}

void StallWatch::Begin(const std::string& what) {
  MutexLock lock(mu_);
  in_flight_.insert(what);
}

void StallWatch::End(const std::string& what) {
  MutexLock lock(mu_);
  auto it = in_flight_.find(what);
  if (it != in_flight_.end()) in_flight_.erase(it);
}

void StallWatch::Loop() {
  using Clock = std::chrono::steady_clock;
  constexpr auto kTick = std::chrono::milliseconds(250);
  auto moved_at = Clock::now();
  auto next_notice = moved_at + after_;
  uint64_t last = 0;
  bool stalled = false;
  std::string endpoints;
  MutexLock lock(mu_);
  while (!cv_.WaitFor(lock, kTick, [&]() REQUIRES(mu_) { return stop_; })) {
    auto now = Clock::now();
    uint64_t progress = progress_();
    if (progress != last || in_flight_.empty()) {
      if (stalled && progress != last) {
        Log(LogLevel::kWarn, "{} answers again", endpoints);
      }
      last = progress;
      moved_at = now;
      next_notice = now + after_;
      stalled = false;
      continue;
    }
    if (now < next_notice) continue;
    next_notice = now + after_;
    stalled = true;
    auto waited = std::chrono::duration_cast<std::chrono::seconds>(now - moved_at).count();
    if (endpoints.empty()) endpoints = endpoints_();
    const size_t more = in_flight_.size() - 1;
    Log(LogLevel::kWarn,
        "waiting on {}: no progress for {} s ({}{}); {} retries so far; a request without an "
        "answer is retried when it times out (Ctrl-C stops)",
        endpoints, waited, *in_flight_.begin(),
        more ? fmt::format(" and {} more in flight", more) : "", retries_());
  }
}

}  // namespace ferry::transfer
