#pragma once
// What ferry.data.ShardDataset is given, turned into the URL of a Ferry index (index.h), the
// form the reader, the plan and exact resume work on:
//
//  - an index URL ("s3://b/ds/train.index.json") or the prefix given to `ferry shard pack`
//    ("s3://b/ds/train"): that index;
//  - a directory or prefix ("/nas/ds/", "s3://b/ds/", also without the '/' when no index
//    "<it>.index.json" exists): the one Ferry index directly in it, else its .tar shards
//    (anywhere below it), indexed now;
//  - .tar URLs (a list, e.g. a brace pattern expanded by ferry.data): indexed now.
//
// Shards indexed now are scanned (read whole, `jobs` at once) and the index is cached as a local
// file "<cache_dir>/<hash of the shard URLs>.index.json" whose "base" names the shards'
// directory. A cached index is used again while every shard still has the size and version tag
// (ETag, or modification time) recorded beside it ("<hash>.stat"); otherwise the shards are
// scanned again. The index's bytes depend only on the shards, so a re-scan of unchanged shards
// gives the same dataset identity (resume states stay valid).

#include <string>
#include <vector>

#include "base/status.h"
#include "storage/registry.h"

namespace ferry::shard {

struct ResolveOptions {
  std::string cache_dir;  // "" = $FERRY_SHARD_INDEX_CACHE, else ~/.cache/ferry/shard-index
  int jobs = 4;           // shards scanned at once
};

struct ResolvedDataset {
  std::string index_url;
  bool scanned = false;  // shards were indexed now (not a Ferry index, not a cached one)
  bool cached = false;   // an index cached by an earlier scan was used
  size_t shards = 0;     // shards indexed now or found cached (0 for a Ferry index)
};

Result<ResolvedDataset> ResolveDataset(storage::StoreRegistry& registry,
                                       const std::vector<std::string>& inputs,
                                       const ResolveOptions& options);

// The directory the index cache lives in when ResolveOptions::cache_dir is "".
std::string DefaultIndexCacheDir();

}  // namespace ferry::shard
