// Group commit of the local store's syncs (group_sync.h).

#include "storage/local/group_sync.h"

#include <linux/magic.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>

#include "base/errno_status.h"

namespace ferry::storage::local_internal {

namespace {

int RetryingFsync(int fd) {
  int rc;
  do rc = ::fsync(fd);
  while (rc != 0 && errno == EINTR);
  return rc;
}

int RetryingSyncfs(int fd) {
  int rc;
  do rc = ::syncfs(fd);
  while (rc != 0 && errno == EINTR);
  return rc;
}

// 0 or the errno of `call(fd)`.
int ErrOf(const std::function<int(int)>& call, int fd) { return call(fd) == 0 ? 0 : errno; }

}  // namespace

GroupSync::GroupSync() : GroupSync(Ops{RetryingFsync, RetryingSyncfs}) {}
GroupSync::GroupSync(Ops ops, std::chrono::milliseconds slow) : ops_(std::move(ops)), slow_(slow) {}

Status GroupSync::Sync(int fd, uint64_t opened, const std::string& what) {
  Waiter me{fd, opened};
  std::vector<Waiter*> batch;
  bool alone_by_choice = false;
  {
    MutexLock lock(mu_);
    if (per_file_) {
      alone_by_choice = true;
    } else {
      queue_.push_back(&me);
      cv_.Wait(lock, [&]() REQUIRES(mu_) { return me.done || !running_; });
      if (me.done) return me.err == 0 ? Status() : ErrnoToStatus(me.err, what);
      // Not done and nobody syncing: `me` is still queued, so the batch holds it.
      running_ = true;
      batch.swap(queue_);
    }
  }
  if (alone_by_choice) {
    int err = ErrOf(ops_.fsync, fd);
    return err == 0 ? Status() : ErrnoToStatus(err, what);
  }
  int err = 0;
  bool slow = false;
  if (batch.size() == 1) {
    err = ErrOf(ops_.fsync, fd);
  } else {
    // The file opened first: an error on any file of the batch came after its open.
    const Waiter* oldest = *std::min_element(
        batch.begin(), batch.end(), [](auto* a, auto* b) { return a->opened < b->opened; });
    auto start = std::chrono::steady_clock::now();
    err = ErrOf(ops_.syncfs, oldest->fd);
    slow = std::chrono::steady_clock::now() - start > slow_;
  }
  MutexLock lock(mu_);
  for (Waiter* w : batch) {
    w->err = err;
    w->done = true;
  }
  if (batch.size() > 1) {
    ++syncfs_calls_;
    grouped_files_ += batch.size();
  }
  if (slow) per_file_ = true;
  running_ = false;
  cv_.NotifyAll();
  return err == 0 ? Status() : ErrnoToStatus(err, what);
}

size_t GroupSync::syncfs_calls() {
  MutexLock lock(mu_);
  return syncfs_calls_;
}

size_t GroupSync::grouped_files() {
  MutexLock lock(mu_);
  return grouped_files_;
}

bool GroupSync::per_file() {
  MutexLock lock(mu_);
  return per_file_;
}

size_t GroupSync::waiting() {
  MutexLock lock(mu_);
  return queue_.size();
}

uint64_t OpenSequence() {
  static std::atomic<uint64_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

bool Ext4WithoutJournal(unsigned long dev) {
  // /sys/dev/block/MAJ:MIN links to the device's directory, named as ext4 names it in
  // /sys/fs/ext4/NAME, whose journal_task is the jbd2 thread's pid, or "<none>".
  std::string link =
      "/sys/dev/block/" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
  std::error_code ec;
  std::filesystem::path target = std::filesystem::read_symlink(link, ec);
  if (ec || target.filename().empty()) return false;
  std::ifstream task("/sys/fs/ext4/" + target.filename().string() + "/journal_task");
  std::string value;
  return task && std::getline(task, value) && value == "<none>";
}

GroupSync* GroupSyncFor(int fd, unsigned long dev) {
  static Mutex mu;
  static auto* groups = new std::map<unsigned long, GroupSync*>();  // never freed, like the process
  MutexLock lock(mu);
  auto it = groups->find(dev);
  if (it != groups->end()) return it->second;
  struct statfs fs;
  if (::fstatfs(fd, &fs) != 0) return nullptr;  // asked again next time
  GroupSync* group = nullptr;
  if (fs.f_type == EXT4_SUPER_MAGIC && Ext4WithoutJournal(dev)) group = new GroupSync();
  groups->emplace(dev, group);
  return group;
}

Status DurableSync(int fd, uint64_t opened, unsigned long dev, const std::string& what) {
  if (GroupSync* group = GroupSyncFor(fd, dev)) return group->Sync(fd, opened, what);
  return RetryingFsync(fd) == 0 ? Status() : ErrnoToStatus(errno, what);
}

}  // namespace ferry::storage::local_internal
