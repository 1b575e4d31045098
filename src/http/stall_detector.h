#pragma once
// The minimum-progress rule for data transfers: a transfer that moved fewer than
// `min_bytes_per_second` on average over the last `window` is stalled.
//
// Why not only curl's low-speed check: curl aborts when its 5-second speed stays below a limit
// for the whole window, and Ferry sets that limit to 1 byte/s for every request. A server that
// trickles 1 byte every 0.4 s stays above it forever (a copy hung at 294.9 of 300 MiB). This
// rule averages over the whole window instead, so a trickle is caught, while a legitimately slow
// link (100 KB/s is 100 times the 1 KiB/s default) and short pauses inside the window are not.
//
// Times are the transfer's active time: the HTTP client leaves out time spent in the caller's
// sink (a slow consumer, --bwlimit, a full queue), which is not the network's fault.
// Not thread-safe: one detector per transfer.

#include <chrono>
#include <cstdint>
#include <deque>

namespace ferry::http {

class StallDetector final {
 public:
  // A `min_bytes_per_second` of 0 turns the rule off (Update never reports a stall).
  StallDetector(uint64_t min_bytes_per_second, std::chrono::milliseconds window);

  // Records that `bytes` (total, both directions) had moved after `elapsed` active time, and
  // returns true when the average over the last `window` is below the minimum. `elapsed` and
  // `bytes` never decrease between calls.
  bool Update(std::chrono::milliseconds elapsed, uint64_t bytes);

 private:
  struct Sample {
    std::chrono::milliseconds at;
    uint64_t bytes;
  };
  uint64_t min_rate_;
  std::chrono::milliseconds window_;
  std::deque<Sample> samples_;  // about one per second, oldest first, spanning >= window_
};

}  // namespace ferry::http
