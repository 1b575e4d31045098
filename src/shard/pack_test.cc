#include "shard/pack.h"

#include <gtest/gtest.h>

namespace ferry::shard {
namespace {

DatasetIndex WithShards(size_t shards, uint64_t samples_each, uint64_t bytes_each) {
  DatasetIndex index;
  for (size_t i = 0; i < shards; ++i) {
    ShardInfo s;
    s.name = "s-" + std::to_string(i) + ".tar";
    s.samples = samples_each;
    s.size = bytes_each;
    index.shards.push_back(s);
  }
  return index;
}

TEST(FewShardsWarning, NamesTheNumbersAndTheTargetSizeThatMakesEnough) {
  auto one = FewShardsWarning(WithShards(1, 20000, 200ull << 20), "");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(*one,
            "1 shard(s) for 20000 samples: readers take whole shards, so DataLoader workers "
            "beyond 1 (per rank) would idle; --samples-per-shard 2500 makes 8");
  auto split = FewShardsWarning(WithShards(2, 10, 1000), "val");
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->rfind("val: 2 shard(s) for 20 samples", 0), 0u) << *split;
  EXPECT_NE(split->find("--samples-per-shard 2 makes 10"), std::string::npos);  // at least 8
}

TEST(FewShardsWarning, NothingToSayWithEnoughShardsOrTooFewSamples) {
  EXPECT_FALSE(FewShardsWarning(WithShards(8, 100, 1 << 20), "").has_value());
  EXPECT_FALSE(FewShardsWarning(WithShards(1, 7, 1 << 20), "").has_value());
  EXPECT_FALSE(FewShardsWarning(DatasetIndex{}, "").has_value());
}

}  // namespace
}  // namespace ferry::shard
