// ferry shard index / verify / cat as library calls, on shards packed into a local directory.
#include "shard/dataset_ops.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "shard/pack.h"
#include "shard/shard_test_util.h"

namespace ferry::shard {
namespace {

namespace fs = std::filesystem;

// 40 samples packed 10 to a shard: train-000000.tar ... train-000003.tar + train.index.json.
class DatasetOpsTest : public testing::SampleTreeTest {
 protected:
  DatasetOpsTest() : SampleTreeTest(40, 50, 3) {}

  void SetUp() override {
    SampleTreeTest::SetUp();
    auto packed =
        PackShards(registry_, (root_ / "src").string(), prefix(), {.samples_per_shard = 10});
    ASSERT_TRUE(packed.ok()) << packed.status().message();
    packed_ = packed->index;
  }

  std::string prefix() const { return (root_ / "out" / "train").string(); }
  fs::path shard(int i) const {
    return root_ / "out" / ("train-00000" + std::to_string(i) + ".tar");
  }
  // Flips one byte of `file` at `offset`.
  static void Flip(const fs::path& file, uint64_t offset) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.read(&c, 1);
    f.seekp(static_cast<std::streamoff>(offset));
    c = static_cast<char>(c ^ 0x20);
    f.write(&c, 1);
  }

  DatasetIndex packed_;
};

TEST_F(DatasetOpsTest, IndexOfPackedShardsEqualsThePackersIndex) {
  fs::remove(root_ / "out" / "train.index.json");
  auto written = IndexShards(registry_, {(root_ / "out").string() + "/"},
                             (root_ / "out" / "again.index.json").string(), 3);
  ASSERT_TRUE(written.ok()) << written.status().message();
  EXPECT_EQ(written->url, (root_ / "out" / "again.index.json").string());
  ASSERT_EQ(written->index.shards.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const ShardInfo &got = written->index.shards[i], &want = packed_.shards[i];
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.size, want.size);
    EXPECT_EQ(got.offsets, want.offsets);
    EXPECT_EQ(got.sample_crcs, want.sample_crcs);
    EXPECT_EQ(got.crc32c, want.crc32c);
  }
  // Readable where it was written: the dataset verifies against it.
  auto report = VerifyDataset(registry_, (root_ / "out" / "again.index.json").string(), 2);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->status().ok()) << report->status().message();
}

TEST_F(DatasetOpsTest, IndexNamesShardsOutsideItsDirectoryAndFindsNothingToIndex) {
  fs::create_directories(root_ / "elsewhere");
  auto outside = IndexShards(registry_, {shard(0).string()},
                             (root_ / "elsewhere" / "x.index.json").string(), 1);
  EXPECT_EQ(outside.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(outside.status().message().find("is not under the index's directory"),
            std::string::npos);
  auto none = IndexShards(registry_, {(root_ / "src").string() + "/"},
                          (root_ / "src" / "x.index.json").string(), 1);
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(none.status().message(), "no .tar shards found");
}

TEST_F(DatasetOpsTest, VerifyNamesTheCorruptSampleAndTheResizedShard) {
  auto clean = VerifyDataset(registry_, prefix(), 4);
  ASSERT_TRUE(clean.ok()) << clean.status().message();
  EXPECT_TRUE(clean->problems.empty());
  EXPECT_EQ(clean->index.shards.size(), 4u);

  const ShardInfo& s1 = packed_.shards[1];
  Flip(shard(1), s1.offsets[2] + 512);  // the first data byte of sample 2
  std::ofstream(shard(3), std::ios::app) << std::string(512, '\0');
  auto report = VerifyDataset(registry_, prefix(), 4);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->problems.size(), 2u);
  EXPECT_EQ(report->problems[0], "train-000001.tar: sample 2 at offset " +
                                     std::to_string(s1.offsets[2]) +
                                     ": CRC32C of its data does not match the index");
  EXPECT_EQ(report->problems[1],
            "train-000003.tar: " + std::to_string(packed_.shards[3].size + 512) +
                " bytes, the index says " + std::to_string(packed_.shards[3].size));
  EXPECT_EQ(report->status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(report->status().message(), "2 of 4 shard(s) do not match '" + report->index_url + "'");
}

TEST_F(DatasetOpsTest, VerifyReportsAMissingShardAndFailsWithoutAnIndex) {
  fs::remove(shard(2));
  auto report = VerifyDataset(registry_, prefix(), 1);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->problems.size(), 1u);
  EXPECT_NE(report->problems[0].find("train-000002.tar"), std::string::npos);
  EXPECT_FALSE(VerifyDataset(registry_, (root_ / "nothing" / "x").string(), 1).ok());
}

TEST(CompareShard, ChecksSizeThenSamplesThenSampleDataThenTheWholeFile) {
  ShardInfo want{.name = "s.tar",
                 .size = 4096,
                 .samples = 2,
                 .crc32c = "0000abcd",
                 .offsets = {0, 1024},
                 .sample_crcs = {1, 2}};
  EXPECT_EQ(CompareShard(want, want), "");
  ShardInfo got = want;
  got.crc32c = "ffff0000";
  EXPECT_EQ(CompareShard(want, got), "s.tar: CRC32C ffff0000, the index says 0000abcd");
  got.sample_crcs = {1, 3};
  EXPECT_EQ(CompareShard(want, got),
            "s.tar: sample 1 at offset 1024: CRC32C of its data does not match the index");
  got.offsets = {0, 1536};
  EXPECT_EQ(CompareShard(want, got),
            "s.tar: 2 samples (or their offsets) differ from the index's 2");
  got.size = 5120;
  EXPECT_EQ(CompareShard(want, got), "s.tar: 5120 bytes, the index says 4096");
  // An index without per-sample or whole-file CRCs (older, or made by other tools) checks less.
  ShardInfo bare = want;
  bare.sample_crcs.clear();
  bare.crc32c.clear();
  ShardInfo other = want;
  other.sample_crcs = {7, 7};
  other.crc32c = "12345678";
  EXPECT_EQ(CompareShard(bare, other), "");
}

TEST_F(DatasetOpsTest, ReadShardMemberReadsOneFileOrSaysItIsNotThere) {
  storage::StoreRegistry& r = registry_;
  auto opened = r.Open(shard(0).string());
  ASSERT_TRUE(opened.ok());
  auto data = ReadShardMember(*opened->store, opened->key, shard(0).string(), "d/1003.cls");
  ASSERT_TRUE(data.ok()) << data.status().message();
  EXPECT_EQ(*data, "3");
  auto missing = ReadShardMember(*opened->store, opened->key, shard(0).string(), "d/9999.cls");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "no file 'd/9999.cls' in shard '" + shard(0).string() + "'");
}

}  // namespace
}  // namespace ferry::shard
