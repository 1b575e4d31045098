#include "mount/small_files.h"

#include <gtest/gtest.h>

#include "storage/memory/memory_store.h"
#include "storage/testing/fault_store.h"

namespace ferry::mount {
namespace {

class SmallFilesTest : public ::testing::Test {
 protected:
  std::string Put(const std::string& key, const std::string& data) {
    return memory_->WriteAll(key, data)->etag;
  }

  std::shared_ptr<storage::Store> memory_ = storage::MakeMemoryStore();
  std::shared_ptr<storage::testing::FaultInjectingStore> store_ =
      std::make_shared<storage::testing::FaultInjectingStore>(memory_);
  MemoryBudget budget_{100};
  ThreadPool pool_{2};
};

TEST_F(SmallFilesTest, FetchesInTheBackgroundAndHandsDataAndLeaseToTheOpener) {
  SmallFiles small(store_, budget_, pool_, 8);
  std::string etag = Put("a", "0123456789");
  small.Prefetch("a", etag, 10);
  EXPECT_EQ(budget_.used(), 10u);
  pool_.WaitIdle();
  ASSERT_TRUE(memory_->Delete("a").ok());  // fetched already
  auto whole = small.Take("a", etag);
  ASSERT_TRUE(whole);
  EXPECT_EQ(*whole->data.get(), "0123456789");
  EXPECT_EQ(budget_.used(), 10u);  // the opener holds it now
  whole.reset();
  EXPECT_EQ(budget_.used(), 0u);
  EXPECT_FALSE(small.Take("a", etag));  // taken once
}

TEST_F(SmallFilesTest, AnotherVersionIsNotHandedOver) {
  SmallFiles small(store_, budget_, pool_, 8);
  std::string etag = Put("a", "v1");
  small.Prefetch("a", etag, 2);
  pool_.WaitIdle();
  EXPECT_FALSE(small.Take("a", "another etag"));
  EXPECT_EQ(budget_.used(), 0u);
  EXPECT_FALSE(small.Take("a", etag));  // dropped
}

TEST_F(SmallFilesTest, NothingIsFetchedBeyondTheBudgetOrWithoutAnETag) {
  SmallFiles small(store_, budget_, pool_, 8);
  std::string etag = Put("big", std::string(101, 'x'));
  small.Prefetch("big", etag, 101);
  small.Prefetch("a", "", 1);
  pool_.WaitIdle();
  EXPECT_EQ(store_->reads(), 0);
  EXPECT_FALSE(small.Take("big", etag));
  EXPECT_FALSE(small.Take("a", ""));
}

TEST_F(SmallFilesTest, OldEntriesAreDroppedBeyondTheCapacity) {
  SmallFiles small(store_, budget_, pool_, 2);
  std::string a = Put("a", "a"), b = Put("b", "b"), c = Put("c", "c");
  small.Prefetch("a", a, 1);
  small.Prefetch("b", b, 1);
  small.Prefetch("c", c, 1);
  EXPECT_EQ(budget_.used(), 2u);
  EXPECT_FALSE(small.Take("a", a));
  EXPECT_TRUE(small.Take("b", b));
  EXPECT_TRUE(small.Take("c", c));
}

// A file read again (the next epoch of a training loop) is fetched again; the first fetch's
// place in the order must not push the second one out.
TEST_F(SmallFilesTest, AFileFetchedAgainKeepsItsNewPlace) {
  SmallFiles small(store_, budget_, pool_, 2);
  std::string a = Put("a", "a"), b = Put("b", "b");
  small.Prefetch("a", a, 1);
  ASSERT_TRUE(small.Take("a", a));
  small.Prefetch("b", b, 1);
  small.Prefetch("a", a, 1);  // order: a (taken), b, a
  EXPECT_TRUE(small.Take("a", a));
  EXPECT_TRUE(small.Take("b", b));
}

}  // namespace
}  // namespace ferry::mount
