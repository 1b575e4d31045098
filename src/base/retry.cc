#include "base/retry.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

namespace ferry {

namespace {

using std::chrono::milliseconds;

milliseconds JitteredExponential(int retry, milliseconds base, milliseconds cap,
                                 std::mt19937_64& rng) {
  int shift = std::clamp(retry - 1, 0, 30);
  int64_t top = std::min<int64_t>(cap.count(), base.count() << shift);
  if (top <= 0) return milliseconds(0);
  std::uniform_int_distribution<int64_t> dist(0, top);
  return milliseconds(dist(rng));
}

// "60 s" for whole seconds, "2.5 s" otherwise.
std::string FormatSeconds(std::chrono::steady_clock::duration d) {
  auto ms = std::chrono::duration_cast<milliseconds>(d).count();
  if (ms % 1000 == 0) return fmt::format("{} s", ms / 1000);
  return fmt::format("{:.1f} s", static_cast<double>(ms) / 1000.0);
}

}  // namespace

milliseconds RetryPolicy::Backoff(int retry, std::mt19937_64& rng) const {
  return JitteredExponential(retry, base_delay, max_delay, rng);
}

milliseconds RetryPolicy::ThrottleBackoff(int retry, std::mt19937_64& rng) const {
  return JitteredExponential(retry, base_delay, throttle_max_delay, rng);
}

Status RunWithRetry(const RetryPolicy& policy, const std::function<Status()>& attempt,
                    const RetryHooks& hooks) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  auto now = [&] { return hooks.now ? hooks.now() : std::chrono::steady_clock::now(); };
  int failures = 0;   // transient failures other than throttling, against max_attempts
  int throttled = 0;  // consecutive throttled answers
  std::chrono::steady_clock::time_point throttled_since;
  auto cancelled = [&] { return policy.cancel != nullptr && policy.cancel->load(); };
  for (int n = 1;; ++n) {
    Status status = attempt();
    if (status.ok() || !IsRetryable(status)) return status;
    if (cancelled()) return Status(StatusCode::kCancelled, "interrupted: " + status.message());
    milliseconds delay;
    if (IsThrottled(status) && policy.throttle_budget.count() > 0) {
      auto t = now();
      if (throttled == 0) throttled_since = t;
      auto spent = t - throttled_since;
      if (spent >= policy.throttle_budget) {
        return Status(status.code(),
                      fmt::format("{}; still throttled after {} of retries (throttle budget {})",
                                  status.message(), FormatSeconds(spent),
                                  FormatSeconds(policy.throttle_budget)),
                      status.detail());
      }
      ++throttled;
      delay = policy.ThrottleBackoff(throttled, rng);
      // The server's Retry-After is a minimum; the budget's end is a maximum.
      delay = std::max(delay, std::min(status.detail().retry_after, policy.max_retry_after));
      delay = std::min(delay, std::chrono::ceil<milliseconds>(policy.throttle_budget - spent));
    } else {
      throttled = 0;
      if (++failures >= policy.max_attempts) return status;
      delay = policy.Backoff(failures, rng);
    }
    if (hooks.on_retry) hooks.on_retry(n, status, delay);
    if (hooks.sleep) {
      hooks.sleep(delay);
    } else if (policy.cancel == nullptr) {
      std::this_thread::sleep_for(delay);
    } else {
      // In slices, so a stop asked for during a long throttling wait is seen within 50 ms.
      auto until = std::chrono::steady_clock::now() + delay;
      while (!cancelled() && std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
            milliseconds(50), until - std::chrono::steady_clock::now()));
      }
    }
    if (cancelled()) return Status(StatusCode::kCancelled, "interrupted: " + status.message());
  }
}

std::optional<std::string> ThrottleReporter::Note(const Status& why, milliseconds budget,
                                                  std::chrono::steady_clock::time_point now) {
  MutexLock lock(mu_);
  bool new_episode = !last_report_ || now - last_note_ >= interval_;
  last_note_ = now;
  if (new_episode) {
    last_report_ = now;
    unreported_ = 0;
    if (budget.count() <= 0) return "throttled by the server; backing off: " + why.message();
    return fmt::format(
        "throttled by the server; backing off and retrying each request for up to {}: {}",
        FormatSeconds(budget), why.message());
  }
  ++unreported_;
  if (now - *last_report_ < interval_) return std::nullopt;
  std::string line =
      fmt::format("still throttled: {} throttled answers in the last {}, backing off: {}",
                  unreported_, FormatSeconds(now - *last_report_), why.message());
  last_report_ = now;
  unreported_ = 0;
  return line;
}

}  // namespace ferry
