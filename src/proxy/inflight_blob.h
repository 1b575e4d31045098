#pragma once
// InflightBlob: one upstream fetch of one blob, shared by every reader that wants it while it
// runs (read-while-write single flight; BlobCache keeps one per digest).
//
// Two threads of its own, a pipeline:
//  - the fetch thread calls Fetcher::Fetch and writes each chunk, in order, to a spool file
//    (<spool_dir>/<spool_prefix><algorithm>-<hex>.partial, a local file) that readers pread() or
//    sendfile() from as soon as the bytes are there: memory stays bounded however large the blob
//    and however many readers, and it works the same when the cache store is S3;
//  - the verify thread reads the spool back behind it, 1 MiB at a time, into a VerifyingWriter
//    (the hasher and the store's writer), which publishes the blob under its content address
//    only once the size and digest match. The digest is of the bytes in the spool file, which
//    readers got. When the cache store is a local directory on the spool's filesystem (the
//    default: <data>/cache/spool) the writer only hashes, and the verified spool file itself
//    becomes the blob by a hard link (BlobStore::NewWriter's spool_file): each byte is written
//    once. Neither the hash nor a slow store (an S3 upload) holds up the upstream or the readers.
// Retryable upstream errors resume from the first byte not yet received; the hash state is
// kept across attempts, so nothing is hashed twice. The spool file outlives a fetch that ended
// retryably (upstream down, stall, the cache closing, kill -9): the next fetch of the blob, in
// this process or after a restart, verifies that prefix from the spool like any other bytes and
// asks upstream only for the rest. The final digest check covers the prefix too, and a fetch that
// ends in kDataLoss removes the spool file, so a bad prefix costs one failed fetch at most. A
// truncated, oversized or corrupt upstream, a final error, a stall (no upstream byte for
// stall_timeout while someone waits for one), a store error or Cancel() fail the fetch: every
// reader gets the error, nothing is published, and BlobCache forgets the fetch so the next request
// starts a new one. The last byte of the blob is withheld from readers until the blob is verified
// and published: a client that received the whole length has received verified bytes (a failure
// after that point reaches it as an error before the final byte, never as a complete response).
// Thread-safety: all public methods are thread-safe.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "proxy/blob_store.h"
#include "proxy/cache_metrics.h"
#include "proxy/digest.h"
#include "proxy/fetcher.h"

namespace ferry::proxy {

struct FetchOptions {
  std::string spool_dir;  // local directory for spool files
  // Starts spool file names. BlobCache sets "ferry-<instance>-" when it is empty, so
  // processes sharing a spool directory (with different instance names) keep apart.
  std::string spool_prefix;
  // A fetch whose upstream delivers no byte for this long while a reader waits fails with
  // kDeadlineExceeded (time spent in the store's writer does not count).
  std::chrono::milliseconds stall_timeout{30000};
  // Consecutive retryable failures without progress before the fetch gives up.
  int max_attempts = 5;
  std::chrono::milliseconds retry_delay{200};
};

class InflightBlob final {
 public:
  // Called once, from the fetch thread or from Cancel(), when the fetch has ended: OK when the
  // blob was published.
  using DoneCallback = std::function<void(InflightBlob&, const Status&)>;

  // Creates the spool file and starts the fetch thread. `store`, `counters` and whatever
  // `on_done` uses must outlive the InflightBlob; its owner calls Join() before destroying it.
  static Result<std::shared_ptr<InflightBlob>> Start(Digest digest, uint64_t size,
                                                     std::shared_ptr<Fetcher> fetcher,
                                                     BlobStore& store, FetchOptions options,
                                                     CacheCounters& counters, DoneCallback on_done);
  ~InflightBlob();
  InflightBlob(const InflightBlob&) = delete;
  InflightBlob& operator=(const InflightBlob&) = delete;

  const Digest& digest() const { return digest_; }
  uint64_t size() const { return size_; }
  const Fetcher& fetcher() const { return *fetcher_; }

