#include "mount/prefetch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <fstream>

#include "base/hash.h"
#include "base/log.h"

namespace ferry::mount {

namespace fs = std::filesystem;

namespace {
// One ranged GET pinned to the ETag the reader saw (If-Match): never a mix of two versions.
Result<std::string> ReadRange(storage::Store& store, const std::string& key,
                              const std::string& etag, uint64_t offset, uint64_t length) {
  return store.ReadAll(key, {.range = storage::ByteRange{offset, length}, .if_match = etag});
}
}  // namespace

constexpr uint64_t kBackwardTolerance = 2ull << 20;
constexpr uint64_t kForwardTolerance = 16ull << 20;
constexpr uint64_t kWholeObjectLimit = 8ull << 20;  // random reads fetch smaller objects whole

bool MemoryBudget::TryAcquire(uint64_t n) {
  uint64_t cur = used_.load();
  do {
    if (cur + n > capacity_) return false;
  } while (!used_.compare_exchange_weak(cur, cur + n));
  return true;
}

BlockCache::BlockCache(std::string dir, uint64_t capacity)
    : dir_(std::move(dir)), capacity_(capacity) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
}

std::string BlockCache::PathFor(const std::string& key, const std::string& etag,
                                uint64_t block) const {
  std::string id = key + "\n" + etag;
  std::string prefix;
  {
    std::lock_guard lock(prefix_mu_);
    auto it = prefixes_.find(id);
    if (it != prefixes_.end()) {
      prefix = it->second;
    } else {
      prefix = dir_ + "/" + Sha256Hex(id).substr(0, 32) + "-";
      if (prefixes_.size() > 4096) prefixes_.clear();
      prefixes_[id] = prefix;
    }
  }
  return prefix + std::to_string(block);
}

int BlockCache::OpenBlock(const std::string& path) {
  std::lock_guard lock(fds_mu_);
  if (auto it = fds_.find(path); it != fds_.end()) return ::dup(it->second);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  fds_[path] = fd;
  fd_order_.push_back(path);
  while (fd_order_.size() > kOpenFiles) {
    auto old = fds_.find(fd_order_.front());
    if (old != fds_.end()) {
      ::close(old->second);
      fds_.erase(old);
    }
    fd_order_.pop_front();
  }
  return ::dup(fd);
}

void BlockCache::CloseAll() {
  std::lock_guard lock(fds_mu_);
  for (auto& [path, fd] : fds_) ::close(fd);
  fds_.clear();
  fd_order_.clear();
}

std::optional<std::string> BlockCache::Get(const std::string& key, const std::string& etag,
                                           uint64_t block) {
  if (etag.empty()) return std::nullopt;
  std::string path = PathFor(key, etag, block);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string data((std::istreambuf_iterator<char>(in)), {});
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
  return data;
}

std::optional<std::string> BlockCache::GetRange(const std::string& key, const std::string& etag,
                                                uint64_t block, uint64_t from, uint64_t length) {
  if (etag.empty()) return std::nullopt;
  int fd = OpenBlock(PathFor(key, etag, block));
  if (fd < 0) return std::nullopt;
  std::string out(length, '\0');
  ssize_t n = ::pread(fd, out.data(), length, static_cast<off_t>(from));
  ::close(fd);
  if (n != static_cast<ssize_t>(length)) return std::nullopt;
  return out;
}

bool BlockCache::Has(const std::string& key, const std::string& etag, uint64_t block) const {
  struct stat st;
  return !etag.empty() && ::stat(PathFor(key, etag, block).c_str(), &st) == 0;
}

void BlockCache::Put(const std::string& key, const std::string& etag, uint64_t block,
                     std::string_view data) {
  if (etag.empty()) return;
  std::string path = PathFor(key, etag, block);
  std::string tmp = path + ".tmp-" + std::to_string(::gettid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) {
      std::error_code ec;
      fs::remove(tmp, ec);
      return;
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);  // atomic: readers see a whole block or none
  if ((written_since_check_ += data.size()) > capacity_ / 16) MaybeEvict();
}

