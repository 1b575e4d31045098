#pragma once
// Background fetch of one shard into a bounded queue of byte blocks (reader.cc's prefetcher).

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "base/status.h"
#include "shard/cache.h"
#include "storage/store.h"

namespace ferry::shard {

class ChunkQueue final {
 public:
  explicit ChunkQueue(uint64_t capacity) : capacity_(capacity) {}
  // Blocks while the queue is full; false when the consumer cancelled.
  bool Push(std::string block);
  void Close(Status status);  // end of stream (OK) or its error
  void Cancel();
  // Blocks until a block, the end (returns false with *status OK) or an error.
  bool Pop(std::string* block, Status* status);

 private:
  Mutex mu_;
  CondVar cv_;
  std::deque<std::string> blocks_ GUARDED_BY(mu_);
  uint64_t bytes_ GUARDED_BY(mu_) = 0;
  const uint64_t capacity_;
  bool closed_ GUARDED_BY(mu_) = false;
  bool cancelled_ GUARDED_BY(mu_) = false;
  Status status_ GUARDED_BY(mu_);
};

struct FetchSpec {
  std::shared_ptr<storage::Store> store;
  std::string key, url;
  uint64_t start = 0;  // archive offset to start at
  uint64_t size = 0;   // whole shard size (index)
  std::string crc32c;  // index CRC ("" = unknown)
  ShardCache* cache = nullptr;
  uint64_t read_ahead = 64ull << 20;
};

// Starts fetching at construction; the destructor cancels and joins. Its errors (the queue's
// closing status) name the shard: "shard 'URL': ...".
class ShardFetch final {
 public:
  explicit ShardFetch(FetchSpec spec);
  ~ShardFetch();
  ChunkQueue& queue() { return queue_; }
  const FetchSpec& spec() const { return spec_; }

 private:
  void Run();
  Status FetchRemote();
  std::string Where() const { return "shard '" + spec_.url + "'"; }
  Status ReadLocal(const std::string& path);
  FetchSpec spec_;
  ChunkQueue queue_;
  std::thread thread_;
};

}  // namespace ferry::shard
