#include "base/time_format.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

TEST(TimeFormatTest, RoundTripsIsoAndAmzDates) {
  auto t = ParseIso8601("2013-05-24T00:00:00.000Z");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(FormatAmzDate(*t), "20130524T000000Z");
  EXPECT_EQ(FormatIso8601(*t), "2013-05-24T00:00:00Z");
  auto h = ParseHttpDate("Fri, 24 May 2013 00:00:00 GMT");
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(*h, *t);
  EXPECT_FALSE(ParseIso8601("yesterday").has_value());
}

}  // namespace
}  // namespace ferry

namespace ferry {
namespace {

TEST(TimeFormatTest, DatesOutsideTheClocksRangeAreNoDates) {
  // Found by the s3_xml fuzzer: year 0193 overflowed the nanosecond clock.
  EXPECT_FALSE(ParseIso8601("0193-12-01T00:00:00Z").has_value());
  EXPECT_FALSE(ParseIso8601("9999-12-01T00:00:00Z").has_value());
  EXPECT_FALSE(ParseHttpDate("Mon, 01 Jan 0100 00:00:00 GMT").has_value());
  EXPECT_TRUE(ParseIso8601("2026-12-01T00:00:00Z").has_value());
}

}  // namespace
}  // namespace ferry
