#include "mount/file_reader.h"

#include <algorithm>
#include <future>
#include <utility>

namespace ferry::mount {

FileReader::FileReader(std::shared_ptr<const PinnedObject> object, const PrefetchOptions& options,
                       MemoryBudget& budget, ThreadPool& pool, BlockCacheFill::Fetched fetched)
    : object_(std::move(object)),
      budget_(budget),
      pool_(pool),
      fetched_(std::move(fetched)),
      window_(object_, options, budget, pool) {}

void FileReader::StopBackground() {
  std::unique_ptr<BlockCacheFill> fill;
  {
    MutexLock lock(mu_);
    fill = std::move(fill_);
  }
  fill.reset();  // waits for its tasks, outside the lock
}

void FileReader::UseWhole(WholeObject whole) {
  MutexLock lock(mu_);
  whole_ = std::move(whole);
}

Result<std::string> FileReader::Read(uint64_t offset, size_t size) {
  MutexLock lock(mu_);
  const uint64_t object_size = object_->size();
  if (offset >= object_size) return std::string();
  const uint64_t end = std::min<uint64_t>(object_size, offset + size);
  if (whole_.data.valid()) {
    const Result<std::string>& all = whole_.data.get();
    if (all.ok() && all->size() == object_size) return all->substr(offset, end - offset);
    whole_ = {};  // failed: read it the normal way
  }
  switch (pattern_.Classify(offset, {window_.begin(), window_.end(), window_.target()})) {
    case AccessPattern::Access::kRandom:
      return ReadRandom(offset, end);
    case AccessPattern::Access::kStartsSequential:
      pattern_.OnSequentialStart();
      window_.Restart(offset);
      break;
    case AccessPattern::Access::kSequential:
      break;
  }
  return ReadSequential(offset, end);
}

Result<std::string> FileReader::ReadRandom(uint64_t offset, uint64_t end) {
  const int random_reads = pattern_.OnRandom(end);
  window_.Reset();
  const uint64_t size = object_->size();
  if (random_reads >= 2 && object_->cache()) {
    if (!fill_ && size > 4 * BlockCache::kBlock) {
      fill_ = std::make_unique<BlockCacheFill>(object_, pool_, fetched_, &budget_);
    }
  } else if (random_reads >= 2 && !fetched_whole_ && size <= kWholeObjectLimit) {
    if (auto lease = budget_.TryTake(size)) {
      fetched_whole_ = true;
      std::promise<Result<std::string>> fetched;
      fetched.set_value(object_->Read(0, size));
      whole_ = {.data = fetched.get_future().share(), .lease = std::move(*lease)};
      const Result<std::string>& all = whole_.data.get();
      if (all.ok()) return all->substr(offset, end - offset);
      whole_ = {};
    }
  }
  return object_->Read(offset, end - offset);
}

Result<std::string> FileReader::ReadSequential(uint64_t offset, uint64_t end) {
  // Behind what the window still holds (read late, already dropped): fetch it directly.
  if (offset < window_.begin()) return object_->Read(offset, end - offset);
  std::string out;
  out.reserve(end - offset);
  auto pos = window_.ReadInto(offset, end, out);
  if (!pos.ok()) {
    pattern_.OnSequentialFailure();
    return pos.status();
  }
  if (*pos < end) {  // beyond the window (the budget is spent): fetch the rest directly
    FERRY_ASSIGN_OR_RETURN(std::string rest, object_->Read(*pos, end - *pos));
    out += rest;
  }
  pattern_.OnSequentialRead(end);
  const uint64_t last_end = pattern_.last_end();
  // Keep a little behind the newest read for reads that arrive late.
  window_.Advance(last_end > kBackwardTolerance ? last_end - kBackwardTolerance : 0, last_end);
  return out;
}

}  // namespace ferry::mount
