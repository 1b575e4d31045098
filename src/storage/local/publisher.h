#pragma once
// Files published in batches (WriteOptions::publish_later): the local store's answer to the
// cost of one fsync(2) per small file.
//
// A tree copy of 2,000 files of 64 KiB spent a quarter of its CPU making each file durable on
// its own before giving it its name (fsync: the data, the inode's metadata blocks, a disk cache
// flush, per file). A writer asked to publish later finishes its unnamed (O_TMPFILE) file, sets
// its metadata and hands it here still unnamed; when kBatch files wait, or at Flush(), one
// syncfs(2) makes the whole batch durable and each file is then linked to its name, as a single
// write would have done. The promise is unchanged: a name never appears before all of its
// file's bytes are on stable storage, and a process killed before then leaves nothing (unnamed
// files vanish with their descriptors); what is lost is only that the files of the unfinished
// batch must be copied again.
//
// syncfs is used where its writeback and flush are known to cover every file (ext4, xfs, btrfs);
// elsewhere each file of the batch is fsynced. syncfs also writes back what other processes
// left dirty on that filesystem: a syncfs slower than kSlowSyncfs sends the publisher back to
// fsync per file for good. Errors: syncfs reports a writeback error that happened after the
// file it is called on was opened (errseq, Linux >= 5.8); it is called on the batch's file that
// was opened first, so an error on any of them fails the batch: its files are dropped (never
// named) and Flush() returns each of them with the error.
//
// The names become durable at Flush(), which fsyncs each directory that got a file.
// Thread-safe.

#include <sys/stat.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "storage/store.h"

namespace ferry::storage::local_internal {

// A finished unnamed file waiting for its name.
struct PendingFile {
  int fd;
  uint64_t opened;  // OpenSequence() when it was opened
  std::string path, dir, key;
  WriteOptions options;
  struct stat st;  // after its last write
};

// A number that grows with every call: taken right after a file to be published is opened.
uint64_t OpenSequence();

class Publisher final {
 public:
  static constexpr size_t kBatch = 64;
  static constexpr std::chrono::milliseconds kSlowSyncfs{2000};
  // Each returns 0 or -1 with errno set, as the system calls do; tests count calls through
  // their own. `groupable(fd)`: whether syncfs on fd's filesystem covers every file.
  struct Ops {
    std::function<int(int fd)> fsync;
    std::function<int(int fd)> syncfs;
    std::function<bool(int fd)> groupable;
  };

  Publisher();
  explicit Publisher(Ops ops, std::chrono::milliseconds slow = kSlowSyncfs);
  ~Publisher();  // files still waiting are dropped: they vanish unnamed
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Takes `file` (and its descriptor); publishes a batch when kBatch files wait.
  void Add(PendingFile file) EXCLUDES(mu_);
  // Publishes every waiting file and makes the names durable (fsync of their directories).
  // Returns the files that failed since the last Flush() (never named) and directory fsync
  // failures (empty key).
  std::vector<Store::FlushFailure> Flush() EXCLUDES(mu_);

  size_t syncfs_calls() EXCLUDES(mu_);  // for tests
  size_t waiting() EXCLUDES(mu_);

 private:
  // Syncs and names `batch`, taken from waiting_ by a caller that counted it in publishing_.
  void Publish(std::vector<PendingFile> batch) EXCLUDES(mu_);
  void Record(const PendingFile* file, Status s) EXCLUDES(mu_);

  const Ops ops_;
  const std::chrono::milliseconds slow_;
  Mutex mu_;
  CondVar published_;  // a batch got its names
  std::vector<PendingFile> waiting_ GUARDED_BY(mu_);
  size_t publishing_ GUARDED_BY(mu_) = 0;                      // batches taken and not yet named
  std::set<std::string> unsynced_dirs_ GUARDED_BY(mu_);        // got a name since the last Flush
  std::vector<Store::FlushFailure> failures_ GUARDED_BY(mu_);  // since the last Flush
  bool per_file_ GUARDED_BY(mu_) = false;  // a syncfs was slow: fsync each file from now on
  size_t syncfs_calls_ GUARDED_BY(mu_) = 0;
};

}  // namespace ferry::storage::local_internal
