#include "mount/access_pattern.h"

#include <gtest/gtest.h>

namespace ferry::mount {
namespace {

using Access = AccessPattern::Access;
constexpr uint64_t kMiB = 1 << 20;
constexpr AccessPattern::Window kNoWindow{};

// A sequential run that has read [0, end).
AccessPattern RunUpTo(uint64_t end) {
  AccessPattern p;
  EXPECT_EQ(p.Classify(0, kNoWindow), Access::kStartsSequential);
  p.OnSequentialStart();
  p.OnSequentialRead(end);
  return p;
}

TEST(AccessPatternTest, AReadFromTheStartBeginsASequentialRun) {
  AccessPattern p;
  EXPECT_EQ(p.Classify(0, kNoWindow), Access::kStartsSequential);
  EXPECT_EQ(p.Classify(4096, kNoWindow), Access::kRandom);
}

TEST(AccessPatternTest, ReadsContinuingTheRunStaySequential) {
  AccessPattern p = RunUpTo(128 << 10);
  EXPECT_EQ(p.Classify(128 << 10, kNoWindow), Access::kSequential);
  EXPECT_EQ(p.last_end(), 128u << 10);
  p.OnSequentialRead(64 << 10);  // a late read does not move the end back
  EXPECT_EQ(p.last_end(), 128u << 10);
}

TEST(AccessPatternTest, ReadsALittleOutOfOrderStaySequential) {
  AccessPattern p = RunUpTo(10 * kMiB);
  EXPECT_EQ(p.Classify(10 * kMiB - kBackwardTolerance, kNoWindow), Access::kSequential);
  EXPECT_EQ(p.Classify(10 * kMiB - kBackwardTolerance - 1, kNoWindow), Access::kRandom);
  EXPECT_EQ(p.Classify(10 * kMiB + kForwardTolerance, kNoWindow), Access::kSequential);
  EXPECT_EQ(p.Classify(10 * kMiB + kForwardTolerance + 1, kNoWindow), Access::kRandom);
}

TEST(AccessPatternTest, ABigWindowWidensHowFarAheadAReadMayBe) {
  AccessPattern p = RunUpTo(10 * kMiB);
  AccessPattern::Window big{.begin = 8 * kMiB, .end = 50 * kMiB, .target = 64 * kMiB};
  EXPECT_EQ(p.Classify(10 * kMiB + 64 * kMiB, big), Access::kSequential);
  EXPECT_EQ(p.Classify(10 * kMiB + 64 * kMiB + 1, big), Access::kRandom);
}

TEST(AccessPatternTest, ASeekInsideTheWindowStaysSequential) {
  AccessPattern p = RunUpTo(kMiB);
  AccessPattern::Window w{.begin = 0, .end = 40 * kMiB, .target = kMiB};
  EXPECT_EQ(p.Classify(39 * kMiB, w), Access::kSequential);  // beyond the tolerance, inside
  EXPECT_EQ(p.Classify(40 * kMiB, w), Access::kRandom);
}

TEST(AccessPatternTest, ARandomReadEndsTheRunAndAReadWhereItEndedStartsOne) {
  AccessPattern p = RunUpTo(kMiB);
  EXPECT_EQ(p.Classify(100 * kMiB, kNoWindow), Access::kRandom);
  EXPECT_EQ(p.OnRandom(100 * kMiB + 10), 1);
  EXPECT_FALSE(p.sequential());
  EXPECT_EQ(p.Classify(kMiB, kNoWindow), Access::kRandom);  // the old run is over
  EXPECT_EQ(p.OnRandom(kMiB + 10), 2);
  EXPECT_EQ(p.random_reads(), 2);
  EXPECT_EQ(p.Classify(kMiB + 10, kNoWindow), Access::kStartsSequential);
}

TEST(AccessPatternTest, AFailedReadEndsTheRun) {
  AccessPattern p = RunUpTo(kMiB);
  p.OnSequentialFailure();
  EXPECT_EQ(p.Classify(kMiB - 10, kNoWindow), Access::kRandom);
  EXPECT_EQ(p.Classify(kMiB, kNoWindow), Access::kStartsSequential);  // where it ended
}

}  // namespace
}  // namespace ferry::mount
