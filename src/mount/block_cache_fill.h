#pragma once
// Fetches every block of one object version into the disk block cache in the background while
// the file is open, so random readers (databases, indexes, fio) soon read at local-disk speed,
// as with s3fs's and rclone's full VFS cache, but bounded by --cache-size and shared with later
// opens and mounts. kStreams tasks on the pool each take the next kBlocksPerGet blocks not yet
// cached and fetch them with one GET pinned to the version; a failed GET ends that task (reads
// still fetch what they need block by block). Each span fetched is also handed to `fetched`
// (when given), which the mount uses to put it into the kernel's page cache. With a `budget`,
// each GET holds a lease on it for its span (the mount's --max-memory); a task whose lease does
// not fit waits for one.

#include <functional>
#include <memory>
#include <string_view>

#include "base/thread_pool.h"
#include "mount/memory_budget.h"
#include "mount/pinned_object.h"

namespace ferry::mount {

class BlockCacheFill final {
 public:
  static constexpr int kStreams = 32;
  static constexpr uint64_t kBlocksPerGet = 8;  // 8 MiB GETs: S3's efficient request size

  // Bytes of the object at an offset, just fetched (called on the pool's threads).
  using Fetched = std::function<void(uint64_t offset, std::string_view bytes)>;

  // `object` must have a cache. Starts the tasks on `pool`.
  BlockCacheFill(std::shared_ptr<const PinnedObject> object, ThreadPool& pool,
                 Fetched fetched = nullptr, MemoryBudget* budget = nullptr);
  // Stops the fill and waits for its tasks (they write to the cache, which the mount owns).
  ~BlockCacheFill();
  BlockCacheFill(const BlockCacheFill&) = delete;
  BlockCacheFill& operator=(const BlockCacheFill&) = delete;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace ferry::mount
