#include "mount/read_window.h"

#include <gtest/gtest.h>

#include "storage/memory/memory_store.h"
#include "storage/testing/fault_store.h"

namespace ferry::mount {
namespace {

constexpr uint64_t kPart = 64 << 10;

class ReadWindowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (size_t i = 0; i < data_.size(); ++i) data_[i] = static_cast<char>(i % 239);
    object_ = std::make_shared<PinnedObject>(store_, "obj", memory_->WriteAll("obj", data_)->etag,
                                             data_.size());
  }

  // Reads [offset, end) the way FileReader does: from the window, the rest directly, then moves
  // the window on (keeping parts from `keep_from`).
  std::string Read(ReadWindow& w, uint64_t offset, uint64_t end, uint64_t keep_from = 0) {
    std::string out;
    auto pos = w.ReadInto(offset, end, out);
    EXPECT_TRUE(pos.ok());
    if (pos.ok() && *pos < end) out += *object_->Read(*pos, end - *pos);
    w.Advance(keep_from, end);
    return out;
  }

  std::shared_ptr<storage::Store> memory_ = storage::MakeMemoryStore();
  std::shared_ptr<storage::testing::FaultInjectingStore> store_ =
      std::make_shared<storage::testing::FaultInjectingStore>(memory_);
  std::string data_ = std::string(16 * kPart, '\0');
  std::shared_ptr<PinnedObject> object_;
  MemoryBudget budget_{1 << 30};
  ThreadPool pool_{4};
  PrefetchOptions options_{.part_size = kPart, .initial_window = kPart, .max_window = 4 * kPart};
};

TEST_F(ReadWindowTest, PartsAreFetchedAheadOfTheReader) {
  ReadWindow w(object_, options_, budget_, pool_);
  w.Restart(0);
  EXPECT_EQ(Read(w, 0, 1000), data_.substr(0, 1000));
  EXPECT_EQ(w.end(), 2 * kPart);  // the part being read and the next one
  pool_.WaitIdle();
  ASSERT_TRUE(memory_->Delete("obj").ok());
  std::string out;
  auto pos = w.ReadInto(1000, 2 * kPart, out);  // fetched already
  ASSERT_TRUE(pos.ok());
  EXPECT_EQ(*pos, 2 * kPart);
  EXPECT_EQ(out, data_.substr(1000, 2 * kPart - 1000));
}

TEST_F(ReadWindowTest, TheTargetDoublesWithEachPartConsumedUpToTheMaximum) {
  ReadWindow w(object_, options_, budget_, pool_);
  w.Restart(0);
  EXPECT_EQ(w.target(), kPart);
  Read(w, 0, kPart);
  EXPECT_EQ(w.target(), 2 * kPart);
  Read(w, kPart, 2 * kPart);
  EXPECT_EQ(w.target(), 4 * kPart);
  Read(w, 2 * kPart, 3 * kPart);
  EXPECT_EQ(w.target(), 4 * kPart);  // max_window
  EXPECT_LE(w.end(), 3 * kPart + 4 * kPart);
  w.Reset();  // a random read: back to the start
  EXPECT_EQ(w.target(), kPart);
  EXPECT_EQ(w.begin(), w.end());
}

TEST_F(ReadWindowTest, PartsHoldTheBudgetUntilTheyAreDropped) {
  ReadWindow w(object_, options_, budget_, pool_);
  w.Restart(0);
  EXPECT_EQ(Read(w, 0, kPart), data_.substr(0, kPart));
  EXPECT_EQ(budget_.used(), 3 * kPart);  // [0, 3 parts): read, and requested ahead
  EXPECT_EQ(Read(w, kPart, 2 * kPart, /*keep_from=*/2 * kPart), data_.substr(kPart, kPart));
  EXPECT_EQ(w.begin(), 2 * kPart);  // the parts that end before keep_from are gone
  EXPECT_EQ(budget_.used(), w.end() - w.begin());
  w.Restart(8 * kPart);
  EXPECT_EQ(budget_.used(), 0u);
}

TEST_F(ReadWindowTest, WhenTheBudgetIsSpentTheWindowEndsEarly) {
  MemoryBudget small(2 * kPart);
  options_.initial_window = 8 * kPart;
  ReadWindow w(object_, options_, small, pool_);
  w.Restart(0);
  std::string out;
  auto pos = w.ReadInto(0, 5 * kPart, out);
  ASSERT_TRUE(pos.ok());
  EXPECT_EQ(*pos, 2 * kPart);  // the reader fetches the rest itself
  EXPECT_EQ(out, data_.substr(0, 2 * kPart));
  EXPECT_EQ(small.used(), 2 * kPart);
}

TEST_F(ReadWindowTest, AFailedPartDropsTheWindow) {
  ReadWindow w(object_, options_, budget_, pool_);
  store_->FailReadsFrom(1);
  w.Restart(4 * kPart);
  std::string out;
  auto pos = w.ReadInto(4 * kPart, 5 * kPart, out);
  EXPECT_EQ(pos.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(budget_.used(), 0u);
  EXPECT_EQ(w.begin(), 0u);
  EXPECT_EQ(w.end(), 0u);
}

TEST_F(ReadWindowTest, PartsInFlightAreWaitedForWhenTheWindowEnds) {
  {
    ReadWindow w(object_, options_, budget_, pool_);
    w.Restart(0);
    w.Advance(0, 0);  // requests parts, reads none
  }
  EXPECT_EQ(budget_.used(), 0u);
  pool_.WaitIdle();
}

}  // namespace
}  // namespace ferry::mount