void BlockCache::MaybeEvict() {
  std::unique_lock lock(evict_mu_, std::try_to_lock);
  if (!lock) return;
  written_since_check_ = 0;
  std::vector<std::pair<fs::file_time_type, fs::path>> files;
  uint64_t total = 0;
  std::error_code ec;
  std::vector<uint64_t> sizes;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    std::error_code ec2;
    auto size = e.file_size(ec2);
    if (ec2) continue;
    files.emplace_back(e.last_write_time(ec2), e.path());
    total += size;
  }
  if (total <= capacity_) return;
  std::sort(files.begin(), files.end());
  for (const auto& [t, p] : files) {
    if (total <= capacity_ * 9 / 10) break;
    std::error_code ec2;
    auto size = fs::file_size(p, ec2);
    if (!ec2 && fs::remove(p, ec2)) total -= size;
  }
}

// Fetches every block of the object into the disk cache, 8 x 8 MiB GETs at a time, while the file
// is open: random readers (databases, indexes, fio) then read at local-disk speed, as s3fs and
// rclone's full VFS cache do, but bounded by --cache-size and shared with later opens/mounts.
struct FileReader::Fill {
  std::shared_ptr<storage::Store> store;
  std::string key, etag;
  uint64_t size = 0;
  BlockCache* cache = nullptr;
  std::atomic<uint64_t> next{0};
  std::atomic<bool> cancel{false};
  std::atomic<int> running{0};
  std::mutex mu;
  std::condition_variable done;
  void Work() {
    const uint64_t B = BlockCache::kBlock;
    const uint64_t span = 8;  // blocks per request: 8 MiB GETs
    for (uint64_t first = (next += span) - span; !cancel && first * B < size;
         first = (next += span) - span) {
      uint64_t last = std::min(first + span, (size + B - 1) / B);  // exclusive
      bool missing = false;
      for (uint64_t b = first; b < last && !missing; ++b) missing = !cache->Has(key, etag, b);
      if (!missing) continue;
      uint64_t start = first * B, len = std::min(last * B, size) - start;
      auto got = ReadRange(*store, key, etag, start, len);
      if (!got.ok() || got->size() != len) break;  // reads still work block by block
      for (uint64_t b = first; b < last; ++b) {
        cache->Put(key, etag, b, std::string_view(*got).substr((b - first) * B, B));
      }
    }
    std::lock_guard lock(mu);
    if (--running == 0) done.notify_all();
  }
};

FileReader::FileReader(std::shared_ptr<storage::Store> store, std::string key, std::string etag,
                       uint64_t size, const PrefetchOptions& options, MemoryBudget& budget,
                       ThreadPool& pool, BlockCache* cache)
    : store_(std::move(store)),
      key_(std::move(key)),
      etag_(std::move(etag)),
      size_(size),
      options_(options),
      budget_(budget),
      pool_(pool),
      cache_(cache),
      window_target_(options.initial_window) {}

FileReader::~FileReader() {
  std::lock_guard lock(mu_);
  DropAll();
  if (whole_budget_) budget_.Release(whole_budget_);
  if (fill_) {  // stop the fill and wait for its tasks (they use the cache, owned by the mount)
    fill_->cancel = true;
    std::unique_lock fl(fill_->mu);
    fill_->done.wait(fl, [&] { return fill_->running == 0; });
  }
}

Result<std::string> FileReader::Fetch(uint64_t offset, uint64_t length) {
  if (cache_) return FetchCached(offset, length);
  return ReadRange(*store_, key_, etag_, offset, length);
}

void FileReader::StartFill() {
  if (fill_ || !cache_ || size_ <= 4 * BlockCache::kBlock) return;
  fill_ = std::make_shared<Fill>();
  fill_->store = store_;
  fill_->key = key_;
  fill_->etag = etag_;
  fill_->size = size_;
  fill_->cache = cache_;
  fill_->running = 8;
  for (int i = 0; i < 8; ++i) pool_.Submit([f = fill_] { f->Work(); });
}

