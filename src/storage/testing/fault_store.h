#pragma once
// A Store decorator for tests: forwards to another store and fails chosen calls, so code above
// the Store interface (the copy engine) is tested against faults without a network.

#include <atomic>
#include <memory>

#include "storage/store.h"

namespace ferry::storage::testing {

class FaultInjectingStore final : public Store {
 public:
  explicit FaultInjectingStore(std::shared_ptr<Store> inner) : inner_(std::move(inner)) {}

  // Reads number `first_failing` and later (1-based) fail with `code` until reset to 0.
  void FailReadsFrom(int first_failing, StatusCode code = StatusCode::kUnavailable) {
    fail_from_ = first_failing;
    code_ = code;
  }
  // Corrupts the first byte of every read chunk (checksum tests).
  void CorruptReads(bool on) { corrupt_ = on; }
  int reads() const { return reads_; }

  std::string UrlFor(std::string_view key) const override { return inner_->UrlFor(key); }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  Result<ObjectInfo> Stat(std::string_view key) override { return inner_->Stat(key); }
  Status Read(std::string_view key, const ReadOptions& options, const ByteSink& sink) override {
    int n = ++reads_;
    if (fail_from_ > 0 && n >= fail_from_) {
      return Status(code_, "injected fault reading '" + UrlFor(key) + "'");
    }
    if (!corrupt_) return inner_->Read(key, options, sink);
    return inner_->Read(key, options, [&](std::string_view chunk) {
      std::string copy(chunk);
      if (!copy.empty()) copy[0] = static_cast<char>(copy[0] ^ 0x5a);
      return sink(copy);
    });
  }
  Result<std::unique_ptr<Writer>> NewWriter(std::string_view key, const WriteOptions& o) override {
    return inner_->NewWriter(key, o);
  }
  Result<std::unique_ptr<PartWriter>> NewPartWriter(std::string_view key,
                                                    const PartWriteOptions& o) override {
    return inner_->NewPartWriter(key, o);
  }
  Status AbortPartWrite(std::string_view key, std::string_view token) override {
    return inner_->AbortPartWrite(key, token);
  }
  Result<ListPage> List(const ListOptions& o) override { return inner_->List(o); }
  Status Delete(std::string_view key) override { return inner_->Delete(key); }

 private:
  std::shared_ptr<Store> inner_;
  std::atomic<int> reads_{0};
  std::atomic<int> fail_from_{0};
  StatusCode code_ = StatusCode::kUnavailable;
  std::atomic<bool> corrupt_{false};
};

}  // namespace ferry::storage::testing
