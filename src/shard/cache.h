#pragma once
// A local directory of whole shards, shared by every reader (DataLoader workers, later runs,
// other jobs on the node) and capped in size. A shard enters only after it was read completely
// and its CRC32C matched the index; its file name is a hash of (URL, size, CRC32C), so a changed
// shard never matches an old copy. Hits refresh the file's mtime; when the directory holds more
// than `capacity` bytes, the least recently used shards are deleted. Publishing is an atomic
// rename, so concurrent readers never see a partial file.

#include <cstdint>
#include <optional>
#include <string>

#include "base/status.h"

namespace ferry::shard {

class ShardCache final {
 public:
  ShardCache(std::string dir, uint64_t capacity) : dir_(std::move(dir)), capacity_(capacity) {}
  bool enabled() const { return !dir_.empty(); }

  // The cached file for this shard, if present (its mtime is refreshed).
  std::optional<std::string> Lookup(const std::string& url, uint64_t size, const std::string& crc);
  // A temporary path in the cache directory to fill, then Publish() or remove.
  Result<std::string> TempPath(const std::string& url, uint64_t size, const std::string& crc);
  Status Publish(const std::string& temp, const std::string& url, uint64_t size,
                 const std::string& crc);

 private:
  std::string PathFor(const std::string& url, uint64_t size, const std::string& crc) const;
  void Evict();
  std::string dir_;
  uint64_t capacity_;
};

}  // namespace ferry::shard
