#include "proxy/inflight_blob.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <random>
#include <utility>

#include "base/errno_status.h"
#include "base/log.h"

namespace ferry::proxy {

namespace {
// The verify thread's read-back: this many bytes per read and writer Append (an S3 part buffer,
// a local write), or what is left at the end.
constexpr size_t kVerifyBlock = 1u << 20;
// libcurl hands over at most 16 KiB at a time. A spool write and a wake-up of every reader per
// 16 KiB were most of the cold path (page-cache work per small write, futex wakes, context
// switches, 16 KiB sendfiles), so received bytes gather in a buffer and go to the spool, and to
// the readers, kSpoolBatch at a time (a large write also gets large page-cache folios), or after
// kSpoolDelay when upstream is slow: a trickle still goes on at once.
constexpr size_t kSpoolBatch = 1u << 20;
constexpr std::chrono::milliseconds kSpoolDelay{2};
// When the spool file becomes the blob (VerifyingWriter::links()), the disk is asked to start
// writing each this many bytes as they arrive, so the fsync at the publish waits for the last
// few only, not for the whole blob.
constexpr uint64_t kWritebackStep = 8u << 20;

struct SpoolFile {
  int fd = -1;
  std::string path;
  bool named = true;  // the digest's own name, which a later fetch resumes
};

// Opens the spool file at `path` for this fetch alone (flock, released when the descriptor is
// closed, also by kill -9). When another fetch holds it (a second cache or process fetching the
// same blob right now), the fetch gets a fresh file of its own instead, "<path>-<random>.partial",
// which nobody resumes: two fetches never share one file, since each may become its blob. A
// named file that is also a published blob (linked by a process killed before it removed the
// spool name) is never written again: its name is removed and a new file made.
Result<SpoolFile> OpenSpool(const std::string& path) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return ErrnoToStatus(errno, "create spool file '" + path + "'");
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
      ::close(fd);
      thread_local std::mt19937_64 rng{std::random_device{}()};
      char tail[32];
      std::snprintf(tail, sizeof tail, "-%016llx.partial", static_cast<unsigned long long>(rng()));
      std::string own = path.substr(0, path.size() - std::string_view(".partial").size()) + tail;
      fd = ::open(own.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd < 0) return ErrnoToStatus(errno, "create spool file '" + own + "'");
      ::flock(fd, LOCK_EX | LOCK_NB);
      return SpoolFile{fd, own, false};
    }
    // (A filesystem without flock, some NFS mounts, gets no lock: the named file as before.)
    struct stat st;
    if (::fstat(fd, &st) == 0 && st.st_nlink > 1) {
      ::close(fd);
      ::unlink(path.c_str());
      continue;
    }
    return SpoolFile{fd, path, true};
  }
  return Internal("spool file '" + path + "' keeps coming back as a published blob");
}
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
  FERRY_ASSIGN_OR_RETURN(SpoolFile spool, OpenSpool(path));
  int fd = spool.fd;
  path = spool.path;
  off_t length = ::lseek(fd, 0, SEEK_END);
  if (length < 0 || static_cast<uint64_t>(length) > size) {
    if (::ftruncate(fd, 0) != 0) {
      Status st = ErrnoToStatus(errno, "truncate spool file '" + path + "'");
      ::close(fd);
      return st;
    }
    length = 0;
  }
  // The blob's blocks reserved at once (size unchanged: it tells a resume where to go on): fewer
  // allocations per write, and a full disk shows now rather than halfway through.
  if (size > static_cast<uint64_t>(length)) {
    ::fallocate(fd, FALLOC_FL_KEEP_SIZE, length, static_cast<off_t>(size - length));
  }
  std::shared_ptr<InflightBlob> blob(new InflightBlob(
      std::move(digest), size, std::move(fetcher), store, std::move(options), counters,
      std::move(on_done), fd, path, spool.named, static_cast<uint64_t>(length)));
  blob->thread_ = std::thread([raw = blob.get()] { raw->Run(); });
  return blob;
}

