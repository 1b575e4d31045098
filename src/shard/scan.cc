#include "shard/scan.h"

#include <algorithm>

#include "base/crc32c.h"
#include "base/thread_pool.h"
#include "shard/sample.h"
#include "shard/tar.h"

namespace ferry::shard {

Result<ShardInfo> ScanShard(storage::Store& store, const std::string& key, const std::string& name,
                            const std::function<void(const ScannedEntry&)>& on_entry) {
  ShardInfo info{.name = name};
  std::string last_key;
  SampleCrc sample_crc;
  bool in_sample_file = false;  // the current entry belongs to a sample
  TarParser parser({.on_entry = [&](const TarEntry& e) -> Status {
                      if (on_entry) on_entry({e.name, e.size, e.header_offset});
                      auto ke = SplitKey(e.name);
                      in_sample_file = ke.has_value();
                      if (!ke) return Status();
                      if (info.offsets.empty() || ke->key != last_key) {
                        if (!info.offsets.empty()) info.sample_crcs.push_back(sample_crc.value());
                        sample_crc.Reset();
                        info.offsets.push_back(e.header_offset);
                        last_key = ke->key;
                      }
                      return Status();
                    },
                    .on_data =
                        [&](std::string_view d) {
                          if (in_sample_file) sample_crc.Update(d);
                          return Status();
                        },
                    .on_end_of_entry = {}});
  Crc32c crc;
  Status s = store.Read(key, {}, [&](std::string_view chunk) {
    crc.Update(chunk);
    info.size += chunk.size();
    return parser.Feed(chunk);
  });
  if (s.ok()) s = parser.Finish();
  if (!s.ok()) return s.WithContext("shard '" + store.UrlFor(key) + "'");
  info.samples = info.offsets.size();
  if (!info.offsets.empty()) info.sample_crcs.push_back(sample_crc.value());
  info.crc32c = Crc32cHex(crc.value());
  return info;
}

std::vector<Result<ShardInfo>> ScanShards(storage::Store& store,
                                          const std::vector<ShardToScan>& shards, int jobs) {
  std::vector<Result<ShardInfo>> results(shards.size(), Result<ShardInfo>(ShardInfo{}));
  {
    ThreadPool pool(std::max(1, jobs));
    for (size_t i = 0; i < shards.size(); ++i) {
      // Each task writes its own slot only; the pool's destructor joins them all.
      pool.Submit([&, i] { results[i] = ScanShard(store, shards[i].key, shards[i].name); });
    }
  }
  return results;
}

}  // namespace ferry::shard
