#pragma once
// StoreWrapper: the base of store decorators (a fault-injecting store for tests, later read-only
// and sub-tree views, rate limits, caches), like RocksDB's FileSystemWrapper and LevelDB's
// EnvWrapper. It forwards every virtual of Store to the wrapped store, the optional operations
// too (Copy, CopyFrom, DeleteMany, WriteAll, part writes, Describe, ...), so a decorator
// overrides only what it changes and never falls back silently to Store's generic defaults.
// One pair goes together: a decorator that changes Read() overrides ReadInto() as
// `return Store::ReadInto(...)` (the default, built on Read()), or the copy engine's reads of
// local files, which use ReadInto(), bypass it. So does another: a decorator that changes
// NewWriter() overrides LinkLocalFile() too (a linked file never passes through a Writer).
// store_wrapper_test checks that each virtual arrives at the wrapped store.
//
// Thread-safety: as the wrapped store. Ownership: shares the wrapped store.

#include <memory>

#include "storage/store.h"

namespace ferry::storage {

class StoreWrapper : public Store {
 public:
  explicit StoreWrapper(std::shared_ptr<Store> inner) : inner_(std::move(inner)) {}

  Store& inner() const { return *inner_; }

  std::string UrlFor(std::string_view key) const override;
  Capabilities capabilities() const override;
  Result<ObjectInfo> Stat(std::string_view key) override;
  Status Read(std::string_view key, const ReadOptions& options, const ByteSink& sink) override;
  Result<size_t> ReadInto(std::string_view key, const ReadOptions& options, std::span<char> dst,
                          const ReadProgress& progress) override;
  Result<std::unique_ptr<Writer>> NewWriter(std::string_view key,
                                            const WriteOptions& options) override;
  Result<ListPage> List(const ListOptions& options) override;
  Status Delete(std::string_view key) override;
  std::vector<Status> DeleteMany(std::span<const std::string> keys) override;
  Status Copy(std::string_view src_key, std::string_view dst_key) override;
  // A copy from this wrapper itself is a copy inside the wrapped store.
  Status CopyFrom(Store& src, std::string_view src_key, std::string_view dst_key) override;
  Result<std::unique_ptr<PartWriter>> NewPartWriter(std::string_view key,
                                                    const PartWriteOptions& options) override;
  Status AbortPartWrite(std::string_view key, std::string_view resume_token) override;
  Result<size_t> AbortPartWritesSince(std::string_view key, SystemTime since) override;
  uint64_t retry_count() const override;
  StoreDescription Describe() override;
  bool IsDirectory(std::string_view key) override;
  std::optional<std::string> LocalPathFor(std::string_view key) const override;
  Result<ObjectInfo> LinkLocalFile(std::string_view key, const std::string& path,
                                   const WriteOptions& options) override;
  std::vector<FlushFailure> Flush() override;
  Result<ObjectInfo> WriteAll(std::string_view key, std::string_view data,
                              const WriteOptions& options = {}) override;

 private:
  std::shared_ptr<Store> inner_;
};

}  // namespace ferry::storage
