#pragma once
// Streams the samples of a shard dataset (an index written by `ferry shard pack` or
// `ferry shard index`) from any store, in the order plan.h defines.
//
// Reading: the split's shards are fetched by background threads, `prefetch_shards` at once, each
// as one sequential streaming GET (a ranged one when resuming mid-shard) into a bounded queue of
// `read_ahead` bytes, so memory stays near prefetch_shards * read_ahead plus the samples waiting
// in the shuffle buffer. A shard read from its start is checked against the index's CRC32C at
// its end; tar headers are checked as they arrive; a shard must hold the samples the index says.
// With a cache directory, whole verified shards are kept there (cache.h) and read locally next
// time.
//
// Errors name the shard URL and the byte offset. With `skip_corrupt`, a corrupt or truncated
// shard's remaining samples are skipped with a warning instead (counted in skipped()).
//
// Resume: a reader opened with `start = n` yields exactly the samples a fresh reader would yield
// after its first n, in the same order, without reading the shards that only held those n.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "shard/index.h"
#include "shard/plan.h"
#include "shard/sample.h"
#include "storage/registry.h"

namespace ferry::shard {

struct ReaderOptions {
  PlanOptions plan;
  uint64_t start = 0;  // samples of this split already consumed this epoch
  int prefetch_shards = 2;
  uint64_t read_ahead = 64ull << 20;  // bytes buffered per shard being fetched
  std::string cache_dir;              // "" = no cache
  uint64_t cache_size = 0;            // bytes; 0 with a cache dir = 10 GiB
  bool skip_corrupt = false;
};

// "s3://b/ds/train.index.json", or the prefix given to `ferry shard pack` ("s3://b/ds/train").
std::string IndexUrlFor(const std::string& url_or_prefix);

// Shard names in an index are relative to the index's directory: "ds/train.index.json" -> "ds/".
std::string ShardDirKey(std::string_view index_key);

// An index read where it lives.
struct OpenedIndex {
  std::string url;  // of the index object
  storage::OpenedUrl at;
  std::string dir_key;  // ShardDirKey(at.key)
  DatasetIndex index;
  // CRC32C of the index object's bytes: the dataset's identity (it records every shard's size,
  // sample offsets and CRC32C, so it changes when any shard does). ferry.data keeps it in its
  // resume state and refuses a state saved against another index.
  uint32_t crc32c = 0;
  std::string ShardKey(const ShardInfo& s) const { return dir_key + s.name; }
};
// `url_or_prefix` as IndexUrlFor() takes it.
Result<OpenedIndex> OpenIndex(storage::StoreRegistry& registry, const std::string& url_or_prefix);

class ShardReader {
 public:
  static Result<std::unique_ptr<ShardReader>> Open(storage::StoreRegistry& registry,
                                                   const std::string& index_url,
                                                   const ReaderOptions& options);
  virtual ~ShardReader() = default;
  // The next sample, or nullopt when this split's epoch is done.
  virtual Result<std::optional<Sample>> Next() = 0;
  virtual uint64_t position() const = 0;  // samples consumed this epoch (start included)
  virtual uint64_t size() const = 0;      // samples in this split this epoch
  virtual uint64_t skipped() const = 0;   // samples lost to corrupt shards (skip_corrupt)
  virtual const DatasetIndex& index() const = 0;
};

}  // namespace ferry::shard
