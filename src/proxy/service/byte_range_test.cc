#include "proxy/service/byte_range.h"

#include <gtest/gtest.h>

namespace ferry::proxy {
namespace {

TEST(ParseRangeTest, AbsentMalformedOrMultipleMeansWholeFile) {
  for (std::optional<std::string_view> h :
       {std::optional<std::string_view>(), std::optional<std::string_view>("items=0-1"),
        std::optional<std::string_view>("bytes=a-b"), std::optional<std::string_view>("bytes=5-2"),
        std::optional<std::string_view>("bytes=0-1,4-5"),
        std::optional<std::string_view>("bytes")}) {
    EXPECT_EQ(ParseRange(h, 10).kind, RangeAnswer::kWhole) << h.value_or("(none)");
  }
}

TEST(ParseRangeTest, ProbesResumesAndClampedEnds) {
  RangeAnswer probe = ParseRange("bytes=0-0", 10);
  EXPECT_EQ(probe.kind, RangeAnswer::kPartial);
  EXPECT_EQ(probe.length(), 1u);
  EXPECT_EQ(ContentRangeValue(probe, 10), "bytes 0-0/10");
  RangeAnswer resume = ParseRange("bytes=4-", 10);
  EXPECT_EQ(ContentRangeValue(resume, 10), "bytes 4-9/10");
  RangeAnswer past = ParseRange("Bytes=2-999", 10);
  EXPECT_EQ(ContentRangeValue(past, 10), "bytes 2-9/10");
  RangeAnswer suffix = ParseRange("bytes=-3", 10);
  EXPECT_EQ(ContentRangeValue(suffix, 10), "bytes 7-9/10");
  RangeAnswer big_suffix = ParseRange("bytes=-30", 10);
  EXPECT_EQ(ContentRangeValue(big_suffix, 10), "bytes 0-9/10");
}

TEST(ParseRangeTest, StartAtOrPastTheEndIsUnsatisfiable) {
  EXPECT_EQ(ParseRange("bytes=10-", 10).kind, RangeAnswer::kUnsatisfiable);
  EXPECT_EQ(ParseRange("bytes=0-0", 0).kind, RangeAnswer::kUnsatisfiable);
  EXPECT_EQ(ParseRange("bytes=-0", 10).kind, RangeAnswer::kUnsatisfiable);
  EXPECT_EQ(ContentRangeValue(ParseRange("bytes=12-13", 10), 10), "bytes */10");
}

}  // namespace
}  // namespace ferry::proxy
