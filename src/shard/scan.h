#pragma once
// Reads a whole tar shard and describes it as the index does (sample count, sample offsets,
// size, CRC32C), checking its structure on the way. `ferry shard index` builds an index for
// shards made by other tools (webdataset's TarWriter, tar, Python's tarfile) with it, and
// `ferry shard verify` compares each shard with its index entry.

#include <functional>
#include <string>

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

}  // namespace ferry::shard
