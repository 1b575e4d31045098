#include "transfer/glob_filter.h"

#include <gtest/gtest.h>

namespace ferry::transfer {
namespace {

TEST(GlobFilterTest, ExcludesWinAndBaseNamesMatchAtAnyDepth) {
  GlobFilter f({}, {"*.tmp", "logs/*"});
  EXPECT_TRUE(f.Accepts("a/b.bin"));
  EXPECT_FALSE(f.Accepts("deep/dir/x.tmp"));
  EXPECT_FALSE(f.Accepts("logs/today.txt"));
  GlobFilter g({"*.tar"}, {"bad-*"});
  EXPECT_TRUE(g.Accepts("shards/s-0001.tar"));
  EXPECT_FALSE(g.Accepts("shards/bad-0002.tar"));
  EXPECT_FALSE(g.Accepts("index.json"));
}

}  // namespace
}  // namespace ferry::transfer
