// Listing a local tree: symbolic links (in and out of the tree, loops), special files, paging.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "storage/local/local_store.h"

namespace ferry::storage {
namespace {

namespace fs = std::filesystem;

class LocalListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = fs::temp_directory_path() /
            ("ferry-list-" + std::to_string(getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(base_);
    fs::create_directories(base_ + "/tree/sub");
    fs::create_directories(base_ + "/outside");
    Write("tree/a.txt", "a");
    Write("tree/sub/b.txt", "b");
    Write("outside/secret", "do not upload");
    store_ = MakeLocalStore("/");
    prefix_ = (base_ + "/tree/").substr(1);
  }
  void TearDown() override { fs::remove_all(base_); }
  void Write(const std::string& rel, const std::string& data) {
    std::ofstream(base_ + "/" + rel) << data;
  }
  void Link(const std::string& target, const std::string& rel) {
    fs::create_symlink(target, base_ + "/" + rel);
  }
  // Every key (relative to the tree) and every skipped entry, over all pages.
  struct Listing {
    std::vector<std::string> keys;
    std::vector<std::pair<std::string, SkipKind>> skipped;
  };
  Listing ListTree(bool follow = false, int max_keys = 1000) {
    Listing out;
    ListOptions o{.prefix = prefix_, .follow_symlinks = follow, .max_keys = max_keys};
    Status s = store_->ListAll(o, [&](const ListPage& page) {
      for (const auto& obj : page.objects) out.keys.push_back(obj.key.substr(prefix_.size()));
      for (const auto& e : page.skipped) {
        out.skipped.emplace_back(e.key.substr(prefix_.size()), e.kind);
      }
      return Status();
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }
  std::string base_, prefix_;
  std::shared_ptr<Store> store_;
};

using Keys = std::vector<std::string>;

TEST_F(LocalListTest, LinksOutOfTheTreeAreLeftOutAndReported) {
  Link(base_ + "/outside", "tree/etc");
  Link(base_ + "/outside/secret", "tree/pw");
  Link("../../outside/secret", "tree/sub/rel");
  auto l = ListTree();
  EXPECT_EQ(l.keys, (Keys{"a.txt", "sub/b.txt"}));
  ASSERT_EQ(l.skipped.size(), 3u);
  for (const auto& [key, kind] : l.skipped) EXPECT_EQ(kind, SkipKind::kLinkOutsideTree) << key;
  EXPECT_EQ(l.skipped[0].first, "etc/");
}

TEST_F(LocalListTest, FileLinksInsideTheTreeAreListedDirectoryLinksAreNot) {
  Link("a.txt", "tree/latest.txt");
  Link("sub", "tree/latest");
  auto l = ListTree();
  EXPECT_EQ(l.keys, (Keys{"a.txt", "latest.txt", "sub/b.txt"}));
  ASSERT_EQ(l.skipped.size(), 1u);
  EXPECT_EQ(l.skipped[0], std::make_pair(std::string("latest/"), SkipKind::kLinkToDirectory));
}

TEST_F(LocalListTest, LoopsEndWithoutDuplicatesEvenWhenFollowing) {
  Link(".", "tree/l1");
  Link(".", "tree/l2");
  Link("..", "tree/sub/up");
  for (bool follow : {false, true}) {
    auto l = ListTree(follow);
    EXPECT_EQ(l.keys, (Keys{"a.txt", "sub/b.txt"})) << follow;
    ASSERT_EQ(l.skipped.size(), 3u) << follow;
    for (const auto& [key, kind] : l.skipped) {
      EXPECT_EQ(kind, follow ? SkipKind::kLinkLoop : SkipKind::kLinkToDirectory) << key;
    }
  }
}

TEST_F(LocalListTest, LinkOutOfTheTreePointingBackAboveIsNotDescended) {
  Link("..", "tree/loop");  // the tree's parent: outside
  auto l = ListTree();
  EXPECT_EQ(l.keys, (Keys{"a.txt", "sub/b.txt"}));
  ASSERT_EQ(l.skipped.size(), 1u);
  EXPECT_EQ(l.skipped[0].second, SkipKind::kLinkOutsideTree);
  // Followed, the parent is walked once: its tree/ is the listing's own root, a loop.
  auto f = ListTree(true);
  EXPECT_EQ(f.keys, (Keys{"a.txt", "loop/outside/secret", "sub/b.txt"}));
  ASSERT_EQ(f.skipped.size(), 1u);
  EXPECT_EQ(f.skipped[0], std::make_pair(std::string("loop/tree/"), SkipKind::kLinkLoop));
}

TEST_F(LocalListTest, FollowingCopiesLinkedDataOnce) {
  Link(base_ + "/outside", "tree/etc");
  auto l = ListTree(true);
  EXPECT_EQ(l.keys, (Keys{"a.txt", "etc/secret", "sub/b.txt"}));
  EXPECT_TRUE(l.skipped.empty());
}

TEST_F(LocalListTest, DanglingLinksAndSpecialFilesAreReported) {
  Link("missing", "tree/dangling");
  Link("self", "tree/self");
  ASSERT_EQ(::mkfifo((base_ + "/tree/fifo").c_str(), 0600), 0);
  auto l = ListTree();
  EXPECT_EQ(l.keys, (Keys{"a.txt", "sub/b.txt"}));
  ASSERT_EQ(l.skipped.size(), 3u);
  EXPECT_EQ(l.skipped[0], std::make_pair(std::string("dangling"), SkipKind::kDanglingLink));
  EXPECT_EQ(l.skipped[1], std::make_pair(std::string("fifo"), SkipKind::kNotRegularFile));
  EXPECT_EQ(l.skipped[2], std::make_pair(std::string("self"), SkipKind::kLinkLoop));
}

TEST_F(LocalListTest, PagesGiveTheSameListingWithAndWithoutKeptWalks) {
  for (int i = 0; i < 30; ++i) {
    fs::create_directories(base_ + "/tree/d" + std::to_string(i % 4));
    Write("tree/d" + std::to_string(i % 4) + "/f" + std::to_string(i), "x");
  }
  Link(base_ + "/outside", "tree/d2/out");
  auto whole = ListTree(false, 1000);
  for (int max_keys : {1, 2, 7}) {
    auto paged = ListTree(false, max_keys);
    EXPECT_EQ(paged.keys, whole.keys) << max_keys;
    EXPECT_EQ(paged.skipped, whole.skipped) << max_keys;
  }
  // A fresh store has no kept walk: a continuation re-walks and skips what sorts before it.
  ListOptions o{.prefix = prefix_, .max_keys = 5};
  auto first = store_->List(o);
  ASSERT_TRUE(first.ok());
  auto other = MakeLocalStore("/");
  o.continuation = first->next;
  Keys rest;
  ASSERT_TRUE(other
                  ->ListAll(o,
                            [&](const ListPage& p) {
                              for (const auto& obj : p.objects)
                                rest.push_back(obj.key.substr(prefix_.size()));
                              return Status();
                            })
                  .ok());
  ASSERT_EQ(rest.size() + 5, whole.keys.size());
  EXPECT_TRUE(std::equal(rest.begin(), rest.end(), whole.keys.begin() + 5));
}

}  // namespace
}  // namespace ferry::storage
