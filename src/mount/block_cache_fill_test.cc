#include "mount/block_cache_fill.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>

#include "base/mutex.h"
#include "storage/memory/memory_store.h"
#include "storage/testing/fault_store.h"

namespace ferry::mount {
namespace {

constexpr uint64_t kB = BlockCache::kBlock;

class BlockCacheFillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (size_t i = 0; i < data_.size(); ++i) data_[i] = static_cast<char>(i % 241);
    etag_ = store_->WriteAll("obj", data_)->etag;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::shared_ptr<storage::Store> memory_ = storage::MakeMemoryStore();
  std::shared_ptr<storage::testing::FaultInjectingStore> store_ =
      std::make_shared<storage::testing::FaultInjectingStore>(memory_);
  std::string data_ = std::string(20 * kB + 5, '\0');  // 21 blocks: 3 spans of 8 blocks
  std::string etag_;
  std::string dir_ = ::testing::TempDir() + "ferry-fill-test-" + std::to_string(::getpid());
};

TEST_F(BlockCacheFillTest, FetchesEveryBlockSoReadsNeedNoStore) {
  BlockCache cache(dir_, 100 * kB);
  auto object = std::make_shared<PinnedObject>(store_, "obj", etag_, data_.size(), &cache);
  ThreadPool pool(3);
  {
    BlockCacheFill fill(object, pool);
    pool.WaitIdle();
  }
  EXPECT_EQ(store_->reads(), 3);  // one GET per span of 8 blocks
  for (uint64_t b = 0; b < 21; ++b) EXPECT_TRUE(cache.Has("obj", etag_, b)) << b;
  ASSERT_TRUE(memory_->Delete("obj").ok());
  EXPECT_EQ(*object->Read(20 * kB - 3, 8), data_.substr(20 * kB - 3));
}

TEST_F(BlockCacheFillTest, HandsEverySpanItFetchesToTheCallback) {
  BlockCache cache(dir_, 100 * kB);
  auto object = std::make_shared<PinnedObject>(store_, "obj", etag_, data_.size(), &cache);
  ThreadPool pool(3);
  Mutex mu;
  std::map<uint64_t, std::string> spans;
  {
    BlockCacheFill fill(object, pool, [&](uint64_t offset, std::string_view bytes) {
      MutexLock lock(mu);
      spans[offset] = std::string(bytes);
    });
    pool.WaitIdle();
  }
  MutexLock lock(mu);
  ASSERT_EQ(spans.size(), 3u);
  std::string joined;
  for (const auto& [offset, bytes] : spans) {
    EXPECT_EQ(offset, joined.size());
    joined += bytes;
  }
  EXPECT_EQ(joined, data_);
}

TEST_F(BlockCacheFillTest, EachGetHoldsALeaseOnTheMemoryBudget) {
  BlockCache cache(dir_, 100 * kB);
  auto object = std::make_shared<PinnedObject>(store_, "obj", etag_, data_.size(), &cache);
  MemoryBudget budget(8 * kB);  // one span at a time
  ThreadPool pool(3);
  Mutex mu;
  uint64_t peak = 0;
  {
    BlockCacheFill fill(
        object, pool,
        [&](uint64_t, std::string_view) {
          MutexLock lock(mu);
          peak = std::max(peak, budget.used());
        },
        &budget);
    pool.WaitIdle();
  }
  EXPECT_EQ(store_->reads(), 3);
  EXPECT_LE(peak, 8 * kB);
  EXPECT_GT(peak, 0u);
  EXPECT_EQ(budget.used(), 0u);  // every lease returned
  for (uint64_t b = 0; b < 21; ++b) EXPECT_TRUE(cache.Has("obj", etag_, b)) << b;
}

TEST_F(BlockCacheFillTest, SpansAlreadyCachedAreNotFetchedAgain) {
  BlockCache cache(dir_, 100 * kB);
  auto object = std::make_shared<PinnedObject>(store_, "obj", etag_, data_.size(), &cache);
  for (uint64_t b = 8; b < 16; ++b) cache.Put("obj", etag_, b, data_.substr(b * kB, kB));
  cache.Put("obj", etag_, 0, data_.substr(0, kB));  // one block of a span: the span is fetched
  ThreadPool pool(2);
  {
    BlockCacheFill fill(object, pool);
    pool.WaitIdle();
  }
  EXPECT_EQ(store_->reads(), 2);
  for (uint64_t b = 0; b < 21; ++b) EXPECT_TRUE(cache.Has("obj", etag_, b)) << b;
}

TEST_F(BlockCacheFillTest, AFailingStoreEndsTheFillAndCachesNothing) {
  BlockCache cache(dir_, 100 * kB);
  auto object = std::make_shared<PinnedObject>(store_, "obj", etag_, data_.size(), &cache);
  store_->FailReadsFrom(1);
  ThreadPool pool(2);
  {
    BlockCacheFill fill(object, pool);
    pool.WaitIdle();
  }
  EXPECT_LE(store_->reads(), BlockCacheFill::kStreams);  // one failed GET per task at most
  EXPECT_FALSE(cache.Has("obj", etag_, 0));
}

// The fill's tasks use the cache: once the fill is destroyed, none may still run (under ASan a
// task outliving it would touch the destroyed cache).
TEST_F(BlockCacheFillTest, DestroyingTheFillWaitsForItsTasks) {
  auto cache = std::make_unique<BlockCache>(dir_, 100 * kB);
  auto object = std::make_shared<PinnedObject>(store_, "obj", etag_, data_.size(), cache.get());
  ThreadPool pool(4);
  auto fill = std::make_unique<BlockCacheFill>(object, pool);
  fill.reset();
  cache.reset();
  pool.WaitIdle();
}

}  // namespace
}  // namespace ferry::mount