Result<std::string> FileReader::FetchCached(uint64_t offset, uint64_t length) {
  const uint64_t B = BlockCache::kBlock;
  const uint64_t first = offset / B, last = (std::min(offset + length, size_) - 1) / B;
  std::vector<std::optional<std::string>> parts;
  bool all_cached = true;
  for (uint64_t block = first; block <= last; ++block) {
    uint64_t from = std::max(offset, block * B) - block * B;
    uint64_t to = std::min({offset + length, block * B + B, size_}) - block * B;
    parts.push_back(cache_->GetRange(key_, etag_, block, from, to - from));
    all_cached = all_cached && parts.back().has_value();
  }
  if (!all_cached) {
    // One GET for the whole block-aligned span; every block of it goes into the cache.
    uint64_t start = first * B, end = std::min(size_, (last + 1) * B);
    FERRY_ASSIGN_OR_RETURN(std::string got, ReadRange(*store_, key_, etag_, start, end - start));
    if (got.size() != end - start)
      return Status(StatusCode::kDataLoss, "short read of '" + key_ + "'");
    for (uint64_t block = first; block <= last; ++block) {
      uint64_t at = (block - first) * B;
      if (!parts[block - first])
        cache_->Put(key_, etag_, block, std::string_view(got).substr(at, B));
    }
    return got.substr(offset - start, std::min(offset + length, size_) - offset);
  }
  std::string out;
  for (auto& p : parts) out += *p;
  return out;
}

void FileReader::DropBefore(uint64_t offset) {
  while (!window_.empty() && window_.front().offset + window_.front().length <= offset) {
    if (window_.front().budgeted) budget_.Release(window_.front().length);
    window_.pop_front();
  }
}

void FileReader::DropAll() {
  for (auto& p : window_) {
    if (p.data.valid()) p.data.wait();  // the fetch task refers to this reader's fields
    if (p.budgeted) budget_.Release(p.length);
  }
  window_.clear();
}

void FileReader::FillWindow(uint64_t from) {
  if (next_fetch_ < from) next_fetch_ = from;
  while (next_fetch_ < size_ && next_fetch_ < from + window_target_) {
    uint64_t len = std::min({options_.part_size, size_ - next_fetch_});
    if (!budget_.TryAcquire(len)) break;  // over --max-memory: read on demand
    auto promise = std::make_shared<std::promise<Result<std::string>>>();
    Part part{.offset = next_fetch_,
              .length = len,
              .data = promise->get_future().share(),
              .budgeted = true};
    pool_.Submit([this, promise, off = next_fetch_, len] { promise->set_value(Fetch(off, len)); });
    window_.push_back(std::move(part));
    next_fetch_ += len;
  }
}

