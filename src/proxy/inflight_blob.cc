#include "proxy/inflight_blob.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "base/errno_status.h"
#include "base/log.h"

namespace ferry::proxy {

namespace {
// Bytes gathered before they go to the blob store's writer (see Accept).
constexpr size_t kStoreBatch = 1u << 20;
}  // namespace

Result<std::shared_ptr<InflightBlob>> InflightBlob::Start(Digest digest, uint64_t size,
                                                          std::shared_ptr<Fetcher> fetcher,
                                                          BlobStore& store, FetchOptions options,
                                                          CacheCounters& counters,
                                                          DoneCallback on_done) {
  // The spool file of an earlier, interrupted fetch of this blob is reused (see the file
  // comment); a longer one than the blob is not this blob's and starts over.
  std::string path = options.spool_dir + "/" + options.spool_prefix +
                     std::string(DigestAlgorithmName(digest.algorithm)) + "-" + digest.hex +
                     ".partial";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return ErrnoToStatus(errno, "create spool file '" + path + "'");
  off_t length = ::lseek(fd, 0, SEEK_END);
  if (length < 0 || static_cast<uint64_t>(length) > size) {
    if (::ftruncate(fd, 0) != 0) {
      Status st = ErrnoToStatus(errno, "truncate spool file '" + path + "'");
      ::close(fd);
      return st;
    }
    length = 0;
  }
  std::shared_ptr<InflightBlob> blob(
      new InflightBlob(std::move(digest), size, std::move(fetcher), store, std::move(options),
                       counters, std::move(on_done), fd, path, static_cast<uint64_t>(length)));
  blob->thread_ = std::thread([raw = blob.get()] { raw->Run(); });
  return blob;
}

InflightBlob::InflightBlob(Digest digest, uint64_t size, std::shared_ptr<Fetcher> fetcher,
                           BlobStore& store, FetchOptions options, CacheCounters& counters,
                           DoneCallback on_done, int spool_fd, std::string spool_path,
                           uint64_t resume_from)
    : digest_(std::move(digest)),
      size_(size),
      fetcher_(std::move(fetcher)),
      store_(store),
      options_(std::move(options)),
      counters_(counters),
      on_done_(std::move(on_done)),
      spool_fd_(spool_fd),
      spool_path_(std::move(spool_path)),
      resume_from_(resume_from) {
  MutexLock lock(mu_);
  last_progress_ = std::chrono::steady_clock::now();
}

InflightBlob::~InflightBlob() {
  Join();
  ::close(spool_fd_);
}

void InflightBlob::Join() {
  if (thread_.joinable()) thread_.join();
}

uint64_t InflightBlob::fetched() const {
  MutexLock lock(mu_);
  return fetched_;
}

uint64_t InflightBlob::ReadableLocked() const {
  if (published_) return size_;
  // The last byte waits for the verification (see the file comment).
  return fetched_ < size_ ? fetched_ : (size_ == 0 ? 0 : size_ - 1);
}

Result<uint64_t> InflightBlob::WaitReadable(uint64_t offset, const std::atomic<bool>* cancel) {
  Status stalled;
  {
    MutexLock lock(mu_);
    while (true) {
      if (!status_.ok()) return status_;
      if (cancel != nullptr && cancel->load()) {
        return Status(StatusCode::kCancelled, "Read " + digest_.ToString() + ": cancelled");
      }
      uint64_t readable = ReadableLocked();
      if (readable > offset || published_) return readable;
      auto now = std::chrono::steady_clock::now();
      // While the store takes a chunk (the store bounds its own requests) the upstream is
      // not the one stalling.
      auto deadline = (store_busy_ ? now : last_progress_) + options_.stall_timeout;
      if (now >= deadline) {
        stalled = Status(StatusCode::kDeadlineExceeded,
                         "Fetch '" + fetcher_->Describe() + "': upstream stalled (no data for " +
                             std::to_string(options_.stall_timeout.count()) + " ms after " +
                             std::to_string(fetched_) + " of " + std::to_string(size_) + " bytes)");
        break;
      }
      auto wait = deadline - now;
      if (cancel != nullptr && wait > kCancelPoll) wait = kCancelPoll;
      cv_.WaitFor(lock, wait, [&]() REQUIRES(mu_) {
        return !status_.ok() || published_ || ReadableLocked() > offset;
      });
    }
  }
  Cancel(stalled);  // every reader of this fetch gets the error; the next request starts afresh
  return stalled;
}

Result<size_t> InflightBlob::ReadSpool(uint64_t offset, char* buf, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(spool_fd_, buf + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return ErrnoToStatus(errno, "read spool file of " + digest_.ToString());
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

void InflightBlob::Cancel(const Status& why) {
  {
    MutexLock lock(mu_);
    if (published_ || !status_.ok()) return;
  }
  cancelled_ = true;  // the fetch thread stops at its next chunk
  Report(why);        // the cache forgets this fetch before any reader sees the error
  MutexLock lock(mu_);
  if (published_ || !status_.ok()) return;
  status_ = why;
  cv_.NotifyAll();
}

void InflightBlob::Report(const Status& status) {
  {
    MutexLock lock(mu_);
    if (reported_) return;
    reported_ = true;
  }
  if (status.ok()) {
    counters_.published++;
  } else {
    counters_.fetch_failures++;
  }
  if (on_done_) on_done_(*this, status);
}

void InflightBlob::Run() {
  Status st = RunFetch();
  if (writer_ != nullptr) writer_->Abort();  // nothing published unless Finish() succeeded
  {
    MutexLock lock(mu_);
    if (!status_.ok()) st = status_;  // cancelled meanwhile: report that
  }
  // Keep the spool file for a later fetch to resume only when this one ended retryably.
  // Readers keep reading through their descriptor after the unlink.
  bool resumable =
      !st.ok() && (IsRetryable(st) || st.code() == StatusCode::kCancelled) && fetched() > 0;
  if (!resumable) ::unlink(spool_path_.c_str());
  // The cache learns the outcome (forgets the fetch, indexes the blob) before the readers do,
  // so a client that retries after an error starts a new fetch, and one that asks again after
  // a complete read finds the blob published.
  Report(st);
  {
    MutexLock lock(mu_);
    if (status_.ok() && !published_) {
      if (st.ok()) {
        published_ = true;
      } else {
        status_ = st;
      }
    }
    cv_.NotifyAll();
  }
  thread_finished_ = true;
}

Status InflightBlob::Accept(std::string_view chunk) {
  if (cancelled_) return Status(StatusCode::kCancelled, "fetch cancelled");
  uint64_t at = fetched();  // only this thread moves fetched_
  if (at + chunk.size() > size_) {
    return Status(StatusCode::kDataLoss,
                  "upstream sent more than the expected " + std::to_string(size_) + " bytes");
  }
  size_t done = 0;
  while (done < chunk.size()) {
    ssize_t w = ::pwrite(spool_fd_, chunk.data() + done, chunk.size() - done,
                         static_cast<off_t>(at + done));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return ErrnoToStatus(errno, "write spool file in '" + options_.spool_dir + "'");
    done += static_cast<size_t>(w);
  }
  counters_.bytes_fetched += chunk.size();
  {
    // Readable from the spool now: the store's upload (an S3 part can take a while) holds no
    // reader back, and time spent in it is not an upstream stall.
    MutexLock lock(mu_);
    fetched_ += chunk.size();
    last_progress_ = std::chrono::steady_clock::now();
    store_busy_ = true;
    cv_.NotifyAll();
  }
  // The store (and the hasher in front of it) gets the bytes in kStoreBatch pieces: libcurl
  // hands out at most 16 KiB at a time, and a write (an S3 part buffer, a local write()) per
  // 16 KiB was most of the cold path's time (measured). Readers read the spool, so this delays
  // nobody.
  store_pending_.append(chunk);
  Status st;
  if (store_pending_.size() >= kStoreBatch) st = FlushToStore();
  MutexLock lock(mu_);
  store_busy_ = false;
  last_progress_ = std::chrono::steady_clock::now();
  return st;
}

Status InflightBlob::FlushToStore() {
  if (store_pending_.empty()) return Status::Ok();
  Status st = writer_->Append(store_pending_);
  store_pending_.clear();
  return st;
}

Status InflightBlob::RunFetch() {
  const std::string what = "Fetch '" + fetcher_->Describe() + "' (" + digest_.ToString() + ")";
  auto writer = store_.NewWriter(digest_, size_);
  if (!writer.ok()) return writer.status().WithContext(what);
  writer_ = std::move(writer).value();
  if (resume_from_ > 0) {
    // Re-hash and re-store what an earlier fetch left in the spool file; readers may read it
    // at once.
    std::string block(std::min<uint64_t>(resume_from_, 1u << 20), '\0');
    for (uint64_t at = 0; at < resume_from_;) {
      if (cancelled_) return Status(StatusCode::kCancelled, what + ": cancelled");
      size_t n = static_cast<size_t>(std::min<uint64_t>(block.size(), resume_from_ - at));
      FERRY_ASSIGN_OR_RETURN(size_t got, ReadSpool(at, block.data(), n));
      if (got != n) return Internal(what + ": spool file shorter than it was");
      Status st = writer_->Append(std::string_view(block.data(), n));
      if (!st.ok()) return st.WithContext(what);
      at += n;
      MutexLock lock(mu_);
      fetched_ = at;
      last_progress_ = std::chrono::steady_clock::now();
      cv_.NotifyAll();
    }
    counters_.resumed_bytes += resume_from_;
  }
  int failures = 0;
  while (fetched() < size_) {
    uint64_t start = fetched();
    Status sink_error;  // errors of our own (spool, store, oversize) are final
    counters_.fetch_calls++;
    Status st = fetcher_->Fetch({start, size_ - start}, [&](std::string_view chunk) {
      sink_error = Accept(chunk);
      return sink_error;
    });
    if (cancelled_) return Status(StatusCode::kCancelled, what + ": cancelled");
    if (!sink_error.ok()) return sink_error.WithContext(what);
    if (st.ok()) {
      if (fetched() < size_) {
        return Status(StatusCode::kDataLoss, what + ": upstream ended after " +
                                                 std::to_string(fetched()) + " of " +
                                                 std::to_string(size_) + " bytes");
      }
      break;
    }
    if (!IsRetryable(st)) return st.WithContext(what);
    if (fetched() > start) failures = 0;
    if (++failures >= options_.max_attempts) {
      return st.WithContext(what + " (gave up after " + std::to_string(failures) +
                            " attempts without progress)");
    }
    // Backoff: retry_delay doubled per failure without progress, at most 5 s, or what a
    // throttling upstream asked for (Retry-After); said in the log at once.
    auto delay = std::min<std::chrono::milliseconds>(options_.retry_delay * (1 << (failures - 1)),
                                                     std::chrono::seconds(5));
    if (st.detail().retry_after.count() > 0) {
      delay =
          std::min<std::chrono::milliseconds>(st.detail().retry_after, std::chrono::seconds(30));
    }
    Log(LogLevel::kWarn, "cache: {}: {}; retrying from byte {} in {} ms (attempt {} of {})", what,
        st.message(), fetched(), delay.count(), failures + 1, options_.max_attempts);
    MutexLock lock(mu_);
    cv_.WaitFor(lock, delay, [&]() REQUIRES(mu_) { return !status_.ok(); });
    if (!status_.ok()) return status_;
  }
  if (cancelled_) return Status(StatusCode::kCancelled, what + ": cancelled");
  if (Status flushed = FlushToStore(); !flushed.ok()) return flushed.WithContext(what);
  Status st = writer_->Finish();
  writer_.reset();
  if (!st.ok()) return st.WithContext(what);
  return Status::Ok();
}

}  // namespace ferry::proxy
