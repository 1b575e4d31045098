// Files published in batches (publisher.h).

#include "storage/local/publisher.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <utility>

#include "base/errno_status.h"
#include "storage/local/local_internal.h"

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

bool SyncfsCoversEveryFile(int fd) {
  struct statfs fs;
  if (::fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case EXT4_SUPER_MAGIC:  // also ext2 and ext3
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
      return true;
    default:
      return false;
  }
}

}  // namespace

uint64_t OpenSequence() {
  static std::atomic<uint64_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed);
}

Publisher::Publisher() : Publisher(Ops{RetryingFsync, RetryingSyncfs, SyncfsCoversEveryFile}) {}

Publisher::Publisher(Ops ops, std::chrono::milliseconds slow) : ops_(std::move(ops)), slow_(slow) {}

Publisher::~Publisher() {
  MutexLock lock(mu_);
  for (const PendingFile& f : waiting_) ::close(f.fd);
}

void Publisher::Add(PendingFile file) {
  std::vector<PendingFile> batch;
  {
    MutexLock lock(mu_);
    waiting_.push_back(std::move(file));
    if (waiting_.size() < kBatch) return;
    batch.swap(waiting_);
    ++publishing_;
  }
  Publish(std::move(batch));
}

void Publisher::Record(const PendingFile* file, Status s) {
  MutexLock lock(mu_);
  failures_.push_back({.key = file ? file->key : std::string(),
                       .size = file ? static_cast<uint64_t>(file->st.st_size) : 0,
                       .status = std::move(s)});
}

void Publisher::Publish(std::vector<PendingFile> batch) {
  bool per_file;
  {
    MutexLock lock(mu_);
    per_file = per_file_;
  }
  const bool one_fs = std::all_of(batch.begin(), batch.end(), [&](const PendingFile& f) {
    return f.st.st_dev == batch.front().st.st_dev;
  });
  bool grouped = !per_file && batch.size() > 1 && one_fs && ops_.groupable(batch.front().fd);
  if (grouped) {
    // The file opened first: a writeback error on any file of the batch came after its open.
    const PendingFile& oldest = *std::min_element(
        batch.begin(), batch.end(),
        [](const PendingFile& a, const PendingFile& b) { return a.opened < b.opened; });
    auto start = std::chrono::steady_clock::now();
    int err = ops_.syncfs(oldest.fd) == 0 ? 0 : errno;
    bool slow = std::chrono::steady_clock::now() - start > slow_;
    {
      MutexLock lock(mu_);
      ++syncfs_calls_;
      if (slow) per_file_ = true;
    }
    if (err != 0) {
      for (PendingFile& f : batch) {
        ::close(f.fd);
        f.fd = -1;
        Record(&f, ErrnoToStatus(err, "Write '" + f.path + "' (syncfs)"));
      }
    }
  } else {
    for (PendingFile& f : batch) {
      if (ops_.fsync(f.fd) == 0) continue;
      Record(&f, ErrnoToStatus(errno, "Write '" + f.path + "' (fsync)"));
      ::close(f.fd);
      f.fd = -1;
    }
  }
  std::set<std::string> named_in;
  for (PendingFile& f : batch) {
    if (f.fd < 0) continue;
    WriteOptions options = f.options;
    options.sync_directory = false;  // at Flush(), once per directory
    Result<ObjectInfo> named = NameTempFile(f.fd, "", f.path, f.dir, f.key, options, f.st);
    if (named.ok()) {
      named_in.insert(f.dir);
    } else {
      Record(&f, named.status());
    }
  }
  MutexLock lock(mu_);
  unsynced_dirs_.merge(named_in);
  --publishing_;
  published_.NotifyAll();
}

std::vector<Store::FlushFailure> Publisher::Flush() {
  std::vector<PendingFile> batch;
  {
    MutexLock lock(mu_);
    batch.swap(waiting_);
    ++publishing_;
  }
  Publish(std::move(batch));
  std::set<std::string> dirs;
  {
    MutexLock lock(mu_);
    // Batches other threads are publishing now: their names too before this returns.
    published_.Wait(lock, [&]() REQUIRES(mu_) { return publishing_ == 0; });
    dirs.swap(unsynced_dirs_);
  }
  for (const std::string& dir : dirs) {
    if (Status s = FsyncDir(dir); !s.ok()) Record(nullptr, std::move(s));
  }
  MutexLock lock(mu_);
  return std::exchange(failures_, {});
}

size_t Publisher::syncfs_calls() {
  MutexLock lock(mu_);
  return syncfs_calls_;
}

size_t Publisher::waiting() {
  MutexLock lock(mu_);
  return waiting_.size();
}

}  // namespace ferry::storage::local_internal
