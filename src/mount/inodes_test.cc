// The inode table's bookkeeping of what exists only in this mount (Node::kept_locally); the
// rest of it is exercised through MountFs (fs_test.cc, fs_model_test.cc).
#include "mount/inodes.h"

#include <gtest/gtest.h>

namespace ferry::mount {
namespace {

constexpr auto kForever = Clock::time_point::max();

class InodeTableTest : public ::testing::Test {
 protected:
  Ino Dir(Ino parent, const std::string& name, bool local = false) {
    return inodes_.Upsert(parent, name, {.dir = true, .local = local}, kForever).attr.ino;
  }
  bool Kept(Ino ino) { return inodes_.Get(ino)->kept_locally(); }

  InodeTable inodes_{"data/"};
};

TEST_F(InodeTableTest, ADirectoryHoldingALocalNodeIsKeptLocally) {
  Ino a = Dir(kRootIno, "a"), b = Dir(a, "b");
  EXPECT_FALSE(Kept(a));
  Ino c = Dir(b, "c", /*local=*/true);  // mkdir a/b/c
  EXPECT_TRUE(Kept(a));
  EXPECT_TRUE(Kept(b));
  EXPECT_EQ(inodes_.LocalChildren(a), std::vector<std::string>{"b"});
  Attr committed = inodes_.Get(c)->attr;  // a file was written below it: in the store now
  committed.local = false;
  inodes_.SetAttr(c, committed, kForever);
  EXPECT_FALSE(Kept(a));
  EXPECT_FALSE(Kept(b));
  EXPECT_TRUE(inodes_.LocalChildren(a).empty());
}

TEST_F(InodeTableTest, ARemovedSubtreeNoLongerKeepsItsFormerAncestors) {
  Ino a = Dir(kRootIno, "a"), b = Dir(a, "b");
  Ino f = inodes_.Upsert(b, "f", {.local = true}, kForever).attr.ino;  // being written
  inodes_.AddLookup(b);  // the kernel still holds b: it stays, detached
  EXPECT_TRUE(Kept(a));
  inodes_.Remove(a, "b");
  EXPECT_FALSE(Kept(a));
  EXPECT_TRUE(Kept(b));
  Attr done = inodes_.Get(f)->attr;  // changes inside the detached subtree stay there
  done.local = false;
  inodes_.SetAttr(f, done, kForever);
  EXPECT_FALSE(Kept(b));
  EXPECT_FALSE(Kept(a));
}

TEST_F(InodeTableTest, ANameThatChangesKindLeavesTheOldNodesCountBehind) {
  Ino a = Dir(kRootIno, "a"), b = Dir(a, "b");
  Dir(b, "c", /*local=*/true);
  EXPECT_TRUE(Kept(a));
  Ino file = inodes_.Upsert(a, "b", {.size = 1}, kForever).attr.ino;  // "b" is a file now
  EXPECT_NE(file, b);
  EXPECT_FALSE(Kept(a));
  inodes_.Upsert(a, "n", {.local = true}, kForever);  // a new local child counts
  EXPECT_TRUE(Kept(a));
  inodes_.Remove(a, "n");
  EXPECT_FALSE(Kept(a));
}

}  // namespace
}  // namespace ferry::mount
