#include "mount/pinned_object.h"

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

namespace ferry::mount {

PinnedObject::PinnedObject(std::shared_ptr<storage::Store> store, std::string key, std::string etag,
                           uint64_t size, BlockCache* cache)
    : store_(std::move(store)),
      key_(std::move(key)),
      etag_(std::move(etag)),
      size_(size),
      cache_(cache) {}

Result<std::string> PinnedObject::Get(uint64_t offset, uint64_t length) const {
  FERRY_ASSIGN_OR_RETURN(
      std::string got,
      store_->ReadAll(key_, {.range = storage::ByteRange{offset, length}, .if_match = etag_}));
  // Same ETag, fewer bytes than its size says: never hand a reader a silently short file.
  const uint64_t expected = offset < size_ ? std::min(length, size_ - offset) : 0;
  if (got.size() != expected) {
    return Status(StatusCode::kDataLoss, "short read of '" + store_->UrlFor(key_) +
                                             "': " + std::to_string(got.size()) + " of " +
                                             std::to_string(expected) + " bytes");
  }
  return got;
}

Result<std::string> PinnedObject::Read(uint64_t offset, uint64_t length) const {
  if (cache_) return ReadThroughCache(offset, length);
  return Get(offset, length);
}

Result<std::string> PinnedObject::ReadThroughCache(uint64_t offset, uint64_t length) const {
  const uint64_t B = BlockCache::kBlock;
  const uint64_t end = std::min(offset + length, size_);
  const uint64_t first = offset / B, last = (end - 1) / B;
  std::vector<std::optional<std::string>> parts;
  bool all_cached = true;
  for (uint64_t block = first; block <= last; ++block) {
    uint64_t from = std::max(offset, block * B) - block * B;
    uint64_t to = std::min(end, block * B + B) - block * B;
    parts.push_back(cache_->GetRange(key_, etag_, block, from, to - from));
    all_cached = all_cached && parts.back().has_value();
  }
  if (all_cached) {
    std::string out;
    for (auto& p : parts) out += *p;
    return out;
  }
  // One GET for the whole block-aligned span; every block of it goes into the cache.
  const uint64_t start = first * B, span_end = std::min(size_, (last + 1) * B);
  FERRY_ASSIGN_OR_RETURN(std::string got, Get(start, span_end - start));
  for (uint64_t block = first; block <= last; ++block) {
    if (!parts[block - first]) {
      cache_->Put(key_, etag_, block, std::string_view(got).substr((block - first) * B, B));
    }
  }
  return got.substr(offset - start, end - offset);
}

}  // namespace ferry::mount
