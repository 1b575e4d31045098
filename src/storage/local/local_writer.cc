// Atomic file writer for the local store (protocol in local_store.h).

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

#include "base/aligned_buffer.h"
#include "base/crc32c.h"
#include "base/errno_status.h"
#include "base/strings.h"
#include "storage/local/direct_io.h"
#include "storage/local/local_internal.h"
#include "storage/local/local_store.h"
#include "storage/local/publisher.h"

namespace ferry::storage {

bool IsLocalTempName(std::string_view name) {
  if (!StartsWith(name, kLocalTempPrefix)) return false;
  // ".ferry-tmp." NAME "." 16 hex "-" 8 hex
  constexpr size_t kTail = 16 + 1 + 8;
  std::string_view rest = name.substr(kLocalTempPrefix.size());
  if (rest.size() < kTail + 2 || rest[rest.size() - kTail - 1] != '.' ||
      rest[rest.size() - 9] != '-') {
    return false;
  }
  std::string_view marked = rest.substr(0, rest.size() - 9);
  uint32_t want = 0;
  return ParseCrc32cHex(rest.substr(rest.size() - 8), &want) && Crc32cOf(marked) == want;
}

}  // namespace ferry::storage

namespace ferry::storage::local_internal {

namespace {

std::string RandomSuffix() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

Status MakeParents(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return ErrnoToStatus(ec.value(), "create directory '" + dir + "'");
  return Status();
}

}  // namespace

Status FsyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, "open directory '" + dir + "'");
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  // Some filesystems (and NFS clients) refuse fsync on directories; the rename is still done.
  if (rc != 0 && err != EINVAL && err != EBADF) return ErrnoToStatus(err, "fsync '" + dir + "'");
  return Status();
}

namespace {
// Temp names stay under NAME_MAX (255) even for long target names.
constexpr size_t kTempBaseMax = 200;
}  // namespace

std::string TempPathFor(const std::string& dir, const std::string& name) {
  std::string marked = name.substr(0, kTempBaseMax) + "." + RandomSuffix();
  return dir + "/" + std::string(kLocalTempPrefix) + marked + "-" + Crc32cHex(Crc32cOf(marked));
}

bool IsTempNameFor(std::string_view entry, std::string_view name) {
  // ".ferry-tmp." BASE "." 16 hex "-" 8 hex, BASE being NAME cut as TempPathFor cuts it.
  std::string_view base = name.substr(0, kTempBaseMax);
  return entry.size() == kLocalTempPrefix.size() + base.size() + 1 + 16 + 1 + 8 &&
         entry.substr(kLocalTempPrefix.size(), base.size()) == base && IsLocalTempName(entry);
}

namespace {

// Gives the unnamed (O_TMPFILE) file `fd` the name `path`; returns 0 or the errno (EEXIST if
// the name exists). linkat(fd, "", AT_EMPTY_PATH) links the descriptor itself (root, or since
// Linux 6.10 the file's opener); elsewhere the /proc/self/fd/N path does, at the price of
// resolving it (half of a link's kernel time). The first refusal settles it for the process.
int LinkUnnamed(int fd, const std::string& path) {
  static std::atomic<bool> empty_path_refused{false};
  if (!empty_path_refused.load(std::memory_order_relaxed)) {
    if (::linkat(fd, "", AT_FDCWD, path.c_str(), AT_EMPTY_PATH) == 0) return 0;
    if (errno != ENOENT && errno != EPERM && errno != EINVAL) return errno;
    // ENOENT is also "no such directory" for `path`: the /proc form below says the same then.
    empty_path_refused.store(true, std::memory_order_relaxed);
  }
  std::string proc = "/proc/self/fd/" + std::to_string(fd);
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
  return errno;
}

}  // namespace

Result<struct stat> StampTempFile(int fd, const std::string& path, const WriteOptions& options) {
  for (const auto& [name, value] : options.metadata) {
    std::string attr = "user." + name;
    // Best effort: filesystems without user xattrs (some NFS servers) keep no metadata.
    ::fsetxattr(fd, attr.c_str(), value.data(), value.size(), 0);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) return ErrnoToStatus(errno, "Write '" + path + "' (stat)");
  return st;
}

Result<ObjectInfo> PublishTempFile(int fd, const std::string& tmp, const std::string& path,
                                   const std::string& dir, const std::string& key,
                                   const WriteOptions& options) {
  auto fail = [&](Status s) {
    ::close(fd);
    if (!tmp.empty()) ::unlink(tmp.c_str());
    return s;
  };
  Result<struct stat> st = StampTempFile(fd, path, options);
  if (!st.ok()) return fail(st.status());
  if (::fsync(fd) != 0) return fail(ErrnoToStatus(errno, "Write '" + path + "' (fsync)"));
  return NameTempFile(fd, tmp, path, dir, key, options, *st);
}