  // Blocks until bytes after `offset` can be read, the blob is published, or the fetch fails
  // (its error; a stall detected here fails the fetch with kDeadlineExceeded). Returns the end
  // of the readable bytes: > offset, or == offset when the blob is published and nothing is
  // left. When `cancel` becomes true the wait ends within kCancelPoll with kCancelled (the
  // fetch goes on for the other readers).
  Result<uint64_t> WaitReadable(uint64_t offset, const std::atomic<bool>* cancel = nullptr)
      EXCLUDES(mu_);
  // How often a waiting reader looks at its cancel flag.
  static constexpr std::chrono::milliseconds kCancelPoll{50};
  // Bytes received so far (readable or not).
  uint64_t fetched() const EXCLUDES(mu_);
  // Copies readable bytes from the spool file.
  Result<size_t> ReadSpool(uint64_t offset, char* buf, size_t n);
  // The spool file, open while the InflightBlob lives: readers may sendfile() readable bytes.
  int spool_fd() const { return spool_fd_; }
  // Fails the fetch with `why` (nothing is published) unless it already ended.
  void Cancel(const Status& why) EXCLUDES(mu_);
  // Whether the fetch thread has returned (Join() will not block).
  bool finished() const { return thread_finished_.load(); }
  void Join();

 private:
  InflightBlob(Digest digest, uint64_t size, std::shared_ptr<Fetcher> fetcher, BlobStore& store,
               FetchOptions options, CacheCounters& counters, DoneCallback on_done, int spool_fd,
               std::string spool_path, bool spool_named, uint64_t resume_from);
  void Run();
  Status RunFetch();
  Status Accept(std::string_view chunk) EXCLUDES(mu_, flush_mu_);
  // Writes pending_ to the spool file and makes it readable: the fetch thread, and the verify
  // thread for bytes that waited kSpoolDelay (an upstream that stops mid-batch).
  Status Flush() REQUIRES(flush_mu_) EXCLUDES(mu_);
  // The verify thread: spool -> writer_ until all size_ bytes passed or StopVerify().
  Status Verify() EXCLUDES(mu_);
  void StopVerify() EXCLUDES(mu_);
  // Lets the spool file go once the fetch has ended (`outcome`) or been cancelled: removes its
  // name unless a later fetch may resume it, and unlocks it.
  void ReleaseSpool(const Status& outcome) REQUIRES(flush_mu_) EXCLUDES(mu_);
  void Report(const Status& status) EXCLUDES(mu_);
  uint64_t ReadableLocked() const REQUIRES(mu_);

  const Digest digest_;
  const uint64_t size_;
  const std::shared_ptr<Fetcher> fetcher_;
  BlobStore& store_;
  const FetchOptions options_;
  CacheCounters& counters_;
  const DoneCallback on_done_;
  const int spool_fd_;
  const std::string spool_path_;
  const bool spool_named_;      // the digest's own spool name (resumable), not a fetch's own file
  const uint64_t resume_from_;  // bytes an earlier fetch left in the spool file
  // The verify thread's while it runs; the fetch thread's before and after (Finish, Abort).
  std::unique_ptr<VerifyingWriter> writer_;
  bool writer_links_ = false;  // writer_->links(), set before the verify thread starts
  // Received bytes on their way to the spool file (lock order: flush_mu_, then mu_).
  Mutex flush_mu_;
  std::string pending_ GUARDED_BY(flush_mu_);
  std::chrono::steady_clock::time_point last_flush_ GUARDED_BY(flush_mu_);
  uint64_t written_back_ GUARDED_BY(flush_mu_) = 0;  // spool bytes handed to writeback
  std::atomic<bool> have_pending_{false};
  bool spool_released_ GUARDED_BY(flush_mu_) = false;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> thread_finished_{false};
  std::thread thread_;
  std::thread verifier_;  // started and joined by the fetch thread

  mutable Mutex mu_;
  CondVar cv_;
  uint64_t fetched_ GUARDED_BY(mu_) = 0;
  bool published_ GUARDED_BY(mu_) = false;
  Status status_ GUARDED_BY(mu_);  // the failure, once failed
  bool reported_ GUARDED_BY(mu_) = false;
  std::chrono::steady_clock::time_point last_progress_ GUARDED_BY(mu_);
  CondVar verify_cv_;                      // the verify thread waits on it
  uint64_t verified_ GUARDED_BY(mu_) = 0;  // spool bytes passed to writer_
  bool stop_verify_ GUARDED_BY(mu_) = false;
  bool verify_done_ GUARDED_BY(mu_) = false;
  Status verify_status_ GUARDED_BY(mu_);
};

}  // namespace ferry::proxy
