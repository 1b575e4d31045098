#include "mount/block_cache_fill.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string_view>

namespace ferry::mount {

struct BlockCacheFill::State {
  std::shared_ptr<const PinnedObject> object;
  std::atomic<uint64_t> next{0};  // first block of the next span to take
  std::atomic<bool> cancel{false};
  std::mutex mu;
  std::condition_variable done;
  int running = kStreams;  // guarded by mu

  void Work() {
    const uint64_t B = BlockCache::kBlock, size = object->size();
    BlockCache& cache = *object->cache();
    const std::string& key = object->key();
    const std::string& etag = object->etag();
    for (uint64_t first = next.fetch_add(kBlocksPerGet); !cancel && first * B < size;
         first = next.fetch_add(kBlocksPerGet)) {
      const uint64_t last = std::min(first + kBlocksPerGet, (size + B - 1) / B);  // exclusive
      bool missing = false;
      for (uint64_t b = first; b < last && !missing; ++b) missing = !cache.Has(key, etag, b);
      if (!missing) continue;
      const uint64_t start = first * B, length = std::min(last * B, size) - start;
      auto got = object->Get(start, length);
      if (!got.ok()) break;
      for (uint64_t b = first; b < last; ++b) {
        cache.Put(key, etag, b, std::string_view(*got).substr((b - first) * B, B));
      }
    }
    std::lock_guard lock(mu);
    if (--running == 0) done.notify_all();
  }
};

BlockCacheFill::BlockCacheFill(std::shared_ptr<const PinnedObject> object, ThreadPool& pool)
    : state_(std::make_shared<State>()) {
  state_->object = std::move(object);
  for (int i = 0; i < kStreams; ++i) pool.Submit([s = state_] { s->Work(); });
}

BlockCacheFill::~BlockCacheFill() {
  state_->cancel = true;
  std::unique_lock lock(state_->mu);
  state_->done.wait(lock, [&] { return state_->running == 0; });
}

}  // namespace ferry::mount
