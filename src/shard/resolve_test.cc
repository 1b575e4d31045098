// ResolveDataset: what ShardDataset is given -> a Ferry index, with the on-the-fly index cache;
// and a split pack (PackOptions::split) read back through it.
#include "shard/resolve.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "shard/pack.h"
#include "shard/reader.h"
#include "shard/shard_test_util.h"

namespace ferry::shard {
namespace {

namespace fs = std::filesystem;

class ResolveTest : public testing::SampleTreeTest {
 protected:
  ResolveTest() : SampleTreeTest(30, 20, 1) {}

  void SetUp() override {
    SampleTreeTest::SetUp();
    auto packed =
        PackShards(registry_, (root_ / "src").string(), prefix(), {.samples_per_shard = 10});
    ASSERT_TRUE(packed.ok()) << packed.status().message();
    index_ = packed->index;
  }
  std::string prefix() const { return (root_ / "out" / "train").string(); }
  std::string shard(int i) const {
    return (root_ / "out" / ("train-00000" + std::to_string(i) + ".tar")).string();
  }
  ResolveOptions options() const { return {.cache_dir = (root_ / "cache").string(), .jobs = 2}; }
  Result<ResolvedDataset> Resolve(const std::vector<std::string>& inputs) {
    return ResolveDataset(registry_, inputs, options());
  }

  DatasetIndex index_;
};

TEST_F(ResolveTest, FerryIndexPrefixAndDirectory) {
  for (const auto& in : {prefix(), prefix() + ".index.json", (root_ / "out").string() + "/",
                         (root_ / "out").string()}) {
    auto r = Resolve({in});
    ASSERT_TRUE(r.ok()) << in << ": " << r.status().message();
    EXPECT_FALSE(r->scanned) << in;
    auto opened = OpenIndex(registry_, r->index_url);
    ASSERT_TRUE(opened.ok()) << opened.status().message();
    EXPECT_EQ(opened->index.samples(), 30u);
  }
}

TEST_F(ResolveTest, ShardsWithoutIndexAreScannedOnceThenCached) {
  fs::remove(root_ / "out" / "train.index.json");
  auto first = Resolve({(root_ / "out").string() + "/"});
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(first->scanned);
  EXPECT_EQ(first->shards, 3u);
  auto list = Resolve({shard(0), shard(1), shard(2)});  // the same shards as a list
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_TRUE(list->cached);
  EXPECT_EQ(list->index_url, first->index_url);
  auto opened = OpenIndex(registry_, first->index_url);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  ASSERT_EQ(opened->index.shards.size(), 3u);
  EXPECT_EQ(opened->index.shards[1].offsets, index_.shards[1].offsets);
  EXPECT_EQ(opened->index.shards[1].sample_crcs, index_.shards[1].sample_crcs);
  // Readable through the index's base, in another directory.
  auto reader = ShardReader::Open(registry_, first->index_url, {.plan = {.shuffle = false}});
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  int n = 0;
  while (true) {
    auto s = (*reader)->Next();
    ASSERT_TRUE(s.ok()) << s.status().message();
    if (!*s) break;
    ++n;
  }
  EXPECT_EQ(n, 30);
  // A subset is another dataset.
  auto two = Resolve({shard(0), shard(2)});
  ASSERT_TRUE(two.ok());
  EXPECT_TRUE(two->scanned);
  EXPECT_NE(two->index_url, first->index_url);
}

TEST_F(ResolveTest, Errors) {
  auto not_tar = Resolve({shard(0), prefix() + ".index.json"});
  EXPECT_EQ(not_tar.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(not_tar.status().message().find("is not a .tar shard"), std::string::npos);
  auto missing = Resolve({shard(0), (root_ / "out" / "train-000009.tar").string()});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  fs::create_directories(root_ / "empty");
  auto empty = Resolve({(root_ / "empty").string() + "/"});
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound);
  std::ofstream(root_ / "out" / "other.index.json") << "{}";
  auto two = Resolve({(root_ / "out").string() + "/"});
  EXPECT_EQ(two.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(two.status().message().find("other.index.json, train.index.json"), std::string::npos)
      << two.status().message();
}

TEST_F(ResolveTest, SplitPackIsCompleteAndDisjoint) {
  auto split = ParseSplit("train=0.8,val=0.2");
  ASSERT_TRUE(split.ok()) << split.status().message();
  auto packed = PackShards(registry_, (root_ / "src").string(), (root_ / "sp").string() + "/",
                           {.samples_per_shard = 7, .seed = 3, .split = *split});
  ASSERT_TRUE(packed.ok()) << packed.status().message();
  ASSERT_EQ(packed->splits.size(), 2u);
  EXPECT_EQ(packed->splits[0].name, "train");
  EXPECT_EQ(packed->splits[0].index.samples(), 24u);
  EXPECT_EQ(packed->splits[1].index.samples(), 6u);
  EXPECT_TRUE(fs::exists(root_ / "sp" / "val.index.json"));
  EXPECT_FALSE(ParseSplit("train=0.8,val=0.3").ok());
  EXPECT_FALSE(ParseSplit("train=1").ok());
  EXPECT_FALSE(ParseSplit("a=0.5,a=0.5").ok());
  EXPECT_FALSE(ParseSplit("a=0.5,b").ok());
}

}  // namespace
}  // namespace ferry::shard
