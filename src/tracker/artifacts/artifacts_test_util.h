#pragma once
// Shared by this module's tests: body readers and a temporary local store.

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>

#include "server/http_types.h"
#include "storage/local/local_store.h"

namespace ferry::tracker::artifacts::testing {

// Delivers `data` in pieces of at most `step` bytes, then fails with Unavailable if `fail` (a
// client that went away mid-body).
class PiecewiseBody final : public server::BodyReader {
 public:
  PiecewiseBody(std::string data, size_t step, bool fail, std::optional<uint64_t> length)
      : data_(std::move(data)), step_(step), fail_(fail), length_(length) {}
  Result<size_t> Read(char* buf, size_t n) override {
    size_t k = std::min({n, step_, data_.size() - pos_});
    if (k == 0 && fail_) return Unavailable("reading the request body failed: end of stream");
    std::memcpy(buf, data_.data() + pos_, k);
    pos_ += k;
    return k;
  }
  std::optional<uint64_t> content_length() const override { return length_; }

 private:
  std::string data_;
  size_t pos_ = 0, step_;
  bool fail_;
  std::optional<uint64_t> length_;
};

inline std::string Bytes(size_t n, uint64_t seed = 1) {
  std::string s(n, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}

// A fresh directory per test, removed at the end.
class TempDir final {
 public:
  explicit TempDir(const std::string& name)
      : path_((std::filesystem::temp_directory_path() /
               ("ferry-art-" + std::to_string(getpid()) + "-" + name))
                  .string()) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace ferry::tracker::artifacts::testing
