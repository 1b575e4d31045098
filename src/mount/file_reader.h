#pragma once
// Reads of one open file, pinned to the version seen at open (PinnedObject).
//
// Each read is classified (AccessPattern). Sequential reads are served from the read-ahead
// window (ReadWindow); a read behind what the window still holds, or beyond it when the memory
// budget is spent, is fetched directly. A random read drops the window and fetches only what
// it asks for (through the disk block cache when there is one). From the second random read on,
// the whole object is brought closer: with a disk cache, every block is fetched into it in the
// background (BlockCacheFill, objects over 4 blocks); without one, an object of up to
// kWholeObjectLimit (an index, a footer then columns) is fetched whole once, within the memory
// budget, and later reads are served from memory. A whole object handed over at open
// (SmallFiles) serves every read while it is good. `fetched` (optional) gets every span the
// disk cache fill brings (BlockCacheFill). Thread-safe: reads are serialized.

#include <cstdint>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "mount/access_pattern.h"
#include "mount/block_cache_fill.h"
#include "mount/memory_budget.h"
#include "mount/pinned_object.h"
#include "mount/read_window.h"
#include "mount/small_files.h"

namespace ferry::mount {

inline constexpr uint64_t kWholeObjectLimit = 64ull << 20;

class FileReader final {
 public:
  // `budget` and `pool` (and the object's cache) must outlive the reader.
  FileReader(std::shared_ptr<const PinnedObject> object, const PrefetchOptions& options,
             MemoryBudget& budget, ThreadPool& pool, BlockCacheFill::Fetched fetched = nullptr);

  // Up to `size` bytes from `offset`; empty at or past the end. Errors: the object's read
  // errors (kFailedPrecondition once it was replaced, kNotFound once deleted).
  Result<std::string> Read(uint64_t offset, size_t size);
  // The whole object, already (being) fetched: reads are served from it.
  void UseWhole(WholeObject whole);
  // Stops the background disk cache fill, if any, and waits for it (the file is being closed:
  // `fetched` is not called afterwards).
  void StopBackground();

 private:
  Result<std::string> ReadRandom(uint64_t offset, uint64_t end) REQUIRES(mu_);
  Result<std::string> ReadSequential(uint64_t offset, uint64_t end) REQUIRES(mu_);

  const std::shared_ptr<const PinnedObject> object_;
  MemoryBudget& budget_;
  ThreadPool& pool_;
  const BlockCacheFill::Fetched fetched_;
  Mutex mu_;
  AccessPattern pattern_ GUARDED_BY(mu_);
  WholeObject whole_ GUARDED_BY(mu_);
  // The one whole fetch of a small object read randomly is done.
  bool fetched_whole_ GUARDED_BY(mu_) = false;
  std::unique_ptr<BlockCacheFill> fill_ GUARDED_BY(mu_);
  ReadWindow window_ GUARDED_BY(mu_);
};

}  // namespace ferry::mount
