#pragma once
// The memory budget of a mount (--max-memory): the read-ahead buffers of all open files and the
// small files read ahead across files each hold a lease on it while they are in memory. A lease
// is granted only when it fits now: a read never waits for other files' buffers; without a
// lease it fetches what it needs, without read-ahead.

#include <cstdint>
#include <optional>

#include "base/thread_pool.h"

namespace ferry::mount {

// Thread-safe. Must outlive every lease taken from it.
class MemoryBudget final {
 public:
  using Lease = ByteSemaphore::Lease;

  explicit MemoryBudget(uint64_t capacity) : bytes_(capacity) {}
  // `n` bytes if they fit within the capacity now, else nullopt (never blocks).
  [[nodiscard]] std::optional<Lease> TryTake(uint64_t n) { return bytes_.TryAcquire(n); }
  uint64_t used() const { return bytes_.used(); }

 private:
  ByteSemaphore bytes_;
};

}  // namespace ferry::mount
