#pragma once
// Which samples a reader yields, and in which order, for one epoch of one split.
//
//  1. Shard order: the index order, or (shuffle) a permutation drawn from (seed, epoch), the same
//     on every rank and worker.
//  2. Split: the shards at positions i with i % splits == split go to this split, where
//     splits = world_size * num_workers and split = rank * num_workers + worker. Every shard,
//     hence every sample, belongs to exactly one split; splits may differ by a shard.
//  3. Sample order: the split's shards' samples in sequence (the "input"), passed through a
//     shuffle buffer of `shuffle_buffer` samples driven by (seed, epoch, split): the buffer fills,
//     then each new input sample replaces a randomly chosen one that is emitted; at the end the
//     buffer drains in random order. No shuffle (or a buffer of 1) keeps the input order.
//
// The plan is computed from the index alone (integers, no data), so a reader resuming at
// position p knows exactly which samples are still due and which shards hold them.

#include <cstdint>
#include <vector>

#include "shard/index.h"

namespace ferry::shard {

struct Split {
  int rank = 0, world_size = 1, worker = 0, num_workers = 1;
  int index() const { return rank * num_workers + worker; }
  int count() const { return world_size * num_workers; }
};

struct PlanOptions {
  uint64_t seed = 0;
  uint64_t epoch = 0;
  bool shuffle = true;
  uint64_t shuffle_buffer = 1000;
  Split split;
};

struct EpochPlan {
  std::vector<uint32_t> shards;       // this split's shards (index positions), in read order
  std::vector<uint64_t> input_start;  // first input position of each of those shards (+ total)
  std::vector<uint64_t> order;        // input positions in emit order
  uint64_t inputs() const { return input_start.empty() ? 0 : input_start.back(); }
};

Result<EpochPlan> MakePlan(const DatasetIndex& index, const PlanOptions& options);

// Shard permutation for (seed, epoch): the same function the packer's --shuffle uses.
std::vector<uint32_t> ShardOrder(size_t shards, uint64_t seed, uint64_t epoch, bool shuffle);

}  // namespace ferry::shard