InflightBlob::InflightBlob(Digest digest, uint64_t size, std::shared_ptr<Fetcher> fetcher,
                           BlobStore& store, FetchOptions options, CacheCounters& counters,
                           DoneCallback on_done, int spool_fd, std::string spool_path,
                           bool spool_named, uint64_t resume_from)
    : digest_(std::move(digest)),
      size_(size),
      fetcher_(std::move(fetcher)),
      store_(store),
      options_(std::move(options)),
      counters_(counters),
      on_done_(std::move(on_done)),
      spool_fd_(spool_fd),
      spool_path_(std::move(spool_path)),
      spool_named_(spool_named),
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
      // Once every byte arrived, what is left is the verify thread and the store's publish (the
      // store bounds its own requests): the upstream cannot stall any more.
      auto deadline = (fetched_ >= size_ ? now : last_progress_) + options_.stall_timeout;
      if (now >= deadline && fetched_ < size_) {
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
  {
    // From here on the fetch writes nothing more to the spool file and publishes nothing, and
    // the file is let go at once: a new fetch of the blob (a client's retry after a stall) may
    // resume it while this fetch's thread is still stuck in its upstream.
    MutexLock spool(flush_mu_);
    cancelled_ = true;  // the fetch thread stops at its next chunk
    ReleaseSpool(why);
  }
  Report(why);  // the cache forgets this fetch before any reader sees the error
  MutexLock lock(mu_);
  if (published_ || !status_.ok()) return;
  status_ = why;
  cv_.NotifyAll();
  verify_cv_.NotifyAll();
}

void InflightBlob::ReleaseSpool(const Status& outcome) {
  if (spool_released_) return;
  spool_released_ = true;
  // Keep the spool file for a later fetch to resume only when this one ended retryably.
  // Readers keep reading through their descriptor after the unlink.
  bool resumable = spool_named_ && !outcome.ok() &&
                   (IsRetryable(outcome) || outcome.code() == StatusCode::kCancelled) &&
                   fetched() > 0;
  if (!resumable) ::unlink(spool_path_.c_str());
  ::flock(spool_fd_, LOCK_UN);
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
  StopVerify();
  if (writer_ != nullptr) writer_->Abort();  // nothing published unless Finish() succeeded
  {
    MutexLock lock(mu_);
    if (!status_.ok()) st = status_;  // cancelled meanwhile: report that
  }
  {
    MutexLock spool(flush_mu_);
    ReleaseSpool(st);
  }
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
  MutexLock lock(flush_mu_);
  if (fetched() + pending_.size() + chunk.size() > size_) {
    return Status(StatusCode::kDataLoss,
                  "upstream sent more than the expected " + std::to_string(size_) + " bytes");
  }
  if (pending_.empty()) {
    have_pending_ = true;
    MutexLock wake(mu_);
    verify_cv_.NotifyAll();  // it flushes these if no more come for kSpoolDelay
  }
  pending_.append(chunk);
  if (pending_.size() >= kSpoolBatch ||
      std::chrono::steady_clock::now() - last_flush_ >= kSpoolDelay) {
    return Flush();
  }
  return Status::Ok();
}

Status InflightBlob::Flush() {
  last_flush_ = std::chrono::steady_clock::now();
  if (cancelled_) return Status(StatusCode::kCancelled, "fetch cancelled");
  if (pending_.empty()) return Status::Ok();
  const uint64_t at = fetched();
  size_t done = 0;
  while (done < pending_.size()) {
    ssize_t w = ::pwrite(spool_fd_, pending_.data() + done, pending_.size() - done,
                         static_cast<off_t>(at + done));
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return ErrnoToStatus(errno, "write spool file in '" + options_.spool_dir + "'");
    done += static_cast<size_t>(w);
  }
  counters_.bytes_fetched += pending_.size();
  const uint64_t end = at + pending_.size();
  pending_.clear();
  have_pending_ = false;
  if (writer_links_ && end - written_back_ >= kWritebackStep) {
    // Asynchronous: queues the range for writeback and returns (errors show at the fsync).
    ::sync_file_range(spool_fd_, static_cast<off_t>(written_back_),
                      static_cast<off_t>(end - written_back_), SYNC_FILE_RANGE_WRITE);
    written_back_ = end;
  }
  MutexLock lock(mu_);
  fetched_ = end;
  last_progress_ = last_flush_;
  cv_.NotifyAll();
  if (end - verified_ >= kVerifyBlock || end == size_) verify_cv_.NotifyAll();
  return Status::Ok();
}

