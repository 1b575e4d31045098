#include "mount/block_cache_fill.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string_view>
#include <thread>

#include "base/mutex.h"

namespace ferry::mount {

struct BlockCacheFill::State {
  std::shared_ptr<const PinnedObject> object;
  Fetched fetched;
  MemoryBudget* budget = nullptr;
  std::atomic<uint64_t> next{0};  // first block of the next span to take
  std::atomic<bool> cancel{false};
  Mutex mu;
  CondVar done;
  int running GUARDED_BY(mu) = kStreams;

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
      std::optional<MemoryBudget::Lease> lease;
      while (budget && !cancel && !(lease = budget->TryTake(length))) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      if (cancel) break;
      auto got = object->Get(start, length);
      if (!got.ok()) break;
      for (uint64_t b = first; b < last; ++b) {
        cache.Put(key, etag, b, std::string_view(*got).substr((b - first) * B, B));
      }
      if (fetched) fetched(start, *got);
    }
    MutexLock lock(mu);
    if (--running == 0) done.NotifyAll();
  }
};

BlockCacheFill::BlockCacheFill(std::shared_ptr<const PinnedObject> object, ThreadPool& pool,
                               Fetched fetched, MemoryBudget* budget)
    : state_(std::make_shared<State>()) {
  state_->object = std::move(object);
  state_->fetched = std::move(fetched);
  state_->budget = budget;
  for (int i = 0; i < kStreams; ++i) pool.Submit([s = state_] { s->Work(); });
}

BlockCacheFill::~BlockCacheFill() {
  state_->cancel = true;
  State& s = *state_;
  MutexLock lock(s.mu);
  s.done.Wait(lock, [&]() REQUIRES(s.mu) { return s.running == 0; });
}

}  // namespace ferry::mount
