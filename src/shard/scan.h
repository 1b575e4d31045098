#pragma once
// Reads a whole tar shard and describes it as the index does (sample count, sample offsets,
// size, CRC32C), checking its structure on the way. `ferry shard index` builds an index for
// shards made by other tools (webdataset's TarWriter, tar, Python's tarfile) with it, and
// `ferry shard verify` compares each shard with its index entry.

#include <functional>
#include <string>
#include <vector>

#include "shard/index.h"
#include "storage/store.h"

namespace ferry::shard {

struct ScannedEntry {
  std::string name;
  uint64_t size = 0, offset = 0;
};

// `on_entry` (optional) sees every regular file in order (`ferry shard ls SHARD.tar`).
Result<ShardInfo> ScanShard(storage::Store& store, const std::string& key, const std::string& name,
                            const std::function<void(const ScannedEntry&)>& on_entry = {});

// A shard to scan: its key in the store and the name it gets in the index.
struct ShardToScan {
  std::string key, name;
};

// Scans `shards`, `jobs` at once (at least one); the results in the order of `shards`.
std::vector<Result<ShardInfo>> ScanShards(storage::Store& store,
                                          const std::vector<ShardToScan>& shards, int jobs);

}  // namespace ferry::shard
