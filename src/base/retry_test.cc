#include "base/retry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace ferry {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

Status Throttled(milliseconds retry_after = milliseconds(0)) {
  return Status(StatusCode::kUnavailable,
                "GetObject 's3://b/k' failed: HTTP 503 SlowDown: Please reduce your request rate.",
                ErrorDetail{.http_status = 503,
                            .remote_code = "SlowDown",
                            .throttled = true,
                            .retry_after = retry_after});
}

// A clock that only moves when the retry loop sleeps: tests cover minutes of backoff in
// microseconds.
struct FakeClock {
  std::chrono::steady_clock::time_point t{};
  std::vector<milliseconds> sleeps;

  RetryHooks Hooks() {
    return RetryHooks{.on_retry = nullptr,
                      .sleep =
                          [this](milliseconds d) {
                            sleeps.push_back(d);
                            t += d;
                          },
                      .now = [this] { return t; }};
  }
  milliseconds elapsed() const {
    return std::chrono::duration_cast<milliseconds>(t - std::chrono::steady_clock::time_point{});
  }
};

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

TEST(RetryTest, ThrottlingDoesNotUseUpAttempts) {
  FakeClock clock;
  int calls = 0;
  // 30 throttled answers in a row; backoff capped at 1 s keeps them within the budget.
  Status s = RunWithRetry(
      RetryPolicy{.max_attempts = 2, .throttle_max_delay = seconds(1)},
      [&] { return ++calls <= 30 ? Throttled() : Status(); }, clock.Hooks());
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(calls, 31);
  EXPECT_LT(clock.elapsed(), seconds(60));
}

TEST(RetryTest, ThrottlingIsRetriedForTheWholeBudgetThenNamedInTheError) {
  FakeClock clock;
  int calls = 0;
  RetryPolicy policy;
  ASSERT_GE(policy.throttle_budget, seconds(60));  // the default rides out a minute
  Status s = RunWithRetry(
      policy,
      [&] {
        ++calls;
        return Throttled();
      },
      clock.Hooks());
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(IsThrottled(s));
  EXPECT_EQ(s.detail().remote_code, "SlowDown");
  EXPECT_NE(s.message().find("HTTP 503 SlowDown"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("still throttled after 60 s of retries (throttle budget 60 s)"),
            std::string::npos)
      << s.message();
  // The last sleep is clamped to the budget: exactly 60 s of backoff, no more.
  EXPECT_EQ(clock.elapsed(), seconds(60));
  EXPECT_GT(calls, 6);
  for (auto d : clock.sleeps) EXPECT_LE(d, policy.throttle_max_delay);
}

TEST(RetryTest, ThrottleBudgetIsConfigurable) {
  FakeClock clock;
  Status s = RunWithRetry(
      RetryPolicy{.throttle_budget = seconds(3)}, [&] { return Throttled(); }, clock.Hooks());
  EXPECT_TRUE(IsThrottled(s));
  EXPECT_EQ(clock.elapsed(), seconds(3));
  EXPECT_NE(s.message().find("(throttle budget 3 s)"), std::string::npos) << s.message();
}

TEST(RetryTest, RetryAfterIsAMinimumDelay) {
  FakeClock clock;
  int calls = 0;
  Status s = RunWithRetry(
      RetryPolicy{}, [&] { return ++calls <= 4 ? Throttled(seconds(3)) : Status(); },
      clock.Hooks());
  EXPECT_TRUE(s.ok());
  ASSERT_EQ(clock.sleeps.size(), 4u);
  for (auto d : clock.sleeps) EXPECT_GE(d, seconds(3));
}

TEST(RetryTest, RetryAfterIsCappedAndEndsWithinTheBudget) {
  FakeClock clock;
  RetryPolicy policy{.throttle_budget = seconds(60), .max_retry_after = seconds(20)};
  Status s = RunWithRetry(
      policy, [&] { return Throttled(std::chrono::hours(1)); }, clock.Hooks());
  EXPECT_TRUE(IsThrottled(s));
  ASSERT_EQ(clock.sleeps.size(), 3u);  // 20 s, 20 s, 20 s: never an hour
  for (auto d : clock.sleeps) EXPECT_EQ(d, seconds(20));
  EXPECT_EQ(clock.elapsed(), seconds(60));
}

TEST(RetryTest, AnotherFailureStartsANewThrottleBudget) {
  // A long read throttled twice, an hour apart, is not failed by the first episode's time.
  FakeClock clock;
  int resets = 0;
  Status s = RunWithRetry(
      RetryPolicy{.throttle_budget = seconds(60)},
      [&]() -> Status {
        if (clock.elapsed() < seconds(50)) return Throttled();
        if (resets == 0) {
          ++resets;
          return Unavailable("connection reset");
        }
        if (clock.elapsed() < seconds(100)) return Throttled();
        return Status();
      },
      clock.Hooks());
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_GE(clock.elapsed(), seconds(100));
}

TEST(RetryTest, ResetsBetweenThrottlingStillGiveUpAfterMaxAttempts) {
  FakeClock clock;
  int calls = 0;
  Status s = RunWithRetry(
      RetryPolicy{.max_attempts = 6},
      [&]() -> Status { return ++calls % 2 == 1 ? Throttled() : Unavailable("connection reset"); },
      clock.Hooks());
  EXPECT_EQ(s.message(), "connection reset");
  EXPECT_EQ(calls, 12);  // 6 resets, each after a throttled answer
}

TEST(RetryTest, ZeroThrottleBudgetCountsThrottlingAsAttempts) {
  FakeClock clock;
  int calls = 0;
  Status s = RunWithRetry(
      RetryPolicy{.max_attempts = 4, .throttle_budget = milliseconds(0)},
      [&] {
        ++calls;
        return Throttled();
      },
      clock.Hooks());
  EXPECT_TRUE(IsThrottled(s));
  EXPECT_EQ(calls, 4);
}

TEST(RetryTest, ThrottleBackoffIsCappedAndJittered) {
  RetryPolicy p{.throttle_max_delay = milliseconds(10000)};
  std::mt19937_64 rng(7);
  bool above_normal_cap = false;
  for (int retry = 1; retry < 200; ++retry) {
    auto d = p.ThrottleBackoff(retry, rng);
    EXPECT_GE(d.count(), 0);
    EXPECT_LE(d.count(), std::min<int64_t>(10000, p.base_delay.count() << std::min(retry - 1, 30)));
    if (d > p.max_delay) above_normal_cap = true;
  }
  EXPECT_TRUE(above_normal_cap);
}

TEST(RetryTest, NotThrottledWithoutTheDetail) {
  EXPECT_FALSE(IsThrottled(Unavailable("HTTP 500 InternalError")));
  EXPECT_TRUE(IsThrottled(Throttled()));
  Status not_retryable(StatusCode::kInvalidArgument, "x", ErrorDetail{.throttled = true});
  EXPECT_FALSE(IsThrottled(not_retryable));
}

TEST(RetryTest, CancelEndsALongThrottlingWaitAtOnce) {
  std::atomic<bool> cancel{false};
  RetryPolicy p;
  p.cancel = &cancel;
  p.max_retry_after = seconds(20);
  int attempts = 0;
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(200));
    cancel = true;
  });
  auto start = std::chrono::steady_clock::now();
  Status s = RunWithRetry(p, [&] {
    ++attempts;
    return Throttled(seconds(20));  // asks for a 20 s wait
  });
  auto took = std::chrono::steady_clock::now() - start;
  stopper.join();
  EXPECT_EQ(s.code(), StatusCode::kCancelled);
  EXPECT_EQ(attempts, 1);
  EXPECT_LT(took, seconds(2));
  // Once cancelled, a failure is not retried at all.
  EXPECT_EQ(RunWithRetry(p, [&] { return Throttled(); }).code(), StatusCode::kCancelled);
}

