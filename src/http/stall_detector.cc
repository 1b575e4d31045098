#include "http/stall_detector.h"

namespace ferry::http {

namespace {
// Samples are kept about this far apart, so a window of W seconds holds about W samples.
constexpr std::chrono::milliseconds kSampleSpacing{1000};
}  // namespace

StallDetector::StallDetector(uint64_t min_bytes_per_second, std::chrono::milliseconds window)
    : min_rate_(min_bytes_per_second), window_(window) {
  samples_.push_back({std::chrono::milliseconds(0), 0});
}

bool StallDetector::Update(std::chrono::milliseconds elapsed, uint64_t bytes) {
  if (min_rate_ == 0 || window_.count() <= 0) return false;
  if (elapsed - samples_.back().at >= kSampleSpacing) samples_.push_back({elapsed, bytes});
  // The baseline is the newest sample at least one window old; older ones are not needed.
  while (samples_.size() >= 2 && elapsed - samples_[1].at >= window_) samples_.pop_front();
  const Sample& base = samples_.front();
  auto span = elapsed - base.at;
  if (span < window_) return false;
  // moved / span < min_rate, in integers: moved * 1000 < min_rate * span_ms.
  uint64_t moved = bytes - base.bytes;
  return moved * 1000 < min_rate_ * static_cast<uint64_t>(span.count());
}

}  // namespace ferry::http
