#include "base/retry.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

TEST(RetryTest, RetriesTransientFailuresThenSucceeds) {
  int calls = 0;
  std::vector<std::chrono::milliseconds> sleeps;
  RetryHooks hooks{.on_retry = nullptr, .sleep = [&](auto d) { sleeps.push_back(d); }};
  Status s = RunWithRetry(
      RetryPolicy{}, [&] { return ++calls < 3 ? Unavailable("HTTP 503 SlowDown") : Status(); },
      hooks);
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(sleeps.size(), 2u);
}

TEST(RetryTest, DoesNotRetryPermanentFailures) {
  int calls = 0;
  Status s = RunWithRetry(RetryPolicy{}, [&] {
    ++calls;
    return NotFound("NoSuchKey");
  });
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(calls, 1);
}

TEST(RetryTest, GivesUpAfterMaxAttempts) {
  int calls = 0;
  RetryHooks hooks{.on_retry = nullptr, .sleep = [](auto) {}};
  Status s = RunWithRetry(
      RetryPolicy{.max_attempts = 4},
      [&] {
        ++calls;
        return Unavailable("reset");
      },
      hooks);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(calls, 4);
}

TEST(RetryTest, BackoffIsCappedAndJittered) {
  RetryPolicy p{.max_attempts = 10,
                .base_delay = std::chrono::milliseconds(100),
                .max_delay = std::chrono::milliseconds(1000)};
  std::mt19937_64 rng(1);
  for (int retry = 1; retry < 20; ++retry) {
    auto d = p.Backoff(retry, rng);
    EXPECT_GE(d.count(), 0);
    EXPECT_LE(d.count(), std::min<int64_t>(1000, 100ll << std::min(retry - 1, 30)));
  }
}

}  // namespace
}  // namespace ferry
