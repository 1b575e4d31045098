#pragma once
// A Store decorator for tests: forwards everything to another store (StoreWrapper) and fails or
// corrupts chosen reads, so code above the Store interface (the copy engine) is tested against
// faults without a network. With no faults injected it is the wrapped store: the conformance
// suite runs over it (storage_test).

#include <atomic>
#include <memory>

#include "storage/store_wrapper.h"

namespace ferry::storage::testing {

class FaultInjectingStore final : public StoreWrapper {
 public:
  explicit FaultInjectingStore(std::shared_ptr<Store> inner) : StoreWrapper(std::move(inner)) {}

  // Reads number `first_failing` and later (1-based) fail with `code` until reset to 0.
  void FailReadsFrom(int first_failing, StatusCode code = StatusCode::kUnavailable) {
    fail_from_ = first_failing;
    code_ = code;
  }
  // Corrupts the first byte of every read chunk (checksum tests).
  void CorruptReads(bool on) { corrupt_ = on; }
  int reads() const { return reads_; }

  // Through Read() above (Store's default), so its faults reach ReadInto() too.
  Result<size_t> ReadInto(std::string_view key, const ReadOptions& options, std::span<char> dst,
                          const ReadProgress& progress) override {
    return Store::ReadInto(key, options, dst, progress);
  }

  Status Read(std::string_view key, const ReadOptions& options, const ByteSink& sink) override {
    int n = ++reads_;
    if (fail_from_ > 0 && n >= fail_from_) {
      return Status(code_, "injected fault reading '" + UrlFor(key) + "'");
    }
    if (!corrupt_) return inner().Read(key, options, sink);
    return inner().Read(key, options, [&](std::string_view chunk) {
      std::string copy(chunk);
      if (!copy.empty()) copy[0] = static_cast<char>(copy[0] ^ 0x5a);
      return sink(copy);
    });
  }

 private:
  std::atomic<int> reads_{0};
  std::atomic<int> fail_from_{0};
  StatusCode code_ = StatusCode::kUnavailable;
  std::atomic<bool> corrupt_{false};
};

}  // namespace ferry::storage::testing
