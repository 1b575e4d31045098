#pragma once
// A Fetcher over bytes in memory for tests: counts calls, records the offsets asked for, and
// can truncate, corrupt, stall, pace or fail with retryable errors.

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "proxy/fetcher.h"

namespace ferry::proxy::testing {

class FakeFetcher final : public Fetcher {
 public:
  explicit FakeFetcher(std::string data, size_t chunk = 4096)
      : data_(std::move(data)), chunk_(chunk) {}

  // The first `count` calls stop with kUnavailable once they delivered at least `bytes`.
  void FailAfter(uint64_t bytes, int count) {
    fail_after_ = bytes;
    fail_count_ = count;
  }
  // Returns OK after this many bytes of the object (a truncated upstream).
  void TruncateAt(uint64_t at) { truncate_at_ = at; }
  // Flips a byte at this object offset.
  void CorruptAt(uint64_t at) { corrupt_at_ = at; }
  // A call that starts at or before object offset `at` stops sending there until Release()
  // (bounded by 10 s, then kUnavailable).
  void StallAt(uint64_t at) { stall_at_ = at; }
  void Release() { released_ = true; }
  // Sleeps between chunks (readers join a download in progress).
  void Pace(std::chrono::milliseconds delay) { pace_ = delay; }
  // Blocks every call before its first byte until Release() (bounded by 10 s).
  void HoldStart() { hold_start_ = true; }

  int calls() const { return calls_.load(); }
  std::vector<uint64_t> offsets() const {
    MutexLock lock(mu_);
    return offsets_;
  }

  std::string Describe() const override { return "fake://upstream"; }

  Status Fetch(const storage::ByteRange& range, const storage::ByteSink& sink) override {
    ++calls_;
    {
      MutexLock lock(mu_);
      offsets_.push_back(range.offset);
    }
    if (hold_start_) WaitRelease();
    uint64_t end = range.length ? range.offset + *range.length : data_.size();
    if (end > data_.size()) end = data_.size();
    bool fail = fail_count_.load() > 0;
    if (fail) --fail_count_;
    uint64_t sent = 0;
    for (uint64_t pos = range.offset; pos < end;) {
      if (pos >= truncate_at_) return Status::Ok();
      if (pos >= stall_at_ && range.offset <= stall_at_) {
        WaitRelease();
        if (!released_) return Status(StatusCode::kUnavailable, "fake stall gave up");
      }
      if (fail && sent >= fail_after_) {
        return Status(StatusCode::kUnavailable, "fake connection reset");
      }
      uint64_t n = std::min<uint64_t>({chunk_, end - pos, truncate_at_ - pos});
      if (pos < stall_at_) n = std::min<uint64_t>(n, stall_at_ - pos);
      std::string chunk = data_.substr(pos, n);
      if (corrupt_at_ >= pos && corrupt_at_ < pos + n) chunk[corrupt_at_ - pos] ^= 0x20;
      FERRY_RETURN_IF_ERROR(sink(chunk));
      pos += n;
      sent += n;
      if (pace_.count() > 0) std::this_thread::sleep_for(pace_);
    }
    return Status::Ok();
  }

 private:
  void WaitRelease() {
    for (int i = 0; i < 1000 && !released_; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  const std::string data_;
  const size_t chunk_;
  std::atomic<int> calls_{0};
  std::atomic<uint64_t> fail_after_{0};
  std::atomic<int> fail_count_{0};
  std::atomic<uint64_t> truncate_at_{UINT64_MAX};
  std::atomic<uint64_t> corrupt_at_{UINT64_MAX};
  std::atomic<uint64_t> stall_at_{UINT64_MAX};
  std::atomic<bool> released_{false};
  std::atomic<bool> hold_start_{false};
  std::chrono::milliseconds pace_{0};
  mutable Mutex mu_;
  std::vector<uint64_t> offsets_ GUARDED_BY(mu_);
};

}  // namespace ferry::proxy::testing
