#pragma once
// Reads of one open file: a sequential prefetcher after Mountpoint for S3's design, and a
// random-read path that fetches only what is asked (through an optional disk block cache).
//
// Sequential: the first read at offset 0, or a read that continues where the last one ended,
// starts (or keeps) a read-ahead window of parallel ranged GETs of `part_size` bytes, pinned to
// the ETag seen at open (If-Match). The window starts at `initial_window` and doubles with each
// part consumed up to `max_window`. A forward seek that stays inside the window is served from
// it (small skips are common); any other seek drops the window and the read is random.
// Read-ahead takes memory from the mount's MemoryBudget; when the budget is spent, reads fetch
// only what they need (never blocking on other files' buffers).

#include <atomic>
#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/status.h"
#include "base/thread_pool.h"
#include "storage/store.h"

namespace ferry::mount {

struct PrefetchOptions {
  uint64_t part_size = 8ull << 20;
  uint64_t initial_window = 1ull << 20;
  uint64_t max_window = 128ull << 20;
};

class MemoryBudget final {
 public:
  explicit MemoryBudget(uint64_t capacity) : capacity_(capacity) {}
  bool TryAcquire(uint64_t n);
  void Release(uint64_t n) { used_ -= n; }
  uint64_t used() const { return used_; }

 private:
  uint64_t capacity_;
  std::atomic<uint64_t> used_{0};
};

// Fixed-size blocks of objects on local disk, keyed by (key, ETag, block); LRU by mtime; capped.
class BlockCache final {
 public:
  static constexpr uint64_t kBlock = 1ull << 20;
  BlockCache(std::string dir, uint64_t capacity);
  ~BlockCache() { CloseAll(); }
  std::optional<std::string> Get(const std::string& key, const std::string& etag, uint64_t block);
  // Bytes [from, from + length) of a cached block (a pread, not the whole block); nullopt when
  // the block is not cached or shorter.
  std::optional<std::string> GetRange(const std::string& key, const std::string& etag,
                                      uint64_t block, uint64_t from, uint64_t length);
  bool Has(const std::string& key, const std::string& etag, uint64_t block) const;
  void Put(const std::string& key, const std::string& etag, uint64_t block, std::string_view data);

 private:
  std::string PathFor(const std::string& key, const std::string& etag, uint64_t block) const;
  // Open descriptors of recently read blocks (random readers hit the same blocks many times):
  // no open()/close() per read. A deleted block file stays readable through its descriptor,
  // and its contents are still those of (key, ETag).
  int OpenBlock(const std::string& path);
  void CloseAll();
  static constexpr size_t kOpenFiles = 256;
  std::mutex fds_mu_;
  std::unordered_map<std::string, int> fds_;
  std::deque<std::string> fd_order_;
  mutable std::mutex prefix_mu_;
  mutable std::unordered_map<std::string, std::string> prefixes_;  // key+etag -> name prefix
  void MaybeEvict();
  std::string dir_;
  uint64_t capacity_;
  std::atomic<uint64_t> written_since_check_{0};
  std::mutex evict_mu_;
};

class FileReader final {
 public:
  FileReader(std::shared_ptr<storage::Store> store, std::string key, std::string etag,
             uint64_t size, const PrefetchOptions& options, MemoryBudget& budget, ThreadPool& pool,
             BlockCache* cache);
  ~FileReader();
  Result<std::string> Read(uint64_t offset, size_t size);
  // The whole object, already being fetched (SmallFiles): reads are served from it.
  void UseWhole(std::shared_future<Result<std::string>> whole) { whole_ = std::move(whole); }

 private:
  struct Part {
    uint64_t offset = 0, length = 0;
    std::shared_future<Result<std::string>> data;
    bool budgeted = false;
  };
  Result<std::string> Fetch(uint64_t offset, uint64_t length);  // one ranged GET (or cache)
  Result<std::string> FetchCached(uint64_t offset, uint64_t length);
  void FillWindow(uint64_t from);
  void StartFill();  // random access with a disk cache: fetch the whole object into it
  void DropBefore(uint64_t offset);
  void DropAll();

  std::shared_ptr<storage::Store> store_;
  std::string key_, etag_;
  uint64_t size_;
  PrefetchOptions options_;
  MemoryBudget& budget_;
  ThreadPool& pool_;
  BlockCache* cache_;
  std::mutex mu_;
  std::deque<Part> window_;
  uint64_t window_target_;
  uint64_t next_fetch_ = 0;  // end of the last part requested
  uint64_t last_end_ = 0;    // where the previous read ended
  bool sequential_ = false;
  std::shared_future<Result<std::string>> whole_;
  uint64_t whole_budget_ = 0;  // memory taken for whole_ when this reader fetched it
  struct Fill;
  std::shared_ptr<Fill> fill_;  // background whole-object fill of the block cache
  int random_reads_ = 0;
};

// Read-ahead across files: when a program opens the small files of a directory in name order
// (a training loop over an image folder, tar, cp -r), the next ones are fetched whole in the
// background, so each open finds its data already there. Entries are pinned to the ETag the
// listing gave, use the mount's memory budget (none are fetched when it is spent) and are
// dropped once read or after `capacity` newer ones.
class SmallFiles final {
 public:
  SmallFiles(std::shared_ptr<storage::Store> store, MemoryBudget& budget, ThreadPool& pool,
             size_t capacity)
      : store_(std::move(store)), budget_(budget), pool_(pool), capacity_(capacity) {}
  ~SmallFiles();
  void Prefetch(const std::string& key, const std::string& etag, uint64_t size);
  // Takes the entry for (key, etag) if there is one.
  std::optional<std::shared_future<Result<std::string>>> Take(const std::string& key,
                                                              const std::string& etag);

 private:
  struct Entry {
    std::string etag;
    uint64_t size = 0;
    std::shared_future<Result<std::string>> data;
  };
  void Evict(std::map<std::string, Entry>::iterator it);
  std::shared_ptr<storage::Store> store_;
  MemoryBudget& budget_;
  ThreadPool& pool_;
  size_t capacity_;
  std::mutex mu_;
  std::map<std::string, Entry> entries_;
  std::deque<std::string> order_;
};

}  // namespace ferry::mount
