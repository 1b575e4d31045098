#include "mount/read_window.h"

#include <algorithm>
#include <optional>

namespace ferry::mount {

ReadWindow::ReadWindow(std::shared_ptr<const PinnedObject> object, const PrefetchOptions& options,
                       MemoryBudget& budget, ThreadPool& pool)
    : object_(std::move(object)),
      options_(options),
      budget_(budget),
      pool_(pool),
      target_(options.initial_window) {}

// A dropped part's buffer exists until its GET is done: wait, so the budget counts it till then.
void ReadWindow::Clear() {
  for (auto& p : parts_) {
    if (p.data.valid()) p.data.wait();
  }
  parts_.clear();
}

void ReadWindow::Restart(uint64_t offset) {
  Clear();
  next_fetch_ = offset;
}

void ReadWindow::Reset() {
  Clear();
  target_ = options_.initial_window;
  next_fetch_ = 0;
}

void ReadWindow::Fill(uint64_t from) {
  const uint64_t size = object_->size();
  next_fetch_ = std::max(next_fetch_, from);
  while (next_fetch_ < size && next_fetch_ < from + target_) {
    const uint64_t length = std::min(options_.part_size, size - next_fetch_);
    std::optional<MemoryBudget::Lease> lease = budget_.TryTake(length);
    if (!lease) break;  // over --max-memory: the reader fetches on demand
    auto promise = std::make_shared<std::promise<Result<std::string>>>();
    pool_.Submit([object = object_, promise, offset = next_fetch_, length] {
      promise->set_value(object->Read(offset, length));
    });
    parts_.push_back({.offset = next_fetch_,
                      .length = length,
                      .data = promise->get_future().share(),
                      .lease = std::move(*lease)});
    next_fetch_ += length;
  }
}

Result<uint64_t> ReadWindow::ReadInto(uint64_t offset, uint64_t end, std::string& out) {
  Fill(offset);
  uint64_t pos = offset;
  for (const Part& part : parts_) {
    if (pos >= end) break;
    if (part.offset + part.length <= pos) continue;
    if (part.offset > pos) break;
    const Result<std::string>& data = part.data.get();
    if (!data.ok()) {
      Status failed = data.status();
      Clear();
      next_fetch_ = 0;
      return failed;
    }
    const uint64_t from = pos - part.offset;
    const uint64_t n = std::min<uint64_t>(end - pos, data->size() - from);
    out.append(*data, from, n);
    pos += n;
    if (part.offset + part.length <= end && target_ < options_.max_window) {
      target_ = std::min(target_ * 2, options_.max_window);
    }
  }
  return pos;
}

void ReadWindow::Advance(uint64_t keep_from, uint64_t end) {
  while (!parts_.empty() && parts_.front().offset + parts_.front().length <= keep_from) {
    parts_.pop_front();
  }
  Fill(end);
}

}  // namespace ferry::mount
