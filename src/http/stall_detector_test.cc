#include "http/stall_detector.h"

#include <gtest/gtest.h>

namespace ferry::http {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Feeds a transfer moving `bytes_per_tick` every `tick` for `duration`; returns the time at which
// the detector first reported a stall, or nullopt.
std::optional<milliseconds> Feed(StallDetector& d, milliseconds tick, uint64_t bytes_per_tick,
                                 milliseconds duration, milliseconds from = milliseconds(0),
                                 uint64_t bytes_before = 0) {
  uint64_t bytes = bytes_before;
  for (milliseconds t = from + tick; t <= from + duration; t += tick) {
    bytes += bytes_per_tick;
    if (d.Update(t, bytes)) return t;
  }
  return std::nullopt;
}

TEST(StallDetectorTest, TrickleIsStalledAfterOneWindow) {
  // The reported case: 1 byte every 0.4 s, which curl's 1 byte/s rule never catches.
  StallDetector d(1024, seconds(30));
  auto at = Feed(d, milliseconds(400), 1, std::chrono::minutes(5));
  ASSERT_TRUE(at.has_value());
  EXPECT_GE(*at, seconds(30));
  EXPECT_LE(*at, seconds(31));
}

TEST(StallDetectorTest, TrickleAfterGoodStartIsStalledOneWindowLater) {
  StallDetector d(1024, seconds(30));
  // 200 s at 10 MB/s, then a trickle.
  ASSERT_FALSE(Feed(d, milliseconds(100), 1'000'000, seconds(200)).has_value());
  auto at = Feed(d, milliseconds(400), 1, seconds(120), seconds(200), 2'000'000'000);
  ASSERT_TRUE(at.has_value());
  EXPECT_GE(*at, seconds(230));
  EXPECT_LE(*at, seconds(232));
}

TEST(StallDetectorTest, SlowButWorkingLinkIsNotStalled) {
  // 100 KB/s, in 16 KiB socket reads: two orders of magnitude above the 1 KiB/s default.
  StallDetector d(1024, seconds(30));
  EXPECT_FALSE(Feed(d, milliseconds(160), 16 * 1024, std::chrono::minutes(30)).has_value());
}

TEST(StallDetectorTest, ShortPausesInsideTheWindowAreNotStalls) {
  // 64 KiB bursts every 20 s (a server pausing for GC, TCP retransmission backoff): 3.2 KiB/s
  // on average, above the minimum in every 30 s window.
  StallDetector d(1024, seconds(30));
  EXPECT_FALSE(Feed(d, seconds(20), 64 * 1024, std::chrono::minutes(10)).has_value());
}

TEST(StallDetectorTest, NothingAtAllIsStalledAfterTheWindow) {
  StallDetector d(1024, seconds(3));
  EXPECT_FALSE(d.Update(milliseconds(2999), 0));
  EXPECT_TRUE(d.Update(milliseconds(3000), 0));
}

TEST(StallDetectorTest, JustAboveTheMinimumIsNotStalled) {
  StallDetector d(1000, seconds(10));
  EXPECT_FALSE(Feed(d, milliseconds(100), 101, std::chrono::minutes(2)).has_value());
  StallDetector below(1000, seconds(10));
  EXPECT_TRUE(Feed(below, milliseconds(100), 99, std::chrono::minutes(2)).has_value());
}

TEST(StallDetectorTest, ZeroMinimumTurnsTheRuleOff) {
  StallDetector d(0, seconds(30));
  EXPECT_FALSE(d.Update(std::chrono::hours(1), 0));
}

}  // namespace
}  // namespace ferry::http
