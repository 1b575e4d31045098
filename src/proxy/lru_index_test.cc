#include "proxy/lru_index.h"

#include <gtest/gtest.h>

namespace ferry::proxy {
namespace {

TEST(LruIndexTest, EvictsLeastRecentlyUsedUntilUnderCap) {
  LruIndex lru;
  lru.Insert("a", 10, 1);
  lru.Insert("b", 10, 2);
  lru.Insert("c", 10, 3);
  lru.Touch("a", 4);  // a is now the newest
  EXPECT_EQ(lru.total_bytes(), 30u);
  EXPECT_EQ(lru.Victims(20, nullptr), std::vector<std::string>{"b"});
  EXPECT_EQ(lru.Victims(5, nullptr), (std::vector<std::string>{"b", "c", "a"}));
  EXPECT_TRUE(lru.Victims(30, nullptr).empty());
}

TEST(LruIndexTest, SkipsPinnedEntries) {
  LruIndex lru;
  lru.Insert("a", 10, 1);
  lru.Insert("b", 10, 2);
  auto v = lru.Victims(10, [](const std::string& k) { return k == "a"; });
  EXPECT_EQ(v, std::vector<std::string>{"b"});
}

TEST(LruIndexTest, AccessTimesRoundTripAndOnlyMoveForward) {
  LruIndex lru;
  lru.Insert("a", 1, 100);
  lru.Insert("b", 2, 200);
  std::string saved = lru.SerializeAccessTimes();
  LruIndex other;
  other.Insert("a", 1, 0);
  other.Insert("b", 2, 500);
  other.ApplyAccessTimes(saved + "garbage line\nc\t7\nb\tx\n");
  // a moved to 100; b keeps 500 (later than the saved 200); c is unknown.
  EXPECT_EQ(other.Victims(2, nullptr), std::vector<std::string>{"a"});
  EXPECT_EQ(other.count(), 2u);
  other.Erase("a");
  EXPECT_EQ(other.total_bytes(), 2u);
}

}  // namespace
}  // namespace ferry::proxy
