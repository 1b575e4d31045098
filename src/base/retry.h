#pragma once
// Retry with capped exponential backoff and full jitter (the AWS "full jitter" scheme):
// retry n sleeps uniform(0, min(cap, base_delay * 2^(n-1))). Only failures for which
// IsRetryable() is true are retried, under two separate budgets:
//  - throttling (IsThrottled: HTTP 429/503, S3 SlowDown and the like) is the server asking for
//    patience, so it is retried for a span of time (throttle_budget, measured from the first of
//    consecutive throttled answers) with a longer cap, never sooner than the server's
//    Retry-After (capped);
//  - every other transient failure (resets, timeouts, stalls, other 5xx) counts against
//    max_attempts.
// A request that keeps being throttled therefore rides out a minute of SlowDown where it used to
// fail after six answers (~2.4 s), while a dead endpoint still fails after six quick tries.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>

#include "base/mutex.h"
#include "base/status.h"

namespace ferry {

struct RetryPolicy {
  // Tries, the first included, of a request failing with transient errors other than
  // throttling.
  int max_attempts = 6;
  std::chrono::milliseconds base_delay{100};
  std::chrono::milliseconds max_delay{5000};
  // How long a request keeps retrying while it is throttled: from the first of consecutive
  // throttled answers. 60 s rides out the bursts of SlowDown S3 and RGW give under load (the
  // AWS SDKs retry throttling far longer than other errors, too); 0 = throttled answers count
  // as ordinary attempts. The last retry is clamped to end within the budget.
  std::chrono::milliseconds throttle_budget{60000};
  // Backoff cap while throttled: longer than max_delay, so many throttled clients spread out.
  std::chrono::milliseconds throttle_max_delay{10000};
  // Cap on a server's Retry-After (a misconfigured server must not park a copy for an hour).
  std::chrono::milliseconds max_retry_after{20000};
  // Set (by the CLI on SIGINT/SIGTERM) to stop: no further attempt starts and a wait between
  // attempts ends within 50 ms, with kCancelled. Not owned; null = never.
  const std::atomic<bool>* cancel = nullptr;

  // Delay before retry number `retry` (1 = the first retry). Deterministic given `rng`.
  std::chrono::milliseconds Backoff(int retry, std::mt19937_64& rng) const;
  // The same while throttled: capped at throttle_max_delay.
  std::chrono::milliseconds ThrottleBackoff(int retry, std::mt19937_64& rng) const;
};

// Runs `attempt` until it succeeds, fails with a non-retryable status, or the policy is
// exhausted; returns the last status. Giving up on throttling says so in the message
// ("...; still throttled after 61 s of retries (throttle budget 60 s)"). `on_retry` (optional)
// is told about each retried failure. `sleep` and `now` are injectable for tests.
struct RetryHooks {
  std::function<void(int retry, const Status&, std::chrono::milliseconds delay)> on_retry;
  std::function<void(std::chrono::milliseconds)> sleep;
  std::function<std::chrono::steady_clock::time_point()> now;
};

Status RunWithRetry(const RetryPolicy& policy, const std::function<Status()>& attempt,
                    const RetryHooks& hooks = {});

// Folds the throttled retries of many concurrent requests into a few warning lines: the first
// throttled answer is reported at once, later ones at most once per `interval` with their count.
// Thread-safe: one per store, shared by all its requests.
class ThrottleReporter final {
 public:
  explicit ThrottleReporter(std::chrono::milliseconds interval = std::chrono::seconds(10))
      : interval_(interval) {}

  // Notes one throttled answer `why` (its message names the operation and URL) at `now`;
  // returns the warning line to log when one is due.
  std::optional<std::string> Note(const Status& why, std::chrono::milliseconds budget,
                                  std::chrono::steady_clock::time_point now);

 private:
  const std::chrono::milliseconds interval_;
  Mutex mu_;
  std::optional<std::chrono::steady_clock::time_point> last_report_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point last_note_ GUARDED_BY(mu_);
  uint64_t unreported_ GUARDED_BY(mu_) = 0;
};

}  // namespace ferry
