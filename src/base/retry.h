#pragma once
// Retry with capped exponential backoff and full jitter (the AWS "full jitter" scheme):
// attempt n sleeps uniform(0, min(max_delay, base_delay * 2^n)). Only failures for which
// IsRetryable() is true are retried.

#include <chrono>
#include <cstdint>
#include <functional>
#include <random>

#include "base/status.h"

namespace ferry {

struct RetryPolicy {
  int max_attempts = 6;  // total tries, first included
  std::chrono::milliseconds base_delay{100};
  std::chrono::milliseconds max_delay{5000};

  // Delay before retry number `retry` (1 = the first retry). Deterministic given `rng`.
  std::chrono::milliseconds Backoff(int retry, std::mt19937_64& rng) const;
};

// Runs `attempt` until it succeeds, fails with a non-retryable status, or the policy is
// exhausted. `on_retry` (optional) is told about each retried failure. `sleep` is injectable
// for tests.
struct RetryHooks {
  std::function<void(int retry, const Status&, std::chrono::milliseconds delay)> on_retry;
  std::function<void(std::chrono::milliseconds)> sleep;
};

Status RunWithRetry(const RetryPolicy& policy, const std::function<Status()>& attempt,
                    const RetryHooks& hooks = {});

}  // namespace ferry
