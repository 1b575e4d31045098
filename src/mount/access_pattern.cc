#include "mount/access_pattern.h"

#include <algorithm>

namespace ferry::mount {

AccessPattern::Access AccessPattern::Classify(uint64_t offset, const Window& window) const {
  const uint64_t ahead = std::max(window.target, kForwardTolerance);
  const bool near =
      sequential_ && offset + kBackwardTolerance >= last_end_ && offset <= last_end_ + ahead;
  const bool in_window = offset >= window.begin && offset < window.end;
  const bool starts = !sequential_ && offset == last_end_;
  if (!near && !in_window && !starts) return Access::kRandom;
  return sequential_ ? Access::kSequential : Access::kStartsSequential;
}

int AccessPattern::OnRandom(uint64_t end) {
  sequential_ = false;
  last_end_ = end;
  return ++random_reads_;
}

void AccessPattern::OnSequentialRead(uint64_t end) { last_end_ = std::max(last_end_, end); }

}  // namespace ferry::mount
