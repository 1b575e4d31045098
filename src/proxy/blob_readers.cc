#include "proxy/blob_readers.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "base/errno_status.h"

namespace ferry::proxy {

StoreBlobReader::StoreBlobReader(BlobStore& store, Digest digest, uint64_t begin, uint64_t end,
                                 uint64_t size, size_t window, CacheCounters& counters,
                                 std::function<void()> on_close)
    : BlobReader(begin, end - begin, size, ReadSource::kHit),
      store_(store),
      digest_(std::move(digest)),
      pos_(begin),
      end_(end),
      window_(window),
      counters_(counters),
      on_close_(std::move(on_close)) {}

StoreBlobReader::~StoreBlobReader() {
  if (fd_ >= 0) ::close(fd_);
  if (on_close_) on_close_();
}

Result<FileSpan> StoreBlobReader::NextFileSpan(size_t n) {
  if (cancelled_)
    return Status(StatusCode::kCancelled, "Read " + digest_.ToString() + ": cancelled");
  if (fd_ < 0) {
    std::optional<std::string> path = store_.LocalPathFor(digest_);
    if (!path || pos_ != offset() || !buf_.empty()) return BlobReader::NextFileSpan(n);
    int fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoToStatus(errno, "Read blob '" + store_.UrlFor(digest_) + "'");
    struct stat st;
    if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != blob_size()) {
      ::close(fd);
      return Status(StatusCode::kDataLoss, "Read blob '" + store_.UrlFor(digest_) +
                                               "': the file does not have the blob's " +
                                               std::to_string(blob_size()) + " bytes");
    }
    fd_ = fd;
  }
  size_t k = static_cast<size_t>(std::min<uint64_t>(n, end_ - pos_));
  FileSpan span{fd_, pos_, k};
  pos_ += k;
  counters_.bytes_served += k;
  return span;
}

Result<size_t> StoreBlobReader::Read(char* buf, size_t n) {
  if (cancelled_)
    return Status(StatusCode::kCancelled, "Read " + digest_.ToString() + ": cancelled");
  if (buf_pos_ == buf_.size()) {
    if (pos_ >= end_) return size_t{0};
    buf_.clear();
    buf_pos_ = 0;
    uint64_t want = std::min<uint64_t>(window_, end_ - pos_);
    FERRY_RETURN_IF_ERROR(store_.Read(digest_, {pos_, want}, [&](std::string_view chunk) {
      buf_.append(chunk);
      return Status::Ok();
    }));
    if (buf_.size() != want) {
      return Status(StatusCode::kDataLoss, "Read blob '" + store_.UrlFor(digest_) + "': got " +
                                               std::to_string(buf_.size()) + " of " +
                                               std::to_string(want) + " bytes at " +
                                               std::to_string(pos_));
    }
    pos_ += want;
  }
  size_t k = std::min(n, buf_.size() - buf_pos_);
  std::memcpy(buf, buf_.data() + buf_pos_, k);
  buf_pos_ += k;
  counters_.bytes_served += k;
  return k;
}

InflightBlobReader::InflightBlobReader(std::shared_ptr<InflightBlob> blob, uint64_t begin,
                                       uint64_t end, ReadSource source, CacheCounters& counters)
    : BlobReader(begin, end - begin, blob->size(), source),
      blob_(std::move(blob)),
      pos_(begin),
      end_(end),
      counters_(counters) {}

Result<uint64_t> InflightBlobReader::WaitForBytes(size_t n) {
  if (pos_ >= end_) {
    // A range up to the end finishes only when the blob is verified.
    if (end_ == blob_->size())
      FERRY_RETURN_IF_ERROR(blob_->WaitReadable(pos_, &cancelled_).status());
    return uint64_t{0};
  }
  FERRY_ASSIGN_OR_RETURN(uint64_t readable, blob_->WaitReadable(pos_, &cancelled_));
  return std::min<uint64_t>(n, std::min(readable, end_) - pos_);
}

Result<size_t> InflightBlobReader::Read(char* buf, size_t n) {
  FERRY_ASSIGN_OR_RETURN(uint64_t avail, WaitForBytes(n));
  if (avail == 0) return size_t{0};
  FERRY_ASSIGN_OR_RETURN(size_t k, blob_->ReadSpool(pos_, buf, static_cast<size_t>(avail)));
  if (k == 0) return Internal("read spool of " + blob_->digest().ToString() + ": short read");
  pos_ += k;
  counters_.bytes_served += k;
  return k;
}

