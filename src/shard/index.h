#pragma once
// The dataset index `ferry shard pack` writes next to the shards (`<prefix>.index.json`):
//
//   {"format": "ferry-shards", "version": 1, "samples": 20000, "bytes": 2097152000,
//    "shards": [{"name": "train-000000.tar", "size": 1073745920, "samples": 10000,
//                "crc32c": "1c291ca3", "offsets": [0, 104960, ...],
//                "sample_crc32c": [3735928559, ...]}, ...]}
//
// `name` is relative to the index's own location; `offsets[i]` is where sample i's first header
// block starts, so a reader can start mid-shard with a ranged read; `crc32c` covers the whole
// shard file; `sample_crc32c[i]` (optional) is the CRC32C of sample i's file contents in archive
// order (SampleCrc below), so a reader checks each sample before handing it out (tar headers
// carry their own checksums). An optional "base" (a directory URL) makes names relative to it
// instead of the index's directory. Readers need the index for shuffling, splitting and exact
// resume.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/crc32c.h"
#include "base/status.h"

namespace ferry::shard {

struct ShardInfo {
  std::string name;
  uint64_t size = 0;
  uint64_t samples = 0;
  std::string crc32c;  // 8 hex digits; "" = unknown
  std::vector<uint64_t> offsets;
  std::vector<uint32_t> sample_crcs;  // empty = not recorded
};

// CRC32C over the data of a sample's files, in archive order (headers and padding excluded).
class SampleCrc final {
 public:
  void Update(std::string_view data) { crc_.Update(data); }
  uint32_t value() const { return crc_.value(); }
  void Reset() { crc_ = Crc32c(); }

 private:
  Crc32c crc_;
};

struct DatasetIndex {
  // "" = shard names are relative to the index's own directory; else the URL of the directory
  // they are relative to (indexes ferry.data caches locally for shards elsewhere: resolve.h).
  std::string base;
  std::vector<ShardInfo> shards;
  uint64_t samples() const;
  uint64_t bytes() const;
};

std::string IndexToJson(const DatasetIndex& index);
// `name` names the index in errors.
Result<DatasetIndex> IndexFromJson(std::string_view json, std::string_view name);

// "s3://b/ds/train" -> shard i is "train-%06d.tar", the index "train.index.json", both in
// "s3://b/ds/". A prefix ending in '/' uses the name "shard".
struct ShardNaming {
  std::string dir;   // URL of the directory, ending in '/'
  std::string stem;  // "train"
  std::string ShardName(size_t i) const;
  std::string IndexName() const { return stem + ".index.json"; }
};
ShardNaming NamingFor(std::string_view dst_prefix);

}  // namespace ferry::shard