Result<ObjectInfo> NameTempFile(int fd, const std::string& tmp, const std::string& path,
                                const std::string& dir, const std::string& key,
                                const WriteOptions& options, const struct stat& st) {
  std::string named = tmp;  // the temporary name to remove on failure ("" while unnamed)
  auto fail = [&](Status s) {
    if (fd >= 0) ::close(fd);
    if (!named.empty()) ::unlink(named.c_str());
    return s;
  };
  auto sync_dir = [&]() { return options.sync_directory ? FsyncDir(dir) : Status(); };
  if (tmp.empty()) {
    // An unnamed file, written and synced: link it straight to the target, which appears
    // complete in one step. An existing target stops a create-only write; any other write
    // replaces it through a temporary name and rename (link cannot replace). A fresh copy thus
    // costs one link instead of a link and a rename.
    int err = LinkUnnamed(fd, path);
    if (err == EEXIST && options.if_none_match) {
      return fail(Status(StatusCode::kAlreadyExists, "Write '" + path + "': file exists"));
    }
    if (err != 0 && err != EEXIST) return fail(ErrnoToStatus(err, "Write '" + path + "' (link)"));
    if (err == 0) {
      ::close(fd);  // fsynced above: the data is on disk whatever close says
      FERRY_RETURN_IF_ERROR(sync_dir());
      ObjectInfo info = InfoFromStat(key, st);
      info.metadata = options.metadata;
      return info;
    }
    std::string target = TempPathFor(dir, path.substr(path.rfind('/') + 1));
    err = LinkUnnamed(fd, target);
    if (err != 0) return fail(ErrnoToStatus(err, "Write '" + path + "' (link)"));
    named = target;
  }
  int rc = ::close(fd);
  fd = -1;
  if (rc != 0) return fail(ErrnoToStatus(errno, "Write '" + path + "' (close)"));
  if (options.if_none_match) {
    // link() fails if the target exists, atomically: a create-only write.
    if (::link(named.c_str(), path.c_str()) != 0) {
      int err = errno;
      return fail(err == EEXIST
                      ? Status(StatusCode::kAlreadyExists, "Write '" + path + "': file exists")
                      : ErrnoToStatus(err, "Write '" + path + "' (link)"));
    }
    ::unlink(named.c_str());
  } else if (::rename(named.c_str(), path.c_str()) != 0) {
    return fail(ErrnoToStatus(errno, "Write '" + path + "' (rename)"));
  }
  FERRY_RETURN_IF_ERROR(sync_dir());
  ObjectInfo info = InfoFromStat(key, st);
  info.metadata = options.metadata;
  return info;
}

Result<ObjectInfo> LinkLocalFile(const std::string& file, const std::string& key,
                                 const std::string& path, const WriteOptions& options) {
  const std::string what = "Publish '" + file + "' as '" + path + "'";
  const std::string dir = path.substr(0, path.rfind('/'));
  FERRY_RETURN_IF_ERROR(MakeParents(dir));
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, what);
  std::string tmp = TempPathFor(dir, path.substr(path.rfind('/') + 1));
  if (::link(file.c_str(), tmp.c_str()) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EXDEV) return Unimplemented(what + ": not on the same filesystem and mount");
    return ErrnoToStatus(err, what + " (link)");
  }
  return PublishTempFile(fd, tmp, path, dir, key, options);
}

namespace {

// Direct I/O of a long stream (local_store.h): the first kDirectAfter bytes go through the page
// cache as for any file; from there on, bytes gather in an aligned kStageSize buffer and each
// full one is written with O_DIRECT (set on the descriptor with F_SETFL) at the end of the file,
// which is then always 4 KiB-aligned; the filesystem is asked once, when a stream gets there.
// Commit() writes the aligned part of what is left directly and the last partial block through the
// page cache. Small files never reach the switch.
constexpr uint64_t kDirectAfter = 8u << 20;
constexpr size_t kStageSize = 1u << 20;

class LocalWriter final : public Writer {
 public:
  LocalWriter(std::string key, std::string path, std::string dir, std::string tmp, int fd,
              bool direct, WriteOptions options, Publisher* publisher)
      : key_(std::move(key)),
        path_(std::move(path)),
        dir_(std::move(dir)),
        tmp_(std::move(tmp)),
        fd_(fd),
        direct_(direct),
        options_(std::move(options)),
        publisher_(publisher) {}
  ~LocalWriter() override { Abort(); }

  Status Append(std::string_view data) override {
    if (fd_ < 0) return Status(StatusCode::kFailedPrecondition, "writer already finished");
    if (!direct_ || written_ < kDirectAfter) {
      size_t take =
          direct_ ? static_cast<size_t>(std::min<uint64_t>(data.size(), kDirectAfter - written_))
                  : data.size();
      FERRY_RETURN_IF_ERROR(WriteOrAbort(data.substr(0, take)));
      data.remove_prefix(take);
    }
    if (!data.empty() && !stage_) {  // the stream just got long: direct I/O if it can be
      if (DirectIoFilesystem(fd_)) stage_ = NewAlignedBuffer(kStageSize, kDirectAlign);
      if (!stage_) {  // another filesystem, or no memory for the stage: the page cache
        direct_ = false;
        return WriteOrAbort(data);
      }
    }
    while (!data.empty()) {  // direct_ and past kDirectAfter
      size_t take = std::min(data.size(), kStageSize - staged_);
      std::memcpy(stage_.get() + staged_, data.data(), take);
      staged_ += take;
      data.remove_prefix(take);
      if (staged_ == kStageSize) FERRY_RETURN_IF_ERROR(FlushStage());
    }
    return Status();
  }

