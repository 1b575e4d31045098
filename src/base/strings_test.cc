#include "base/strings.h"

#include <gtest/gtest.h>

namespace ferry {
namespace {

TEST(StringsTest, PercentEncodeKeepsUnreservedOnly) {
  EXPECT_EQ(PercentEncode("a b+c/d~e"), "a%20b%2Bc%2Fd~e");
  EXPECT_EQ(PercentEncode("a b/c", true), "a%20b/c");
  EXPECT_EQ(PercentEncode("\xc3\xa9"), "%C3%A9");
}

TEST(StringsTest, PercentDecodeRejectsMalformedEscapes) {
  EXPECT_EQ(PercentDecode("a%20b+c"), "a b+c");
  EXPECT_EQ(PercentDecode("%25"), "%");
  EXPECT_FALSE(PercentDecode("100%").has_value());
  EXPECT_FALSE(PercentDecode("%4").has_value());
  EXPECT_FALSE(PercentDecode("%zz").has_value());
}

TEST(StringsTest, ParsesByteSizes) {
  EXPECT_EQ(ParseByteSize("64"), 64u);
  EXPECT_EQ(ParseByteSize("8MiB"), 8u << 20);
  EXPECT_EQ(ParseByteSize("1G"), 1ull << 30);
  EXPECT_FALSE(ParseByteSize("1X").has_value());
  EXPECT_FALSE(ParseByteSize("").has_value());
}

TEST(StringsTest, SplitKeepsEmptyFields) {
  auto parts = Split("a//b", '/');
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[1], "");
}

TEST(StringsTest, AppendUtf8EncodesAndReplacesWhatCannotBeEncoded) {
  std::string out;
  for (uint32_t cp : {0x41u, 0xE9u, 0x20ACu, 0x1F600u, 0xD800u, 0x110000u}) AppendUtf8(out, cp);
  EXPECT_EQ(out, "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xEF\xBF\xBD\xEF\xBF\xBD");
}

}  // namespace
}  // namespace ferry
