#pragma once
// Group commit for the local store's fsync before a file gets its name (local_store.h), on
// filesystems without a journal.
//
// On ext4 without a journal (ext2-style; this project's test machine has one) fsync(2) of a new
// file writes the inode's metadata blocks (bitmaps, inode table) synchronously and flushes the
// disk cache, per file: 16% of a 2,000-file download's CPU. GroupSync lets writers that finish
// while another one's sync is running share the next sync: one syncfs(2) makes all their files
// durable at once (the database "group commit"). A writer alone uses fsync(2) on its own file.
// Journaled filesystems (ext4 with its journal, xfs, btrfs) already commit concurrent fsyncs
// together; grouping there measured 5% more CPU, so they keep one fsync per file, as do NFS,
// FUSE, overlayfs and the rest (GroupSyncFor).
//
// The promise is unchanged: Sync() returns OK only once the file's data and metadata are on
// stable storage, and an error means they may not be. syncfs also writes back what other
// processes left dirty on the same filesystem; if one syncfs takes longer than
// kSlowSyncfs (someone else is writing a lot there), the group goes back to one fsync per
// file for good, so a busy neighbour cannot hold every file of a copy hostage.
//
// Errors: syncfs reports a writeback error of the filesystem that happened after the file it
// is called on was opened (errseq, Linux >= 5.8). The leader calls it on the batch's file that
// was opened first (OpenSequence), so an error on any file of the batch reaches every writer of
// it; a failed syncfs fails the whole batch.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"

namespace ferry::storage::local_internal {

class GroupSync final {
 public:
  // What a sync is made of; tests count calls through their own.
  // Each returns 0 or -1 with errno set, as the system calls do.
  struct Ops {
    std::function<int(int fd)> fsync;
    std::function<int(int fd)> syncfs;
  };
  static constexpr std::chrono::milliseconds kSlowSyncfs{2000};

  GroupSync();
  explicit GroupSync(Ops ops, std::chrono::milliseconds slow = kSlowSyncfs);
  GroupSync(const GroupSync&) = delete;
  GroupSync& operator=(const GroupSync&) = delete;

  // Makes the file open as `fd` (written, on this group's filesystem) durable; `opened` is its
  // OpenSequence(). On failure the status names `what` ("Write '/x' (fsync)").
  Status Sync(int fd, uint64_t opened, const std::string& what) EXCLUDES(mu_);
  // How many syncfs calls made files durable, and how many files they covered (for tests).
  size_t syncfs_calls() EXCLUDES(mu_);
  size_t grouped_files() EXCLUDES(mu_);
  bool per_file() EXCLUDES(mu_);
  size_t waiting() EXCLUDES(mu_);  // writers queued for the next sync

 private:
  struct Waiter {
    int fd;
    uint64_t opened;
    int err = 0;
    bool done = false;
  };

  const Ops ops_;
  const std::chrono::milliseconds slow_;
  Mutex mu_;
  CondVar cv_;
  std::vector<Waiter*> queue_ GUARDED_BY(mu_);  // waiting for the next sync
  bool running_ GUARDED_BY(mu_) = false;        // a leader is syncing a batch
  bool per_file_ GUARDED_BY(mu_) = false;       // a syncfs was slow: fsync per file from now on
  size_t syncfs_calls_ GUARDED_BY(mu_) = 0;
  size_t grouped_files_ GUARDED_BY(mu_) = 0;
};

// A number that grows with every call: taken right after a file to be synced is opened.
uint64_t OpenSequence();

// The process's group for the filesystem holding `fd` (device `dev`), or nullptr where syncs
// are not grouped: anything but ext4 without a journal (/sys/fs/ext4/DEV/journal_task reads
// "<none>"). Groups live as long as the process.
GroupSync* GroupSyncFor(int fd, unsigned long dev);

// fsync(2) of `fd` (opened at `opened`) through its filesystem's group, or alone where there
// is none.
Status DurableSync(int fd, uint64_t opened, unsigned long dev, const std::string& what);

}  // namespace ferry::storage::local_internal
