#pragma once
// Whole-dataset operations on existing shards, as values (the CLI renders them):
// `ferry shard index` (IndexShards: an index for shards other tools wrote), `ferry shard verify`
// (VerifyDataset: every shard read and compared with its index entry) and `ferry shard cat`
// (ReadShardMember: one file out of a shard, reading only as far as it).

#include <string>
#include <vector>

#include "base/status.h"
#include "shard/index.h"
#include "storage/registry.h"
#include "storage/store.h"

namespace ferry::shard {

struct IndexedDataset {
  DatasetIndex index;
  std::string url;  // where the index was written
};

// Scans the shards `shard_urls` name (a .tar URL each, or a prefix ending in '/' for every .tar
// below it; all under the directory of `index_url`, where their names are relative to), `jobs`
// at once, and writes the index to `index_url` (a dataset prefix gets "<prefix>.index.json").
// kInvalidArgument for a shard outside that directory, kNotFound when no shard is found; a shard
// that cannot be read or is not a tar archive fails the whole (the first in order).
Result<IndexedDataset> IndexShards(storage::StoreRegistry& registry,
                                   const std::vector<std::string>& shard_urls,
                                   const std::string& index_url, int jobs);

// What differs between a shard as its index entry describes it and as it was read: "" when
// nothing does, else one line naming the shard (its size, its samples and their offsets, a
// sample's data CRC32C, the whole file's CRC32C, checked in that order).
std::string CompareShard(const ShardInfo& indexed, const ShardInfo& scanned);

struct VerifyReport {
  std::string index_url;  // redacted
  DatasetIndex index;
  // One line per shard that does not match its entry or cannot be read, sorted.
  std::vector<std::string> problems;

  // OK, or kDataLoss "N of M shard(s) do not match 'INDEX_URL'".
  Status status() const;
};

// Reads every shard of the dataset at `url_or_prefix` (as OpenIndex takes it), `jobs` at once,
// and compares it with the index. Errors: the index cannot be read (then nothing is verified).
Result<VerifyReport> VerifyDataset(storage::StoreRegistry& registry,
                                   const std::string& url_or_prefix, int jobs);

// The contents of the file `name` in the tar shard at `key` (`url` names it in errors). The shard
// is read until that file is complete; kNotFound when the shard has no such file.
Result<std::string> ReadShardMember(storage::Store& store, const std::string& key,
                                    const std::string& url, const std::string& name);

}  // namespace ferry::shard
