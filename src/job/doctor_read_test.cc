#include "job/doctor_read.h"

#include <gtest/gtest.h>

#include <string>

#include "storage/memory/memory_store.h"
#include "transfer/copy_options.h"

namespace ferry::job {
namespace {

TEST(PredictCopySecondsTest, AddsSmallFilesAtTheirRateAndLargeBytesAtThroughput) {
  // 20,000 files at 1,000/s and 1 GiB at 512 MiB/s: 20 s + 2 s.
  auto s = PredictCopySeconds(20000, 1ull << 30, 1000, 512);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(*s, 22.0);
}

TEST(PredictCopySecondsTest, NothingToCopyTakesNoTime) {
  EXPECT_EQ(PredictCopySeconds(0, 0, 0, 0), 0.0);
}

TEST(PredictCopySecondsTest, MissingRateForWorkIsNoPrediction) {
  EXPECT_FALSE(PredictCopySeconds(10, 0, 0, 100));
  EXPECT_FALSE(PredictCopySeconds(0, 1 << 20, 50, 0));
}

TEST(PredictCopySecondsTest, LargeBytesFallBackToTheSmallFilesByteRate) {
  // No large file was read: 8 MiB at the small files' 4 MiB/s.
  auto s = PredictCopySeconds(0, 8ull << 20, 0, 0, 4.0 * (1 << 20));
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(*s, 2.0);
}

TEST(ProbeReadsTest, ReadsSmallAndLargeFilesInParallelAndWritesNothing) {
  auto store = storage::MakeMemoryStore();
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(store->WriteAll("tree/d/f" + std::to_string(i), std::string(1000, 'x')).ok());
  }
  ASSERT_TRUE(store->WriteAll("tree/big", std::string(3 << 20, 'b')).ok());
  ASSERT_TRUE(store->WriteAll("other/x", "outside the prefix").ok());
  ReadProbeOptions o{.small_file_bytes = 1 << 20};
  auto p = ProbeReads(*store, "tree", o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->concurrency, transfer::CopyOptions{}.transfers);
  EXPECT_TRUE(p->listing_complete);
  EXPECT_EQ(p->listed_files, 51u);
  EXPECT_EQ(p->listed_small_files, 50u);
  EXPECT_EQ(p->listed_large_bytes, 3u << 20);
  EXPECT_EQ(p->small_files_read, 50u);
  EXPECT_EQ(p->small_bytes_read, 50000u);
  EXPECT_GT(p->small_files_per_s, 0);
  EXPECT_EQ(p->large_files_read, 1u);
  EXPECT_EQ(p->large_bytes_read, 3u << 20);
  EXPECT_GT(p->read_mib_s, 0);
  ASSERT_TRUE(p->predicted_copy_seconds);
  size_t keys = 0;
  ASSERT_TRUE(store
                  ->ListAll({.prefix = ""},
                            [&](const storage::ListPage& page) {
                              keys += page.objects.size();
                              return Status();
                            })
                  .ok());
  EXPECT_EQ(keys, 52u);
}

TEST(ProbeReadsTest, StopsAtTheLimitsAndSaysSo) {
  auto store = storage::MakeMemoryStore();
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(store->WriteAll("t/f" + std::to_string(i), "abc").ok());
  }
  ASSERT_TRUE(store->WriteAll("t/zbig", std::string(4 << 20, 'b')).ok());
  auto p = ProbeReads(
      *store, "t/", {.concurrency = 2, .list_limit = 20, .small_files = 5, .large_bytes = 1 << 20});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->concurrency, 2);
  EXPECT_FALSE(p->listing_complete);
  EXPECT_EQ(p->listed_files, 20u);
  EXPECT_EQ(p->small_files_read, 5u);
  EXPECT_EQ(p->large_files_read, 0u);  // zbig sorts after the 20 listed
}

TEST(ProbeReadsTest, ReadsOneObjectNamedExactly) {
  auto store = storage::MakeMemoryStore();
  ASSERT_TRUE(store->WriteAll("a/file", std::string(2 << 20, 'z')).ok());
  ASSERT_TRUE(store->WriteAll("a/file2", "not this one").ok());
  auto p = ProbeReads(*store, "a/file", {});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->listed_files, 1u);
  EXPECT_EQ(p->large_bytes_read, 2u << 20);
}

TEST(ProbeReadsTest, AnEmptyPrefixReadsNothingAndPredictsZero) {
  auto store = storage::MakeMemoryStore();
  auto p = ProbeReads(*store, "nothing/", {});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->listed_files, 0u);
  EXPECT_EQ(p->predicted_copy_seconds, 0.0);
}

}  // namespace
}  // namespace ferry::job
