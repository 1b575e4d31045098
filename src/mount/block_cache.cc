#include "mount/block_cache.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <vector>

#include "base/hash.h"

namespace ferry::mount {

namespace fs = std::filesystem;

namespace {

// Descriptors the cache may keep open: a quarter of RLIMIT_NOFILE, after raising the soft limit
// to the hard one (capped at 65,536), and at least 64.
size_t OpenFileBudget() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) != 0) return 256;
  const rlim_t want = std::min<rlim_t>(lim.rlim_max, 65536);
  if (lim.rlim_cur < want) {
    rlimit raised = lim;
    raised.rlim_cur = want;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
  }
  return std::max<size_t>(64, static_cast<size_t>(lim.rlim_cur / 4));
}

int64_t NowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

BlockCache::OpenFile::~OpenFile() { ::close(fd); }

BlockCache::BlockCache(std::string dir, uint64_t capacity)
    : dir_(std::move(dir)), capacity_(capacity), open_files_(OpenFileBudget()) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
}

std::string BlockCache::PathFor(const std::string& key, const std::string& etag,
                                uint64_t block) const {
  std::string id = key + "\n" + etag;
  std::string prefix;
  {
    MutexLock lock(prefix_mu_);
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

std::shared_ptr<BlockCache::OpenFile> BlockCache::OpenBlock(const std::string& path) {
  MutexLock lock(fds_mu_);
  if (auto it = fds_.find(path); it != fds_.end()) return it->second;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  auto file = std::make_shared<OpenFile>(fd);
  fds_[path] = file;
  fd_order_.push_back(path);
  while (fd_order_.size() > open_files_) {
    fds_.erase(fd_order_.front());  // closed once no reader holds it
    fd_order_.pop_front();
  }
  return file;
}

std::optional<std::string> BlockCache::GetRange(const std::string& key, const std::string& etag,
                                                uint64_t block, uint64_t from, uint64_t length) {
  if (etag.empty()) return std::nullopt;
  std::shared_ptr<OpenFile> file = OpenBlock(PathFor(key, etag, block));
  if (!file) return std::nullopt;
  std::string out(length, '\0');
  ssize_t n = ::pread(file->fd, out.data(), length, static_cast<off_t>(from));
  if (n != static_cast<ssize_t>(length)) return std::nullopt;
  // Used now (eviction takes the least recently used blocks); once a minute is fine enough.
  const int64_t now = NowSeconds();
  int64_t marked = file->marked_used_s.load(std::memory_order_relaxed);
  if ((marked == 0 || now - marked >= 60) &&
      file->marked_used_s.compare_exchange_strong(marked, now, std::memory_order_relaxed)) {
    ::futimens(file->fd, nullptr);
  }
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

}  // namespace ferry::mount
