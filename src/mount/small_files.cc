#include "mount/small_files.h"

#include "mount/pinned_object.h"

namespace ferry::mount {

SmallFiles::~SmallFiles() {
  MutexLock lock(mu_);
  while (!entries_.empty()) Evict(entries_.begin());
}

// Waits for a fetch in flight, so that its buffer is counted until it is freed.
void SmallFiles::Evict(std::map<std::string, Entry>::iterator it) {
  if (it->second.whole.data.valid()) it->second.whole.data.wait();
  entries_.erase(it);
}

void SmallFiles::Prefetch(const std::string& key, const std::string& etag, uint64_t size) {
  MutexLock lock(mu_);
  if (entries_.contains(key) || etag.empty()) return;
  std::optional<MemoryBudget::Lease> lease = budget_.TryTake(size);
  if (!lease) return;
  auto promise = std::make_shared<std::promise<Result<std::string>>>();
  const uint64_t id = next_id_++;
  entries_[key] =
      Entry{.etag = etag,
            .id = id,
            .whole = {.data = promise->get_future().share(), .lease = std::move(*lease)}};
  order_.emplace_back(key, id);
  pool_.Submit([object = PinnedObject(store_, key, etag, size), promise] {
    promise->set_value(object.Get(0, object.size()));
  });
  while (order_.size() > capacity_) {
    auto [old_key, old_id] = order_.front();
    order_.pop_front();
    auto it = entries_.find(old_key);
    if (it != entries_.end() && it->second.id == old_id) Evict(it);
  }
}

std::optional<WholeObject> SmallFiles::Take(const std::string& key, const std::string& etag) {
  MutexLock lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  std::optional<WholeObject> out;
  if (it->second.etag == etag) out = std::move(it->second.whole);
  entries_.erase(it);  // another version's lease goes back now
  return out;
}

}  // namespace ferry::mount
