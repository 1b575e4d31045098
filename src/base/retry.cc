#include "base/retry.h"

#include <algorithm>
#include <thread>

namespace ferry {

std::chrono::milliseconds RetryPolicy::Backoff(int retry, std::mt19937_64& rng) const {
  int shift = std::clamp(retry - 1, 0, 30);
  int64_t cap = std::min<int64_t>(max_delay.count(), base_delay.count() << shift);
  if (cap <= 0) return std::chrono::milliseconds(0);
  std::uniform_int_distribution<int64_t> dist(0, cap);
  return std::chrono::milliseconds(dist(rng));
}

Status RunWithRetry(const RetryPolicy& policy, const std::function<Status()>& attempt,
                    const RetryHooks& hooks) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  Status status;
  for (int n = 1;; ++n) {
    status = attempt();
    if (status.ok() || !IsRetryable(status) || n >= policy.max_attempts) return status;
    auto delay = policy.Backoff(n, rng);
    if (hooks.on_retry) hooks.on_retry(n, status, delay);
    if (hooks.sleep) {
      hooks.sleep(delay);
    } else {
      std::this_thread::sleep_for(delay);
    }
  }
}

}  // namespace ferry
