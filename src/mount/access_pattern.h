#pragma once
// How one open file is being read: sequentially or randomly.
//
// A sequential run starts with a read at offset 0, or one that continues where the last read
// ended (also after random reads). The kernel's readahead sends several reads at once and FUSE
// threads may serve them out of order, so while a run lasts, a read a little behind the
// furthest end so far (kBackwardTolerance) or ahead of it (by the read-ahead window's target
// size, at least kForwardTolerance), or anywhere inside the read-ahead window (small forward
// skips), continues it. Any other read is random and ends the run. A failed read ends it too.
// Not thread-safe (FileReader serializes its reads).

#include <cstdint>

namespace ferry::mount {

inline constexpr uint64_t kBackwardTolerance = 2ull << 20;
inline constexpr uint64_t kForwardTolerance = 16ull << 20;

class AccessPattern final {
 public:
  enum class Access { kRandom, kStartsSequential, kSequential };

  // Where the read-ahead window stands: bytes [begin, end) buffered or requested (begin == end
  // when it holds nothing) and the size it is growing to.
  struct Window {
    uint64_t begin = 0, end = 0, target = 0;
  };

  // What a read at `offset` is, given the read-ahead window.
  Access Classify(uint64_t offset, const Window& window) const;

  // A random read of [.., end) happened; returns how many so far.
  int OnRandom(uint64_t end);
  void OnSequentialStart() { sequential_ = true; }
  // A read of the run succeeded up to `end`.
  void OnSequentialRead(uint64_t end);
  void OnSequentialFailure() { sequential_ = false; }

  bool sequential() const { return sequential_; }
  uint64_t last_end() const { return last_end_; }  // furthest end of the run, or of the last read
  int random_reads() const { return random_reads_; }

 private:
  bool sequential_ = false;
  uint64_t last_end_ = 0;
  int random_reads_ = 0;
};

}  // namespace ferry::mount
