#pragma once
// The BlobReader implementations behind BlobCache::Open (internal to proxy/).

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "proxy/blob_reader.h"
#include "proxy/blob_store.h"
#include "proxy/cache_metrics.h"
#include "proxy/fetcher.h"
#include "proxy/inflight_blob.h"

namespace ferry::proxy {

// Reads a published blob from the store in windows of `window` bytes (one ranged read each).
// `on_close` runs when the reader is destroyed (BlobCache unpins the blob).
class StoreBlobReader final : public BlobReader {
 public:
  StoreBlobReader(BlobStore& store, Digest digest, uint64_t begin, uint64_t end, uint64_t size,
                  size_t window, CacheCounters& counters, std::function<void()> on_close);
  ~StoreBlobReader() override;
  Result<size_t> Read(char* buf, size_t n) override;
  // The blob's file when the store has local files (opened on the first call).
  Result<FileSpan> NextFileSpan(size_t n) override;

 private:
  BlobStore& store_;
  Digest digest_;
  uint64_t pos_, end_;
  size_t window_;
  CacheCounters& counters_;
  std::function<void()> on_close_;
  std::string buf_;
  size_t buf_pos_ = 0;
  int fd_ = -1;  // NextFileSpan's open blob file
};

// Reads a blob while an InflightBlob fetches it, from its spool file.
class InflightBlobReader final : public BlobReader {
 public:
  InflightBlobReader(std::shared_ptr<InflightBlob> blob, uint64_t begin, uint64_t end,
                     ReadSource source, CacheCounters& counters);
  Result<size_t> Read(char* buf, size_t n) override;
  // Spans of the spool file.
  Result<FileSpan> NextFileSpan(size_t n) override;

 private:
  // The readable end after pos_, or 0 at the end of the range (then the blob is verified when
  // the range includes its last byte).
  Result<uint64_t> WaitForBytes(size_t n);

  std::shared_ptr<InflightBlob> blob_;
  uint64_t pos_, end_;
  CacheCounters& counters_;
};

// Reads a range straight from upstream through a bounded queue (a thread runs Fetch()).
class DirectRangeReader final : public BlobReader {
 public:
  DirectRangeReader(std::shared_ptr<Fetcher> fetcher, uint64_t begin, uint64_t end, uint64_t size,
                    std::chrono::milliseconds stall_timeout, size_t max_buffered,
                    CacheCounters& counters);
  ~DirectRangeReader() override;
  Result<size_t> Read(char* buf, size_t n) override;

 private:
  void Run();

  std::shared_ptr<Fetcher> fetcher_;
  const uint64_t begin_, end_;
  const std::chrono::milliseconds stall_timeout_;
  const size_t max_buffered_;
  CacheCounters& counters_;
  uint64_t delivered_ = 0;  // reader thread only

  Mutex mu_;
  CondVar cv_;
  std::deque<std::string> chunks_ GUARDED_BY(mu_);
  size_t front_pos_ GUARDED_BY(mu_) = 0;
  size_t buffered_ GUARDED_BY(mu_) = 0;
  uint64_t received_ GUARDED_BY(mu_) = 0;
  bool producer_done_ GUARDED_BY(mu_) = false;
  Status producer_status_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace ferry::proxy
