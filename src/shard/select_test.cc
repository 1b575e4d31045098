#include "shard/select.h"

#include <gtest/gtest.h>

namespace ferry::shard {
namespace {

using V = FileFilter::Verdict;

TEST(GlobMatch, NameOrPath) {
  EXPECT_TRUE(GlobMatch("*.jpg", "d/0001.jpg"));
  EXPECT_FALSE(GlobMatch("*.jpg", "d/0001.cls"));
  EXPECT_TRUE(GlobMatch("d/*", "d/x/0001.jpg"));  // '/' in the pattern: the path; '*' crosses '/'
  EXPECT_FALSE(GlobMatch("e/*", "d/0001.jpg"));
  EXPECT_TRUE(GlobMatch("000[0-1].*", "d/0001.jpg"));
}

TEST(FileFilter, DotfilesSkippedByDefault) {
  FileFilter f;
  EXPECT_EQ(f.Check("d/0001.jpg"), V::kTake);
  EXPECT_EQ(f.Check(".DS_Store"), V::kHidden);
  EXPECT_EQ(f.Check("d/.DS_Store"), V::kHidden);
  EXPECT_EQ(f.Check("d/._0001.jpg"), V::kHidden);
  EXPECT_EQ(f.Check(".git/config.x"), V::kHidden);
  f.dotfiles = true;
  EXPECT_EQ(f.Check("d/.DS_Store"), V::kTake);
}

TEST(FileFilter, IncludeThenExclude) {
  FileFilter f{.include = {"*.jpg", "*.cls"}, .exclude = {"bad/*"}};
  EXPECT_EQ(f.Check("d/1.jpg"), V::kTake);
  EXPECT_EQ(f.Check("d/1.cls"), V::kTake);
  EXPECT_EQ(f.Check("d/1.txt"), V::kExcluded);
  EXPECT_EQ(f.Check("bad/1.jpg"), V::kExcluded);
}

}  // namespace
}  // namespace ferry::shard
