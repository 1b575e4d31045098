#pragma once
// The disk block cache of a mount (--cache-dir, --cache-size): fixed-size blocks of objects in
// local files, keyed by (key, ETag, block number), so a changed object (new ETag) never reads
// another version's blocks. Shared by all open files and reused by later mounts.
//
// Each block is one file, written to a temporary name and renamed (a reader sees a whole block
// or none). Reads and writes mark a block used (its mtime); once writes have added a sixteenth
// of the capacity, the least recently used blocks are deleted until the cache is below 90% of
// its capacity. Descriptors of recently read blocks stay open (random readers hit the same
// blocks many times), up to a quarter of the descriptor limit (raised to its hard limit here,
// at most 65,536): a cached read is one pread, no open, dup or close. A block deleted meanwhile
// stays readable through its descriptor, and its bytes are still those of (key, ETag). A read
// marks its block used at most once a minute (a timestamp write per 4 KiB read cost more than
// the read). Thread-safe. Errors are misses: a cache that cannot read or write serves nothing
// and the caller reads the store.

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/mutex.h"

namespace ferry::mount {

class BlockCache final {
 public:
  static constexpr uint64_t kBlock = 1ull << 20;

  BlockCache(std::string dir, uint64_t capacity);
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // Bytes [from, from + length) of a cached block (a pread, not the whole block); nullopt when
  // the block is not cached or shorter. An empty ETag is never cached.
  std::optional<std::string> GetRange(const std::string& key, const std::string& etag,
                                      uint64_t block, uint64_t from, uint64_t length);
  bool Has(const std::string& key, const std::string& etag, uint64_t block) const;
  void Put(const std::string& key, const std::string& etag, uint64_t block, std::string_view data);

 private:
  // One open block file; closed when the last reader holding it is done.
  struct OpenFile {
    explicit OpenFile(int f) : fd(f) {}
    ~OpenFile();
    OpenFile(const OpenFile&) = delete;
    OpenFile& operator=(const OpenFile&) = delete;
    const int fd;
    std::atomic<int64_t> marked_used_s{0};  // steady clock, when the mtime was last set
  };

  std::string PathFor(const std::string& key, const std::string& etag, uint64_t block) const;
  std::shared_ptr<OpenFile> OpenBlock(const std::string& path);  // null when not cached
  void MaybeEvict();

  const std::string dir_;
  const uint64_t capacity_;
  const size_t open_files_;  // descriptors kept open
  Mutex fds_mu_;
  std::unordered_map<std::string, std::shared_ptr<OpenFile>> fds_ GUARDED_BY(fds_mu_);
  std::deque<std::string> fd_order_ GUARDED_BY(fds_mu_);
  mutable Mutex prefix_mu_;
  // key + ETag -> block file name prefix
  mutable std::unordered_map<std::string, std::string> prefixes_ GUARDED_BY(prefix_mu_);
  std::atomic<uint64_t> written_since_check_{0};
  Mutex evict_mu_;  // one eviction at a time
};

}  // namespace ferry::mount