Status InflightBlob::Verify() {
  std::string block(kVerifyBlock, '\0');
  uint64_t at = 0;  // == verified_, which only this thread moves
  while (at < size_) {
    uint64_t until = 0;
    while (until == 0) {
      {
        MutexLock lock(mu_);
        auto ready = [&]() REQUIRES(mu_) {
          return stop_verify_ || !status_.ok() || fetched_ - at >= kVerifyBlock ||
                 fetched_ == size_;
        };
        // No bytes held back: sleep until a batch or some pending bytes come (Accept wakes us
        // for the first byte of each batch); with some, look again after kSpoolDelay.
        verify_cv_.Wait(lock, [&]() REQUIRES(mu_) { return ready() || have_pending_; });
        if (!ready()) verify_cv_.WaitFor(lock, kSpoolDelay, ready);
        if (stop_verify_ || !status_.ok()) {
          return Status(StatusCode::kCancelled, "verification stopped");
        }
        if (ready()) {
          until = fetched_;
          break;
        }
      }
      if (!have_pending_) continue;
      // Bytes wait in pending_ and none came for kSpoolDelay: the upstream paused in mid-batch
      // (or stalls). They go to the spool, and to the readers, now.
      MutexLock flush(flush_mu_);
      if (std::chrono::steady_clock::now() - last_flush_ >= kSpoolDelay) {
        FERRY_RETURN_IF_ERROR(Flush());
      }
    }
    while (at < until) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(block.size(), until - at));
      FERRY_ASSIGN_OR_RETURN(size_t got, ReadSpool(at, block.data(), n));
      if (got != n) return Internal("spool file shorter than the bytes written to it");
      FERRY_RETURN_IF_ERROR(writer_->Append(std::string_view(block.data(), n)));
      at += n;
      MutexLock lock(mu_);
      verified_ = at;
      if (stop_verify_ || !status_.ok()) {
        return Status(StatusCode::kCancelled, "verification stopped");
      }
    }
  }
  return Status::Ok();
}

void InflightBlob::StopVerify() {
  {
    MutexLock lock(mu_);
    stop_verify_ = true;
    verify_cv_.NotifyAll();
  }
  if (verifier_.joinable()) verifier_.join();
}

Status InflightBlob::RunFetch() {
  const std::string what = "Fetch '" + fetcher_->Describe() + "' (" + digest_.ToString() + ")";
  auto writer = store_.NewWriter(digest_, size_, spool_path_);
  if (!writer.ok()) return writer.status().WithContext(what);
  writer_ = std::move(writer).value();
  writer_links_ = writer_->links();
  if (resume_from_ > 0) {
    // What an earlier fetch left in the spool file: readable at once, verified like the rest.
    MutexLock lock(mu_);
    fetched_ = resume_from_;
    last_progress_ = std::chrono::steady_clock::now();
    cv_.NotifyAll();
    counters_.resumed_bytes += resume_from_;
  }
  verifier_ = std::thread([this] {
    Status st = Verify();
    bool stopped;  // the fetch ended or failed first: its outcome is the one reported
    {
      MutexLock lock(mu_);
      stopped = stop_verify_ || !status_.ok();
    }
    // A store or spool error fails the fetch for every reader.
    if (!st.ok() && !stopped) Cancel(st.WithContext("Store '" + store_.UrlFor(digest_) + "'"));
    MutexLock lock(mu_);
    verify_status_ = st;
    verify_done_ = true;
    cv_.NotifyAll();
  });
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
    // What arrived before the end or the error is good: in the spool before a retry goes on
    // after it.
    if (sink_error.ok()) {
      MutexLock flush(flush_mu_);
      sink_error = Flush();
    }
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
  {
    // Every byte is in the spool: the verify thread passes the rest to the writer.
    MutexLock lock(mu_);
    cv_.Wait(lock, [&]() REQUIRES(mu_) { return verify_done_ || !status_.ok(); });
    if (!status_.ok()) return status_;
    if (!verify_status_.ok()) return verify_status_.WithContext(what);
  }
  verifier_.join();
  Status st;
  {
    MutexLock spool(flush_mu_);  // not while Cancel() lets the spool file go
    if (cancelled_) return Status(StatusCode::kCancelled, what + ": cancelled");
    st = writer_->Finish();
  }
  writer_.reset();
  if (!st.ok()) return st.WithContext(what);
  return Status::Ok();
}

}  // namespace ferry::proxy