Result<std::string> FileReader::Read(uint64_t offset, size_t size) {
  std::lock_guard lock(mu_);
  if (offset >= size_) return std::string();
  uint64_t end = std::min<uint64_t>(size_, offset + size);
  if (whole_.valid()) {
    const Result<std::string>& all = whole_.get();
    if (all.ok() && all->size() == size_) return all->substr(offset, end - offset);
    whole_ = {};  // failed or changed: read it the normal way
  }
  // The kernel's readahead sends several reads at once and FUSE threads may serve them out of
  // order, so "sequential" tolerates reads a little behind or ahead of the last one.
  const uint64_t behind = kBackwardTolerance;
  const uint64_t ahead = std::max(window_target_, kForwardTolerance);
  bool near = sequential_ && offset + behind >= last_end_ && offset <= last_end_ + ahead;
  bool in_window = !window_.empty() && offset >= window_.front().offset && offset < next_fetch_;
  bool starts = !sequential_ && offset == last_end_;  // from 0, or continuing a random read
  if (!near && !in_window && !starts) {
    // Random access: drop the window, fetch exactly this range.
    if (++random_reads_ >= 2) StartFill();
    DropAll();
    // A small object read randomly (an index, a footer then columns) is fetched whole once,
    // inside the memory budget; later reads are served from memory.
    if (random_reads_ >= 2 && !cache_ && size_ <= kWholeObjectLimit && !whole_budget_ &&
        budget_.TryAcquire(size_)) {
      whole_budget_ = size_;
      auto all = Fetch(0, size_);
      std::promise<Result<std::string>> p;
      p.set_value(all);
      whole_ = p.get_future().share();
      if (all.ok() && all->size() == size_) return all->substr(offset, end - offset);
    }
    sequential_ = false;
    window_target_ = options_.initial_window;
    next_fetch_ = 0;
    last_end_ = end;
    return Fetch(offset, end - offset);
  }
  if (!sequential_) {
    sequential_ = true;
    DropAll();
    next_fetch_ = offset;
  }
  if (offset < (window_.empty() ? next_fetch_ : window_.front().offset)) {
    // Behind what is buffered (already dropped): fetch it directly, keep the window.
    auto direct = Fetch(offset, end - offset);
    return direct;
  }
  FillWindow(offset);
  std::string out;
  out.reserve(end - offset);
  uint64_t pos = offset;
  for (auto& part : window_) {
    if (pos >= end) break;
    if (part.offset + part.length <= pos) continue;
    if (part.offset > pos) break;
    const Result<std::string>& data = part.data.get();
    if (!data.ok()) {
      Status s = data.status();
      DropAll();
      sequential_ = false;
      next_fetch_ = 0;
      return s;
    }
    uint64_t from = pos - part.offset;
    uint64_t n = std::min<uint64_t>(end - pos, data->size() - from);
    out.append(*data, from, n);
    pos += n;
    if (part.offset + part.length <= end && window_target_ < options_.max_window)
      window_target_ *= 2;
  }
  if (pos < end) {  // beyond the window (budget spent): fetch the rest directly
    auto rest = Fetch(pos, end - pos);
    if (!rest.ok()) return rest.status();
    out += *rest;
  }
  last_end_ = std::max(last_end_, end);
  // Keep a little behind the newest read for reads that arrive late.
  DropBefore(last_end_ > behind ? last_end_ - behind : 0);
  FillWindow(last_end_);
  return out;
}

SmallFiles::~SmallFiles() {
  std::lock_guard lock(mu_);
  while (!entries_.empty()) Evict(entries_.begin());
}

void SmallFiles::Evict(std::map<std::string, Entry>::iterator it) {
  if (it->second.data.valid()) it->second.data.wait();  // the fetch task refers to us
  budget_.Release(it->second.size);
  entries_.erase(it);
}

void SmallFiles::Prefetch(const std::string& key, const std::string& etag, uint64_t size) {
  std::lock_guard lock(mu_);
  if (entries_.contains(key) || etag.empty()) return;
  if (!budget_.TryAcquire(size)) return;
  auto promise = std::make_shared<std::promise<Result<std::string>>>();
  entries_[key] = Entry{.etag = etag, .size = size, .data = promise->get_future().share()};
  order_.push_back(key);
  pool_.Submit([store = store_, key, etag, size, promise] {
    promise->set_value(ReadRange(*store, key, etag, 0, size));
  });
  while (order_.size() > capacity_) {
    auto it = entries_.find(order_.front());
    order_.pop_front();
    if (it != entries_.end()) Evict(it);
  }
}

std::optional<std::shared_future<Result<std::string>>> SmallFiles::Take(const std::string& key,
                                                                        const std::string& etag) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  std::optional<std::shared_future<Result<std::string>>> out;
  if (it->second.etag == etag) out = it->second.data;
  // The reader keeps the data alive through its shared_future; the budget is returned now.
  budget_.Release(it->second.size);
  entries_.erase(it);
  return out;
}

}  // namespace ferry::mount
