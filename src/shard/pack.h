#pragma once
// `ferry shard pack SRC DST_PREFIX`: groups the files under SRC into WebDataset samples (sample.h)
// and writes them as tar shards `<stem>-000000.tar, ...` plus the dataset index (index.h),
// straight to any store (S3 multipart, no local staging).
//
// Deterministic: samples are ordered by key (byte order), or permuted by --shuffle with --seed
// (a Fisher-Yates shuffle driven by a 64-bit Mersenne Twister, the same on every platform); the
// files of a sample are stored in extension order; tar headers carry no times or owners. The
// same input and options therefore give byte-identical shards.
//
// A shard closes before the sample that would take it past `target_size` (a sample larger than
// the target gets a shard of its own) or after `samples_per_shard` samples. Shards are written
// in parallel; source files are read ahead in parallel (small files on a NAS or object store
// are latency-bound). The index is written last: without it the shards are not a dataset.
//
// Selection (select.h): --include/--exclude globs; dotfiles are skipped unless asked for, and
// counted. Splits: `split` = {{"train", 0.9}, {"val", 0.1}} deals the samples out by a seeded
// permutation (the first round(0.9 * n) of it to train, ...), and packs each split as its own
// dataset "<stem>-train-000000.tar" + "<stem>-train.index.json" ("train-..." for a DST ending in
// '/'); within a split samples are in key order, or shuffled with --shuffle.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "shard/index.h"
#include "shard/select.h"
#include "storage/registry.h"

namespace ferry::shard {

struct PackProgress {
  uint64_t samples = 0, bytes = 0;              // written so far (tar bytes)
  uint64_t total_samples = 0, total_bytes = 0;  // all splits together
};

struct SplitShare {
  std::string name;
  double fraction = 0;
};

struct PackOptions {
  uint64_t target_size = 1ull << 30;
  uint64_t samples_per_shard = 0;  // > 0: fixed sample count instead of target_size
  bool shuffle = false;
  uint64_t seed = 0;
  int jobs = 4;            // shards written at once
  int reads = 32;          // source files read ahead at once, all shards together
  bool overwrite = false;  // replace an existing index at DST (deleted before any shard is written)
  FileFilter filter;
  std::vector<SplitShare> split;  // empty: one dataset; else fractions summing to 1
  // Called from the writer threads (serialise inside) after each sample, and once at the start.
  std::function<void(const PackProgress&)> on_progress;
};

// "train=0.9,val=0.1" -> shares; kInvalidArgument naming what is wrong.
Result<std::vector<SplitShare>> ParseSplit(std::string_view spec);

struct PackedSplit {
  std::string name;  // "" without --split
  DatasetIndex index;
  std::string index_url;
};

struct PackReport {
  DatasetIndex index;               // of the single dataset, or all splits' shards together
  std::string index_url;            // the single dataset's (first split's with --split)
  std::vector<PackedSplit> splits;  // one per dataset written
  uint64_t files = 0;
  uint64_t hidden = 0;    // dotfiles skipped
  uint64_t excluded = 0;  // files left out by --include/--exclude
  double seconds = 0;
};

// Readers take whole shards (ferry.data and WebDataset give each DataLoader worker of each rank
// its own shards), so a dataset of fewer shards than readers leaves readers idle. Below
// kMinShards shards for at least kMinShards samples: the warning, with the numbers and the
// --samples-per-shard that would make at least kMinShards; nullopt otherwise. `what` names the
// dataset ("" or a split's name).
inline constexpr size_t kMinShards = 8;
std::optional<std::string> FewShardsWarning(const DatasetIndex& index, const std::string& what);

Result<PackReport> PackShards(storage::StoreRegistry& registry, const std::string& src_url,
                              const std::string& dst_prefix, const PackOptions& options);

}  // namespace ferry::shard
