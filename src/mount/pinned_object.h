#pragma once
// One version of one object, read by byte ranges: every GET carries If-Match with the ETag seen
// at open, so bytes of two versions never mix (a replaced object fails with
// kFailedPrecondition, a deleted one with kNotFound, one shorter than its size with kDataLoss).
// With a disk block cache, ranges are served from it and the blocks a GET brings are added to
// it. Immutable: thread-safe.

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "mount/block_cache.h"
#include "storage/store.h"

namespace ferry::mount {

class PinnedObject final {
 public:
  // `cache` may be null; it must outlive this object.
  PinnedObject(std::shared_ptr<storage::Store> store, std::string key, std::string etag,
               uint64_t size, BlockCache* cache = nullptr);

  const std::string& key() const { return key_; }
  const std::string& etag() const { return etag_; }
  uint64_t size() const { return size_; }
  BlockCache* cache() const { return cache_; }

  // Bytes [offset, offset + length) (offset < size; cut at the size): from the block cache when
  // every block is there, else one GET of the blocks that hold them (all added to the cache);
  // without a cache, one ranged GET.
  Result<std::string> Read(uint64_t offset, uint64_t length) const;
  // One ranged GET, bypassing the cache.
  Result<std::string> Get(uint64_t offset, uint64_t length) const;

 private:
  Result<std::string> ReadThroughCache(uint64_t offset, uint64_t length) const;

  const std::shared_ptr<storage::Store> store_;
  const std::string key_, etag_;
  const uint64_t size_;
  BlockCache* const cache_;
};

}  // namespace ferry::mount
