#include "mount/pinned_object.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "storage/memory/memory_store.h"
#include "storage/testing/fault_store.h"

namespace ferry::mount {
namespace {

constexpr uint64_t kB = BlockCache::kBlock;

class PinnedObjectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (size_t i = 0; i < data_.size(); ++i) data_[i] = static_cast<char>(i * 7 % 251);
    etag_ = store_->WriteAll("obj", data_)->etag;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::shared_ptr<storage::Store> memory_ = storage::MakeMemoryStore();
  std::shared_ptr<storage::testing::FaultInjectingStore> store_ =
      std::make_shared<storage::testing::FaultInjectingStore>(memory_);
  std::string data_ = std::string(3 * kB + 100, '\0');
  std::string etag_;
  std::string dir_ = ::testing::TempDir() + "ferry-pinned-test-" + std::to_string(::getpid());
};

TEST_F(PinnedObjectTest, ReadsRangesOfItsVersionOnly) {
  PinnedObject object(store_, "obj", etag_, data_.size());
  EXPECT_EQ(*object.Read(5, 10), data_.substr(5, 10));
  EXPECT_EQ(*object.Read(data_.size() - 4, 100), data_.substr(data_.size() - 4));  // cut at the end
  ASSERT_TRUE(memory_->WriteAll("obj", "another version").ok());
  EXPECT_EQ(object.Read(0, 10).status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(memory_->Delete("obj").ok());
  EXPECT_FALSE(object.Read(0, 10).ok());
}

TEST_F(PinnedObjectTest, WithACacheOneGetFillsTheBlocksAndLaterReadsStayLocal) {
  BlockCache cache(dir_, 100 * kB);
  PinnedObject object(store_, "obj", etag_, data_.size(), &cache);
  // Bytes across blocks 0 and 1: one GET of both blocks.
  EXPECT_EQ(*object.Read(kB - 10, 20), data_.substr(kB - 10, 20));
  EXPECT_EQ(store_->reads(), 1);
  EXPECT_TRUE(cache.Has("obj", etag_, 0));
  EXPECT_TRUE(cache.Has("obj", etag_, 1));
  EXPECT_FALSE(cache.Has("obj", etag_, 2));
  EXPECT_EQ(*object.Read(100, 2 * kB - 200), data_.substr(100, 2 * kB - 200));
  EXPECT_EQ(store_->reads(), 1);  // from the cache
  // A read that needs an uncached block fetches its block-aligned span (the short last block).
  EXPECT_EQ(*object.Read(3 * kB + 50, 1000), data_.substr(3 * kB + 50));
  EXPECT_EQ(store_->reads(), 2);
  EXPECT_TRUE(cache.Has("obj", etag_, 3));
}

TEST_F(PinnedObjectTest, GetBypassesTheCache) {
  BlockCache cache(dir_, 100 * kB);
  PinnedObject object(store_, "obj", etag_, data_.size(), &cache);
  EXPECT_EQ(*object.Get(0, 10), data_.substr(0, 10));
  EXPECT_FALSE(cache.Has("obj", etag_, 0));
}

TEST_F(PinnedObjectTest, AVersionShorterThanItsSizeIsDataLoss) {
  PinnedObject object(store_, "obj", etag_, data_.size() + kB);  // a wrong size
  EXPECT_EQ(object.Read(3 * kB, 200).status().code(), StatusCode::kDataLoss);
  BlockCache cache(dir_, 100 * kB);
  PinnedObject cached(store_, "obj", etag_, data_.size() + kB, &cache);
  EXPECT_EQ(cached.Read(3 * kB + 200, 10).status().code(), StatusCode::kDataLoss);
  EXPECT_FALSE(cache.Has("obj", etag_, 3));
}

}  // namespace
}  // namespace ferry::mount
