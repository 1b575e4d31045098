#pragma once
// Read-ahead across files: when a program opens the small files of a directory in name order (a
// training loop over an image folder, tar, cp -r), MountFs asks for the next ones here and they
// are fetched whole in the background, so each open finds its data already there. Entries are
// pinned to the ETag the listing gave, hold a lease on the mount's memory budget (nothing is
// fetched when it is spent), and are handed over to the file that opens them (with their lease)
// or dropped after `capacity` newer ones. Thread-safe.

#include <cstdint>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "mount/memory_budget.h"
#include "storage/store.h"

namespace ferry::mount {

// A whole object, fetched or being fetched, and the memory it holds.
struct WholeObject {
  std::shared_future<Result<std::string>> data;
  MemoryBudget::Lease lease;
};

class SmallFiles final {
 public:
  // `budget` and `pool` must outlive this object.
  SmallFiles(std::shared_ptr<storage::Store> store, MemoryBudget& budget, ThreadPool& pool,
             size_t capacity)
      : store_(std::move(store)), budget_(budget), pool_(pool), capacity_(capacity) {}
  ~SmallFiles();  // waits for the fetches in flight
  SmallFiles(const SmallFiles&) = delete;
  SmallFiles& operator=(const SmallFiles&) = delete;

  // Starts fetching (key, etag) whole unless it is fetched already or does not fit the budget.
  void Prefetch(const std::string& key, const std::string& etag, uint64_t size);
  // Takes the entry of `key`: its data if it is version `etag`, nothing otherwise (the entry is
  // dropped either way).
  std::optional<WholeObject> Take(const std::string& key, const std::string& etag);

 private:
  struct Entry {
    std::string etag;
    uint64_t id = 0;  // which Prefetch made it: order_ may still name an earlier entry's key
    WholeObject whole;
  };
  void Evict(std::map<std::string, Entry>::iterator it) REQUIRES(mu_);

  std::shared_ptr<storage::Store> store_;
  MemoryBudget& budget_;
  ThreadPool& pool_;
  const size_t capacity_;
  Mutex mu_;
  std::map<std::string, Entry> entries_ GUARDED_BY(mu_);                // by key
  std::deque<std::pair<std::string, uint64_t>> order_ GUARDED_BY(mu_);  // (key, id), oldest first
  uint64_t next_id_ GUARDED_BY(mu_) = 0;
};

}  // namespace ferry::mount