  Result<ObjectInfo> Commit() override {
    if (fd_ < 0) return Status(StatusCode::kFailedPrecondition, "writer already finished");
    if (staged_ > 0) FERRY_RETURN_IF_ERROR(FlushStage());
    int fd = fd_;
    fd_ = -1;
    if (options_.publish_later && tmp_.empty() && publisher_) {
      Result<struct stat> st = StampTempFile(fd, path_, options_);
      if (!st.ok()) {
        ::close(fd);
        return st.status();
      }
      ObjectInfo info = InfoFromStat(key_, *st);
      info.metadata = options_.metadata;
      publisher_->Add({.fd = fd,
                       .opened = opened_,
                       .path = path_,
                       .dir = dir_,
                       .key = key_,
                       .options = options_,
                       .st = *st});
      return info;
    }
    return PublishTempFile(fd, tmp_, path_, dir_, key_, options_);
  }

  void Abort() override {
    if (fd_ < 0) return;
    ::close(fd_);  // an unnamed file vanishes with its last descriptor
    fd_ = -1;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
  }

 private:
  // Writes all of `data` at written_ (the end of the file); on failure the write is abandoned.
  Status WriteOrAbort(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::pwrite(fd_, data.data(), data.size(), static_cast<off_t>(written_));
      if (n < 0) {
        if (errno == EINTR) continue;
        Status s = ErrnoToStatus(errno, "Write '" + path_ + "'");
        Abort();
        return s;
      }
      data.remove_prefix(static_cast<size_t>(n));
      written_ += static_cast<uint64_t>(n);
    }
    return Status();
  }

  // Writes the staged bytes: their aligned front with O_DIRECT, a partial last block (only at
  // Commit) or everything after a refusal through the page cache.
  Status FlushStage() {
    std::string_view rest(stage_.get(), staged_);
    staged_ = 0;
    size_t aligned = rest.size() & ~(kDirectAlign - 1);
    if (direct_ && aligned > 0 && SetDirect(true)) {
      auto w = PwriteDirect(fd_, rest.substr(0, aligned), written_, path_);
      if (!w.ok()) {
        Abort();
        return w.status();
      }
      if (w->refused) direct_ = false;  // other alignment rules: the page cache from now on
      rest.remove_prefix(w->written);
      written_ += w->written;
    }
    if (rest.empty()) return Status();
    SetDirect(false);
    return WriteOrAbort(rest);
  }

  // Turns O_DIRECT on or off for the descriptor; false (and direct I/O off for good) when the
  // filesystem refuses it.
  bool SetDirect(bool on) {
    if (on == direct_set_) return true;
    int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0 || ::fcntl(fd_, F_SETFL, on ? flags | O_DIRECT : flags & ~O_DIRECT) != 0) {
      if (on) direct_ = false;
      return false;
    }
    direct_set_ = on;
    return true;
  }

  std::string key_, path_, dir_, tmp_;  // tmp_ is "" for an unnamed (O_TMPFILE) file
  int fd_;
  bool direct_;  // direct I/O past kDirectAfter (LocalStoreOptions::direct_io; off once refused)
  bool direct_set_ = false;  // O_DIRECT is on for fd_ now
  uint64_t written_ = 0;     // bytes in the file (its offset)
  AlignedBuffer stage_;      // direct_: bytes not written yet
  size_t staged_ = 0;
  WriteOptions options_;
  Publisher* publisher_;
  uint64_t opened_ = OpenSequence();  // just after fd_ was opened (publisher.h)
};

}  // namespace

Result<std::unique_ptr<Writer>> NewLocalWriter(const std::string& key, const std::string& path,
                                               const WriteOptions& options, bool direct_io,
                                               Publisher* publisher) {
  size_t slash = path.rfind('/');
  std::string dir = path.substr(0, slash == 0 ? 1 : slash);
  std::string name = path.substr(slash + 1);
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return InvalidArgument("Write '" + path + "': is a directory");
  }
  // An unnamed file first: nothing is left behind if this process dies before Commit(). The
  // directory is created when the open says it is missing (one syscall less per file of a tree
  // copy, whose directories exist after their first file).
  std::string tmp;
  int fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
    FERRY_RETURN_IF_ERROR(MakeParents(dir).WithContext("Write '" + path + "'"));
    fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
  }
  if (fd < 0) {
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT) {
      return ErrnoToStatus(errno, "Write '" + path + "' (create temporary file)");
    }
    FERRY_RETURN_IF_ERROR(MakeParents(dir).WithContext("Write '" + path + "'"));
    tmp = TempPathFor(dir, name);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoToStatus(errno, "Write '" + path + "' (create temporary file)");
  }
  return std::unique_ptr<Writer>(
      new LocalWriter(key, path, dir, tmp, fd, direct_io, options, publisher));
}

}  // namespace ferry::storage::local_internal
