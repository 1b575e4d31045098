#include "base/crc32c.h"

#include <gtest/gtest.h>

#include <random>

namespace ferry {
namespace {

TEST(Crc32cTest, KnownVector) {
  EXPECT_EQ(Crc32cOf("123456789"), 0xe3069283u);
  EXPECT_EQ(Crc32cOf(""), 0u);
  EXPECT_EQ(Crc32cHex(0xe3069283u), "e3069283");
  uint32_t v = 0;
  EXPECT_TRUE(ParseCrc32cHex("e3069283", &v));
  EXPECT_EQ(v, 0xe3069283u);
  EXPECT_FALSE(ParseCrc32cHex("E306928", &v));
}

TEST(Crc32cTest, IncrementalEqualsOneShot) {
  Crc32c c;
  c.Update("1234");
  c.Update("56789");
  EXPECT_EQ(c.value(), 0xe3069283u);
}

TEST(Crc32cTest, CombineJoinsPieces) {
  std::mt19937 rng(5);
  std::string data(3 << 20, '\0');
  for (auto& ch : data) ch = static_cast<char>(rng());
  uint32_t whole = Crc32cOf(data);
  for (size_t cut : {size_t{0}, size_t{1}, size_t{1000}, size_t{1} << 20, data.size() - 1}) {
    std::string_view a = std::string_view(data).substr(0, cut),
                     b = std::string_view(data).substr(cut);
    EXPECT_EQ(Crc32cCombine(Crc32cOf(a), Crc32cOf(b), b.size()), whole) << cut;
  }
}

}  // namespace
}  // namespace ferry
