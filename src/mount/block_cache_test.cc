#include "mount/block_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

namespace ferry::mount {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kB = BlockCache::kBlock;

class BlockCacheTest : public ::testing::Test {
 protected:
  void TearDown() override { fs::remove_all(dir_); }

  // Block files in the cache (a block being written is a ".tmp-" file until renamed).
  int Blocks() const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir_)) {
      n += e.path().filename().string().find(".tmp-") == std::string::npos;
    }
    return n;
  }
  // Every block file last used long ago (mtimes are coarse: blocks written together tie).
  void AgeAllBlocks() const {
    for (const auto& e : fs::directory_iterator(dir_)) {
      fs::last_write_time(e.path(), fs::file_time_type::clock::now() - std::chrono::hours(1));
    }
  }

  std::string dir_ = ::testing::TempDir() + "ferry-block-cache-test-" + std::to_string(::getpid());
};

TEST_F(BlockCacheTest, ServesRangesOfTheBlocksPutForAVersion) {
  BlockCache cache(dir_, 100 * kB);
  std::string block(kB, 'x');
  block[10] = 'y';
  cache.Put("k", "v1", 3, block);
  EXPECT_TRUE(cache.Has("k", "v1", 3));
  EXPECT_EQ(*cache.GetRange("k", "v1", 3, 8, 4), "xxyx");
  EXPECT_FALSE(cache.GetRange("k", "v1", 3, kB - 2, 4));  // past the block's end: a miss
  EXPECT_FALSE(cache.Has("k", "v1", 4));
  EXPECT_FALSE(cache.Has("k", "v2", 3));  // another version of the object
  EXPECT_FALSE(cache.GetRange("k", "v2", 3, 0, 1));
  EXPECT_FALSE(cache.Has("other", "v1", 3));
}

TEST_F(BlockCacheTest, ObjectsWithoutAnETagAreNeverCached) {
  BlockCache cache(dir_, 100 * kB);
  cache.Put("k", "", 0, "data");
  EXPECT_FALSE(cache.Has("k", "", 0));
  EXPECT_FALSE(cache.GetRange("k", "", 0, 0, 4));
  EXPECT_EQ(Blocks(), 0);
}

TEST_F(BlockCacheTest, BlocksAreReusedByAnotherCacheOnTheSameDirectory) {
  BlockCache(dir_, 100 * kB).Put("k", "v1", 0, "abc");
  BlockCache later(dir_, 100 * kB);  // a later mount
  EXPECT_EQ(*later.GetRange("k", "v1", 0, 1, 2), "bc");
}

TEST_F(BlockCacheTest, DeletesTheLeastRecentlyUsedBlocksBeyondItsCapacity) {
  BlockCache cache(dir_, 4 * kB);
  std::string block(kB, 'b');
  for (uint64_t b = 0; b < 4; ++b) cache.Put("k", "v1", b, block);
  EXPECT_EQ(Blocks(), 4);  // at the capacity: nothing deleted
  AgeAllBlocks();
  ASSERT_TRUE(cache.GetRange("k", "v1", 2, 0, 1));  // block 2 is used again
  cache.Put("k", "v1", 4, block);                   // 5 blocks: down to 90% (3 blocks)
  EXPECT_EQ(Blocks(), 3);
  EXPECT_TRUE(cache.Has("k", "v1", 2));  // recently read
  EXPECT_TRUE(cache.Has("k", "v1", 4));  // just written
}

TEST_F(BlockCacheTest, ABlockDeletedWhileItsDescriptorIsOpenStaysReadable) {
  BlockCache cache(dir_, 100 * kB);
  cache.Put("k", "v1", 0, "0123456789");
  ASSERT_EQ(*cache.GetRange("k", "v1", 0, 0, 2), "01");  // the descriptor stays open
  for (const auto& e : fs::directory_iterator(dir_)) fs::remove(e.path());
  EXPECT_EQ(*cache.GetRange("k", "v1", 0, 5, 3), "567");
  EXPECT_FALSE(cache.Has("k", "v1", 0));
}

}  // namespace
}  // namespace ferry::mount
