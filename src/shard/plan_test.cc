#include "shard/plan.h"

#include <gtest/gtest.h>

#include <set>

namespace ferry::shard {
namespace {

DatasetIndex IndexWith(std::vector<uint64_t> counts) {
  DatasetIndex idx;
  for (size_t i = 0; i < counts.size(); ++i) {
    idx.shards.push_back({.name = "s" + std::to_string(i),
                          .samples = counts[i],
                          .offsets = std::vector<uint64_t>(counts[i])});
  }
  return idx;
}

// Global identity of a planned sample: (shard, sample within it).
std::vector<std::pair<uint32_t, uint64_t>> Global(const EpochPlan& p) {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (uint64_t input : p.order) {
    size_t k = 0;
    while (p.input_start[k + 1] <= input) ++k;
    out.push_back({p.shards[k], input - p.input_start[k]});
  }
  return out;
}

TEST(Plan, EverySampleExactlyOnceAcrossRanksAndWorkers) {
  auto idx = IndexWith({10, 7, 13, 1, 9, 10, 4});
  for (bool shuffle : {false, true}) {
    std::multiset<std::pair<uint32_t, uint64_t>> seen;
    for (int rank = 0; rank < 2; ++rank) {
      for (int worker = 0; worker < 2; ++worker) {
        auto p = MakePlan(idx, {.seed = 5,
                                .epoch = 1,
                                .shuffle = shuffle,
                                .shuffle_buffer = 8,
                                .split = {rank, 2, worker, 2}});
        ASSERT_TRUE(p.ok());
        for (auto g : Global(*p)) seen.insert(g);
      }
    }
    EXPECT_EQ(seen.size(), idx.samples());
    EXPECT_EQ(std::set(seen.begin(), seen.end()).size(), idx.samples());  // no duplicates
  }
}

TEST(Plan, SameSeedSameOrderOtherEpochOtherOrder) {
  auto idx = IndexWith({50, 50, 50, 50});
  auto a = MakePlan(idx, {.seed = 1, .epoch = 0});
  auto b = MakePlan(idx, {.seed = 1, .epoch = 0});
  auto c = MakePlan(idx, {.seed = 1, .epoch = 1});
  auto d = MakePlan(idx, {.seed = 2, .epoch = 0});
  EXPECT_EQ(Global(*a), Global(*b));
  EXPECT_NE(Global(*a), Global(*c));
  EXPECT_NE(Global(*a), Global(*d));
  auto plain = MakePlan(idx, {.shuffle = false});
  for (uint64_t i = 0; i < plain->order.size(); ++i) EXPECT_EQ(plain->order[i], i);
}

TEST(Plan, RejectsBadSplits) {
  auto idx = IndexWith({1});
  EXPECT_FALSE(MakePlan(idx, {.split = {2, 2, 0, 1}}).ok());
  EXPECT_FALSE(MakePlan(idx, {.split = {0, 1, 0, 0}}).ok());
}

}  // namespace
}  // namespace ferry::shard
