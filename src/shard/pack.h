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

#include <cstdint>
#include <string>

#include "shard/index.h"
#include "storage/registry.h"

namespace ferry::shard {

struct PackOptions {
  uint64_t target_size = 1ull << 30;
  uint64_t samples_per_shard = 0;  // > 0: fixed sample count instead of target_size
  bool shuffle = false;
  uint64_t seed = 0;
  int jobs = 4;            // shards written at once
  int reads = 32;          // source files read ahead at once, all shards together
  bool overwrite = false;  // replace an existing index at DST (deleted before any shard is written)
};

struct PackReport {
  DatasetIndex index;
  std::string index_url;
  uint64_t files = 0;
  double seconds = 0;
};

Result<PackReport> PackShards(storage::StoreRegistry& registry, const std::string& src_url,
                              const std::string& dst_prefix, const PackOptions& options);

}  // namespace ferry::shard
