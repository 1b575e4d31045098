#include "shard/plan.h"

#include <numeric>
#include <random>

namespace ferry::shard {

namespace {

uint64_t SplitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

std::vector<uint32_t> ShardOrder(size_t shards, uint64_t seed, uint64_t epoch, bool shuffle) {
  std::vector<uint32_t> order(shards);
  std::iota(order.begin(), order.end(), 0u);
  if (!shuffle) return order;
  std::mt19937_64 rng(SplitMix(seed ^ SplitMix(epoch)));
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

Result<EpochPlan> MakePlan(const DatasetIndex& index, const PlanOptions& o) {
  const Split& s = o.split;
  if (s.world_size < 1 || s.num_workers < 1 || s.rank < 0 || s.rank >= s.world_size ||
      s.worker < 0 || s.worker >= s.num_workers) {
    return InvalidArgument("bad split: rank " + std::to_string(s.rank) + " of " +
                           std::to_string(s.world_size) + ", worker " + std::to_string(s.worker) +
                           " of " + std::to_string(s.num_workers));
  }
  EpochPlan plan;
  auto all = ShardOrder(index.shards.size(), o.seed, o.epoch, o.shuffle);
  uint64_t total = 0;
  for (size_t i = static_cast<size_t>(s.index()); i < all.size();
       i += static_cast<size_t>(s.count())) {
    plan.shards.push_back(all[i]);
    plan.input_start.push_back(total);
    total += index.shards[all[i]].samples;
  }
  plan.input_start.push_back(total);
  plan.order.reserve(total);
  if (!o.shuffle || o.shuffle_buffer <= 1) {
    for (uint64_t i = 0; i < total; ++i) plan.order.push_back(i);
    return plan;
  }
  std::mt19937_64 rng(
      SplitMix(o.seed ^ SplitMix(o.epoch ^ SplitMix(0x5a17 + static_cast<uint64_t>(s.index())))));
  std::vector<uint64_t> buffer;
  buffer.reserve(o.shuffle_buffer);
  for (uint64_t i = 0; i < total; ++i) {
    if (buffer.size() < o.shuffle_buffer) {
      buffer.push_back(i);
      continue;
    }
    size_t j = static_cast<size_t>(rng() % buffer.size());
    plan.order.push_back(buffer[j]);
    buffer[j] = i;
  }
  while (!buffer.empty()) {
    size_t j = static_cast<size_t>(rng() % buffer.size());
    plan.order.push_back(buffer[j]);
    buffer[j] = buffer.back();
    buffer.pop_back();
  }
  return plan;
}

}  // namespace ferry::shard