Result<FileSpan> InflightBlobReader::NextFileSpan(size_t n) {
  FERRY_ASSIGN_OR_RETURN(uint64_t avail, WaitForBytes(n));
  FileSpan span{blob_->spool_fd(), pos_, static_cast<size_t>(avail)};
  pos_ += avail;
  counters_.bytes_served += avail;
  return span;
}

DirectRangeReader::DirectRangeReader(std::shared_ptr<Fetcher> fetcher, uint64_t begin, uint64_t end,
                                     uint64_t size, std::chrono::milliseconds stall_timeout,
                                     size_t max_buffered, CacheCounters& counters)
    : BlobReader(begin, end - begin, size, ReadSource::kDirect),
      fetcher_(std::move(fetcher)),
      begin_(begin),
      end_(end),
      stall_timeout_(stall_timeout),
      max_buffered_(max_buffered),
      counters_(counters) {
  thread_ = std::thread([this] { Run(); });
}

DirectRangeReader::~DirectRangeReader() {
  {
    MutexLock lock(mu_);
    closed_ = true;
    cv_.NotifyAll();
  }
  thread_.join();
}

void DirectRangeReader::Run() {
  Status st = fetcher_->Fetch({begin_, end_ - begin_}, [&](std::string_view chunk) -> Status {
    MutexLock lock(mu_);
    cv_.Wait(lock, [&]() REQUIRES(mu_) { return closed_ || buffered_ < max_buffered_; });
    if (closed_) return Status(StatusCode::kCancelled, "range read closed");
    if (received_ + chunk.size() > end_ - begin_) {
      return Status(StatusCode::kDataLoss, "upstream sent more than the range asked for");
    }
    chunks_.emplace_back(chunk);
    buffered_ += chunk.size();
    received_ += chunk.size();
    counters_.bytes_fetched += chunk.size();
    cv_.NotifyAll();
    return Status::Ok();
  });
  MutexLock lock(mu_);
  if (st.ok() && received_ != end_ - begin_) {
    st = Status(StatusCode::kDataLoss, "upstream ended after " + std::to_string(received_) +
                                           " of " + std::to_string(end_ - begin_) + " bytes");
  }
  producer_status_ =
      st.ok() ? st : st.WithContext("Read range of '" + fetcher_->Describe() + "' from upstream");
  producer_done_ = true;
  cv_.NotifyAll();
}

Result<size_t> DirectRangeReader::Read(char* buf, size_t n) {
  if (delivered_ >= end_ - begin_) return size_t{0};
  MutexLock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + stall_timeout_;
  while (chunks_.empty()) {
    if (producer_done_) {
      if (!producer_status_.ok()) return producer_status_;
      return size_t{0};
    }
    if (cancelled_) {
      closed_ = true;
      cv_.NotifyAll();
      return Status(StatusCode::kCancelled,
                    "Read range of '" + fetcher_->Describe() + "': cancelled");
    }
    auto now = std::chrono::steady_clock::now();
    if (now < deadline) {
      cv_.WaitFor(
          lock,
          std::min<std::chrono::steady_clock::duration>(deadline - now, InflightBlob::kCancelPoll),
          [&]() REQUIRES(mu_) { return !chunks_.empty() || producer_done_; });
    } else {
      closed_ = true;
      cv_.NotifyAll();
      return Status(StatusCode::kDeadlineExceeded,
                    "Read range of '" + fetcher_->Describe() + "' from upstream: stalled for " +
                        std::to_string(stall_timeout_.count()) + " ms");
    }
  }
  std::string& front = chunks_.front();
  size_t k = std::min(n, front.size() - front_pos_);
  std::memcpy(buf, front.data() + front_pos_, k);
  front_pos_ += k;
  buffered_ -= k;
  if (front_pos_ == front.size()) {
    chunks_.pop_front();
    front_pos_ = 0;
  }
  delivered_ += k;
  counters_.bytes_served += k;
  cv_.NotifyAll();
  return k;
}

}  // namespace ferry::proxy
