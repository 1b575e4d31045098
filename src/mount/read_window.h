#pragma once
// The read-ahead window of one open file, after Mountpoint for S3's prefetcher: parallel ranged
// GETs of `part_size` bytes ahead of a sequential reader, all of one version (PinnedObject).
// The window's target size starts at `initial_window` and doubles with each part the reader
// consumes, up to `max_window`. Each part holds a lease on the mount's memory budget from its
// request until it is dropped; when the budget is spent, no more parts are requested and the
// reader fetches what lies beyond the window itself. Parts behind the reader are dropped as it
// moves on. Not thread-safe (FileReader serializes its reads).

#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <string>

#include "base/status.h"
#include "base/thread_pool.h"
#include "mount/memory_budget.h"
#include "mount/pinned_object.h"

namespace ferry::mount {

struct PrefetchOptions {
  uint64_t part_size = 8ull << 20;
  uint64_t initial_window = 1ull << 20;
  uint64_t max_window = 128ull << 20;
};

class ReadWindow final {
 public:
  // `budget` and `pool` must outlive the window.
  ReadWindow(std::shared_ptr<const PinnedObject> object, const PrefetchOptions& options,
             MemoryBudget& budget, ThreadPool& pool);
  ~ReadWindow() { Clear(); }  // waits for the parts in flight
  ReadWindow(const ReadWindow&) = delete;
  ReadWindow& operator=(const ReadWindow&) = delete;

  // Bytes [begin(), end()) are buffered or requested; begin() == end() when none are.
  uint64_t begin() const { return parts_.empty() ? next_fetch_ : parts_.front().offset; }
  uint64_t end() const { return next_fetch_; }
  uint64_t target() const { return target_; }

  // Drops every part; the next parts are requested from `offset`.
  void Restart(uint64_t offset);
  // Drops every part and shrinks the target back to `initial_window` (a random read).
  void Reset();

  // Requests parts up to the target ahead of `offset` (offset >= begin()), then appends to
  // `out` what they hold of [offset, end), waiting for them as needed. Returns where it stopped:
  // `end`, or earlier where the window ends (the budget is spent). A failed part drops the
  // window (requests start from 0 again) and its status is returned.
  Result<uint64_t> ReadInto(uint64_t offset, uint64_t end, std::string& out);
  // The reader moved on to `end`: drops the parts that end before `keep_from` and requests
  // parts up to the target ahead of `end`.
  void Advance(uint64_t keep_from, uint64_t end);

 private:
  struct Part {
    uint64_t offset = 0, length = 0;
    std::shared_future<Result<std::string>> data;
    MemoryBudget::Lease lease;
  };
  void Fill(uint64_t from);
  void Clear();

  const std::shared_ptr<const PinnedObject> object_;
  const PrefetchOptions options_;
  MemoryBudget& budget_;
  ThreadPool& pool_;
  std::deque<Part> parts_;  // contiguous from their first, in order
  uint64_t target_;
  uint64_t next_fetch_ = 0;  // end of the last part requested
};

}  // namespace ferry::mount
