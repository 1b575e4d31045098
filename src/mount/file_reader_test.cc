#include "mount/file_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "storage/memory/memory_store.h"
#include "storage/testing/fault_store.h"

namespace ferry::mount {
namespace {

constexpr uint64_t kB = BlockCache::kBlock;

class FileReaderTest : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::shared_ptr<PinnedObject> Put(uint64_t size, BlockCache* cache = nullptr) {
    data_.resize(size);
    for (size_t i = 0; i < size; ++i) data_[i] = static_cast<char>(i % 233);
    auto info = memory_->WriteAll("obj", data_);
    return std::make_shared<PinnedObject>(store_, "obj", info->etag, size, cache);
  }

  std::shared_ptr<storage::Store> memory_ = storage::MakeMemoryStore();
  std::shared_ptr<storage::testing::FaultInjectingStore> store_ =
      std::make_shared<storage::testing::FaultInjectingStore>(memory_);
  std::string data_;
  MemoryBudget budget_{1 << 30};
  ThreadPool pool_{4};
  PrefetchOptions options_{
      .part_size = 64 << 10, .initial_window = 64 << 10, .max_window = 256 << 10};
  std::string dir_ = ::testing::TempDir() + "ferry-reader-test-" + std::to_string(::getpid());
};

TEST_F(FileReaderTest, SequentialReadsReturnTheObjectAndAllTheirMemory) {
  auto object = Put(kB + 123);
  {
    FileReader reader(object, options_, budget_, pool_);
    std::string got;
    for (uint64_t off = 0;; off += 4096) {
      auto d = reader.Read(off, 4096);
      ASSERT_TRUE(d.ok());
      if (d->empty()) break;
      got += *d;
    }
    EXPECT_EQ(got, data_);
    EXPECT_GT(budget_.used(), 0u);  // read-ahead parts, until the reader goes
  }
  EXPECT_EQ(budget_.used(), 0u);
}

TEST_F(FileReaderTest, ReadsBehindTheWindowAreFetchedDirectly) {
  auto object = Put(8 * kB);
  FileReader reader(object, options_, budget_, pool_);
  for (uint64_t off = 0; off < 4 * kB; off += 64 << 10)
    ASSERT_TRUE(reader.Read(off, 64 << 10).ok());
  // 1 MiB behind the last read: within the tolerance (still sequential), but dropped already.
  auto late = reader.Read(3 * kB - 4096, 100);
  ASSERT_TRUE(late.ok());
  EXPECT_EQ(*late, data_.substr(3 * kB - 4096, 100));
  EXPECT_EQ(*reader.Read(4 * kB, 10), data_.substr(4 * kB, 10));  // and the run goes on
}

TEST_F(FileReaderTest, ASmallObjectReadRandomlyTwiceIsFetchedWholeOnce) {
  auto object = Put(2 * kB);
  FileReader reader(object, options_, budget_, pool_);
  EXPECT_EQ(*reader.Read(1500000, 100), data_.substr(1500000, 100));  // random
  EXPECT_EQ(*reader.Read(700000, 100), data_.substr(700000, 100));    // random: fetched whole
  EXPECT_EQ(budget_.used(), 2 * kB);
  const int reads = store_->reads();
  EXPECT_EQ(*reader.Read(12345, 100), data_.substr(12345, 100));
  EXPECT_EQ(*reader.Read(2 * kB - 5, 100), data_.substr(2 * kB - 5));
  EXPECT_EQ(store_->reads(), reads);  // from memory
}

TEST_F(FileReaderTest, RandomReadsWithoutBudgetFetchOnlyWhatTheyAsk) {
  auto object = Put(2 * kB);
  MemoryBudget none(0);
  FileReader reader(object, options_, none, pool_);
  for (uint64_t off : {1500000u, 700000u, 12345u}) {
    EXPECT_EQ(*reader.Read(off, 100), data_.substr(off, 100));
  }
  EXPECT_EQ(store_->reads(), 3);
}

TEST_F(FileReaderTest, ALargeObjectReadRandomlyTwiceIsFilledIntoTheDiskCache) {
  BlockCache cache(dir_, 100 * kB);
  auto object = Put(6 * kB + 7, &cache);
  FileReader reader(object, options_, budget_, pool_);
  EXPECT_EQ(*reader.Read(5 * kB, 100), data_.substr(5 * kB, 100));
  EXPECT_EQ(*reader.Read(kB, 100), data_.substr(kB, 100));  // the fill starts
  pool_.WaitIdle();
  for (uint64_t b = 0; b < 7; ++b) EXPECT_TRUE(cache.Has("obj", object->etag(), b)) << b;
  EXPECT_EQ(budget_.used(), 0u);  // the disk holds it, not memory
}

TEST_F(FileReaderTest, AWholeObjectHandedOverServesEveryRead) {
  auto object = Put(1000);
  FileReader reader(object, options_, budget_, pool_);
  std::promise<Result<std::string>> fetched;
  fetched.set_value(data_);
  reader.UseWhole({.data = fetched.get_future().share(), .lease = *budget_.TryTake(1000)});
  ASSERT_TRUE(memory_->Delete("obj").ok());
  EXPECT_EQ(*reader.Read(900, 500), data_.substr(900));
  EXPECT_EQ(*reader.Read(10, 10), data_.substr(10, 10));
  EXPECT_EQ(store_->reads(), 0);
}

TEST_F(FileReaderTest, AFailedWholeObjectFallsBackToRangesAndReturnsItsMemory) {
  auto object = Put(1000);
  FileReader reader(object, options_, budget_, pool_);
  std::promise<Result<std::string>> failed;
  failed.set_value(Status(StatusCode::kUnavailable, "injected"));
  reader.UseWhole({.data = failed.get_future().share(), .lease = *budget_.TryTake(1000)});
  EXPECT_EQ(*reader.Read(500, 10), data_.substr(500, 10));  // random: no read-ahead either
  EXPECT_EQ(budget_.used(), 0u);
}

TEST_F(FileReaderTest, AReplacedObjectFailsEveryReadPath) {
  auto object = Put(2 * kB);
  FileReader reader(object, options_, budget_, pool_);
  ASSERT_TRUE(reader.Read(0, 100).ok());
  ASSERT_TRUE(memory_->WriteAll("obj", "v2").ok());
  EXPECT_EQ(reader.Read(kB + 500000, 10).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(reader.Read(100, 10).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(reader.Read(2 * kB, 10)->empty());  // at the end: nothing to read
}

}  // namespace
}  // namespace ferry::mount