TEST(ThrottleReporterTest, FirstAnswerAtOnceThenOneLinePerInterval) {
  ThrottleReporter reporter(seconds(10));
  std::chrono::steady_clock::time_point t0{};
  auto first = reporter.Note(Throttled(), seconds(60), t0);
  ASSERT_TRUE(first.has_value());
  EXPECT_NE(first->find("throttled by the server"), std::string::npos) << *first;
  EXPECT_NE(first->find("up to 60 s"), std::string::npos) << *first;
  EXPECT_NE(first->find("HTTP 503 SlowDown"), std::string::npos) << *first;
  // 16 requests throttled every 0.5 s for 10 s: folded, not 320 lines.
  int lines = 0;
  for (int i = 1; i < 20; ++i) {
    for (int r = 0; r < 16; ++r) {
      if (reporter.Note(Throttled(), seconds(60), t0 + milliseconds(500 * i))) ++lines;
    }
  }
  EXPECT_EQ(lines, 0);
  auto later = reporter.Note(Throttled(), seconds(60), t0 + seconds(10));
  ASSERT_TRUE(later.has_value());
  EXPECT_NE(later->find("still throttled: 305 throttled answers in the last 10 s"),
            std::string::npos)
      << *later;
  EXPECT_FALSE(reporter.Note(Throttled(), seconds(60), t0 + seconds(11)).has_value());
  // After a quiet spell a new episode is reported at once again.
  auto again = reporter.Note(Throttled(), seconds(60), t0 + seconds(60));
  ASSERT_TRUE(again.has_value());
  EXPECT_NE(again->find("throttled by the server"), std::string::npos) << *again;
}

}  // namespace
}  // namespace ferry
