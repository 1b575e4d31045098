#include "shard/fetch.h"

#include <fcntl.h>
#include <unistd.h>

#include "base/crc32c.h"
#include "base/errno_status.h"
#include "base/log.h"

namespace ferry::shard {

namespace {
constexpr size_t kBlock = 1 << 20;
}

bool ChunkQueue::Push(std::string block) {
  MutexLock lock(mu_);
  cv_.Wait(lock,
           [&]() REQUIRES(mu_) { return cancelled_ || bytes_ < capacity_ || blocks_.empty(); });
  if (cancelled_) return false;
  bytes_ += block.size();
  blocks_.push_back(std::move(block));
  cv_.NotifyAll();
  return true;
}

void ChunkQueue::Close(Status status) {
  MutexLock lock(mu_);
  closed_ = true;
  status_ = std::move(status);
  cv_.NotifyAll();
}

void ChunkQueue::Cancel() {
  MutexLock lock(mu_);
  cancelled_ = true;
  blocks_.clear();
  cv_.NotifyAll();
}

bool ChunkQueue::Pop(std::string* block, Status* status) {
  MutexLock lock(mu_);
  cv_.Wait(lock, [&]() REQUIRES(mu_) { return !blocks_.empty() || closed_; });
  if (!blocks_.empty()) {
    *block = std::move(blocks_.front());
    blocks_.pop_front();
    bytes_ -= block->size();
    cv_.NotifyAll();
    return true;
  }
  *status = status_;
  return false;
}

ShardFetch::ShardFetch(FetchSpec spec)
    : spec_(std::move(spec)), queue_(spec_.read_ahead), thread_([this] { Run(); }) {}

ShardFetch::~ShardFetch() {
  queue_.Cancel();
  thread_.join();
}

void ShardFetch::Run() {
  Status s;
  if (spec_.cache && spec_.cache->enabled()) {
    if (auto path = spec_.cache->Lookup(spec_.url, spec_.size, spec_.crc32c)) {
      s = ReadLocal(*path);
      queue_.Close(s.ok() ? s : s.WithContext(Where()));
      return;
    }
  }
  queue_.Close(FetchRemote());
}

Status ShardFetch::ReadLocal(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, "open cached shard '" + path + "'");
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  uint64_t off = spec_.start;
  Status s;
  while (true) {
    std::string block(kBlock, '\0');
    ssize_t n = ::pread(fd, block.data(), block.size(), static_cast<off_t>(off));
    if (n < 0) {
      if (errno == EINTR) continue;
      s = ErrnoToStatus(errno, "read cached shard '" + path + "'");
      break;
    }
    if (n == 0) break;
    block.resize(static_cast<size_t>(n));
    off += static_cast<uint64_t>(n);
    if (!queue_.Push(std::move(block))) break;
  }
  ::close(fd);
  return s;
}

Status ShardFetch::FetchRemote() {
  // A whole-shard read is checked against the index CRC and may fill the cache.
  const bool whole = spec_.start == 0;
  int tee = -1;
  std::string temp;
  if (whole && spec_.cache && spec_.cache->enabled() && !spec_.crc32c.empty()) {
    auto t = spec_.cache->TempPath(spec_.url, spec_.size, spec_.crc32c);
    if (t.ok()) {
      temp = *t;
      tee = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (tee < 0)
        Log(LogLevel::kWarn, "shard cache: cannot create '{}': {}", temp, std::strerror(errno));
    } else {
      Log(LogLevel::kWarn, "shard cache: {}", t.status().message());
    }
  }
  Crc32c crc;
  uint64_t got = 0;
  bool tee_ok = tee >= 0;
  std::string block;
  block.reserve(kBlock);
  auto flush = [&]() -> Status {
    if (block.empty()) return Status();
    if (tee_ok && ::write(tee, block.data(), block.size()) != static_cast<ssize_t>(block.size())) {
      Log(LogLevel::kWarn, "shard cache: write failed ({}); not caching '{}'", std::strerror(errno),
          spec_.url);
      tee_ok = false;
    }
    std::string out;
    out.reserve(kBlock);
    std::swap(out, block);
    if (!queue_.Push(std::move(out))) return Status(StatusCode::kCancelled, "reader closed");
    return Status();
  };
  storage::ReadOptions ro;
  if (!whole) ro.range = storage::ByteRange{spec_.start, std::nullopt};
  Status s = spec_.store->Read(spec_.key, ro, [&](std::string_view chunk) -> Status {
    crc.Update(chunk);
    got += chunk.size();
    while (!chunk.empty()) {
      size_t n = std::min(chunk.size(), kBlock - block.size());
      block.append(chunk.substr(0, n));
      chunk.remove_prefix(n);
      if (block.size() == kBlock) FERRY_RETURN_IF_ERROR(flush());
    }
    return Status();
  });
  if (s.ok()) s = flush();
  if (!s.ok()) s = s.WithContext(Where());
  if (s.ok() && whole && !spec_.crc32c.empty()) {
    if (got != spec_.size) {
      s = Status(StatusCode::kDataLoss, Where() + " has " + std::to_string(got) +
                                            " bytes, the index says " + std::to_string(spec_.size));
    } else if (Crc32cHex(crc.value()) != spec_.crc32c) {
      s = Status(StatusCode::kDataLoss, Where() + ": CRC32C " + Crc32cHex(crc.value()) +
                                            " does not match the index (" + spec_.crc32c + ")");
    }
  }
  if (tee >= 0) {
    ::close(tee);
    if (s.ok() && tee_ok) {
      Status p = spec_.cache->Publish(temp, spec_.url, spec_.size, spec_.crc32c);
      if (!p.ok()) Log(LogLevel::kWarn, "shard cache: {}", p.message());
    } else {
      ::unlink(temp.c_str());
    }
  }
  return s;
}

}  // namespace ferry::shard
