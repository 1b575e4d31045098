#pragma once
// LruIndex: sizes and last-access times of cached blobs, to keep the cache under a size cap by
// evicting the least recently used blobs first.
//
// Access times are kept in memory and saved now and then as a small text object (see
// BlobCache::SaveAccessTimes); after a crash the saved times are at worst a little old, which
// can only make a blob look older than it is: it is evicted early and fetched again, never
// served wrong (eviction deletes a verified blob, it never changes one).
// Not thread-safe: BlobCache guards it with its mutex.

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferry::proxy {

class LruIndex final {
 public:
  // Adds or updates an entry. `access_ms`: milliseconds since the epoch.
  void Insert(const std::string& key, uint64_t size, int64_t access_ms);
  // Marks a use; unknown keys are ignored. Times only move forward.
  void Touch(const std::string& key, int64_t access_ms);
  void Erase(const std::string& key);
  bool Contains(const std::string& key) const { return entries_.contains(key); }
  size_t count() const { return entries_.size(); }
  uint64_t total_bytes() const { return total_bytes_; }

  // The keys to delete, least recently used first, until the total is at most `cap_bytes`;
  // keys for which `pinned` is true (blobs being read) are skipped.
  std::vector<std::string> Victims(uint64_t cap_bytes,
                                   const std::function<bool(const std::string&)>& pinned) const;

  // "key\taccess_ms\n" lines, for saving.
  std::string SerializeAccessTimes() const;
  // Applies saved access times (the later one wins); unknown keys and malformed lines are
  // ignored.
  void ApplyAccessTimes(std::string_view text);

 private:
  struct Entry {
    uint64_t size = 0;
    int64_t access_ms = 0;
  };
  std::map<std::string, Entry> entries_;
  std::set<std::pair<int64_t, std::string>> by_access_;  // oldest first
  uint64_t total_bytes_ = 0;
};

}  // namespace ferry::proxy
