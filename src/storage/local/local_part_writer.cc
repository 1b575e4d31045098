// Parallel, resumable writes into a local file: parts are pwrite()n into a temporary file in the
// destination directory (".ferry-tmp.NAME.R-C", hidden from listings). Commit() fsyncs, renames
// over the destination and fsyncs the directory (as the streaming writer does). The resume token
// is the temporary file's name; the copy engine's journal says which parts were written, and
// StoredCrc32c() lets it check each one against the data actually on disk (a journal line can
// outlive its data after a power loss, since parts are not fsynced one by one).
//
// Direct I/O (local_store.h): where the filesystem is ext4 or xfs and every part starts on a
// 4 KiB boundary (part_size a multiple of 4 KiB), a second descriptor with O_DIRECT takes each
// part's 4 KiB-aligned bytes; only the file's last, partial block goes through the page cache.
// The two never share a page (a direct range ends where the last block starts), so the page
// cache cannot hold a stale copy of directly written bytes. A filesystem that refuses an O_DIRECT
// write (EINVAL: other alignment rules) turns direct I/O off for the rest of the file.

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "base/aligned_buffer.h"
#include "base/crc32c.h"
#include "base/errno_status.h"
#include "base/log.h"
#include "base/mutex.h"
#include "base/strings.h"
#include "storage/local/direct_io.h"
#include "storage/local/local_internal.h"
#include "storage/local/local_store.h"

namespace ferry::storage::local_internal {

namespace {

constexpr size_t kBounceSize = 1u << 20;  // unaligned memory is copied through this much at a time

// A per-thread aligned buffer for parts whose memory is not aligned.
char* BounceBuffer() {
  thread_local AlignedBuffer buf = NewAlignedBuffer(kBounceSize, kDirectAlign);
  return buf.get();
}

class LocalPartWriter final : public PartWriter {
 public:
  LocalPartWriter(std::string key, std::string path, std::string dir, std::string tmp, int fd,
                  int direct_fd, PartWriteOptions options)
      : key_(std::move(key)),
        path_(std::move(path)),
        dir_(std::move(dir)),
        tmp_(std::move(tmp)),
        fd_(fd),
        direct_fd_(direct_fd),
        direct_(direct_fd >= 0),
        options_(std::move(options)) {}
  ~LocalPartWriter() override {
    CloseDirect();
    if (fd_ >= 0) ::close(fd_);  // keeps the temp file for a resume
  }

  bool direct_io() const override { return direct_.load(std::memory_order_relaxed); }

  Status WritePart(int number, std::string_view data) override {
    if (number < 1) return InvalidArgument("part numbers start at 1");
    uint64_t offset = static_cast<uint64_t>(number - 1) * options_.part_size;
    if (offset + data.size() > options_.size) {
      return InvalidArgument("Write '" + path_ + "': part " + std::to_string(number) +
                             " ends past the declared size");
    }
    if (direct_.load(std::memory_order_relaxed)) {
      FERRY_ASSIGN_OR_RETURN(size_t sent, WriteDirect(data, offset));
      data.remove_prefix(sent);
      offset += sent;
      if (data.empty()) return Status();
    }
    // The kernel lets one pwrite() into a file run at a time (the inode lock of buffered writes on
    // ext4, xfs, tmpfs and NFS), and its waiters spin on the lock's owner: with 8 parts on 2
    // cores that was 7% of ferry serve's CPU. Waiting here sleeps instead; receiving and checking
    // the other parts' bytes goes on meanwhile.
    MutexLock lock(write_mu_);
    while (!data.empty()) {
      ssize_t n = ::pwrite(fd_, data.data(), data.size(), static_cast<off_t>(offset));
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoToStatus(errno, "Write '" + path_ + "'");
      }
      data.remove_prefix(static_cast<size_t>(n));
      offset += static_cast<uint64_t>(n);
    }
    return Status();
  }

  Result<uint32_t> StoredCrc32c(uint64_t offset, uint64_t length) override {
    Crc32c crc;
    std::string buf(static_cast<size_t>(std::min<uint64_t>(length, 1 << 20)), '\0');
    while (length > 0) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(length, buf.size()));
      ssize_t n = ::pread(fd_, buf.data(), want, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return ErrnoToStatus(n < 0 ? errno : EIO, "read back '" + tmp_ + "'");
      crc.Update(std::string_view(buf.data(), static_cast<size_t>(n)));
      offset += static_cast<uint64_t>(n);
      length -= static_cast<uint64_t>(n);
    }
    return crc.value();
  }

  Result<std::map<int, std::string>> StoredParts() override { return std::map<int, std::string>{}; }

  Result<ObjectInfo> Commit() override {
    if (fd_ < 0) return Status(StatusCode::kFailedPrecondition, "writer already finished");
    CloseDirect();  // its writes are on the device; fsync of fd_ commits their extents
    int fd = fd_;
    fd_ = -1;
    return PublishTempFile(fd, tmp_, path_, dir_, key_, options_.write);
  }

  Result<ObjectInfo> CommitWithMetadata(
      const std::map<std::string, std::string>& metadata) override {
    for (const auto& [k, v] : metadata) options_.write.metadata[k] = v;
    return Commit();
  }

  void Abort() override {
    CloseDirect();
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    ::unlink(tmp_.c_str());
  }

  std::string resume_token() const override { return tmp_.substr(tmp_.rfind('/') + 1); }

 private:
  // Writes the 4 KiB-aligned front of `data` at `offset` (a part's start, so aligned) with
  // O_DIRECT; returns how many bytes went (0 when direct I/O was turned off meanwhile). The rest,
  // under 4 KiB unless the filesystem refused, is the caller's to write through the page cache.
  Result<size_t> WriteDirect(std::string_view data, uint64_t offset) {
    const size_t total = data.size() & ~(kDirectAlign - 1);
    size_t done = 0;
    while (done < total && direct_.load(std::memory_order_relaxed)) {
      std::string_view piece = data.substr(done, total - done);
      if (!IsDirectAligned(piece.data())) {
        char* bounce = BounceBuffer();
        if (bounce == nullptr) return Status(StatusCode::kResourceExhausted, "out of memory");
        piece = piece.substr(0, kBounceSize);
        std::memcpy(bounce, piece.data(), piece.size());
        piece = std::string_view(bounce, piece.size());
      }
      FERRY_ASSIGN_OR_RETURN(DirectWrite w, PwriteDirect(direct_fd_, piece, offset + done, path_));
      done += w.written;
      if (w.refused && direct_.exchange(false)) {
        Log(LogLevel::kDebug, "'{}': the filesystem refused an O_DIRECT write; buffered from now",
            path_);
      }
      if (w.refused || w.written < piece.size()) break;
    }
    return done;
  }

  void CloseDirect() {
    direct_.store(false);
    if (direct_fd_ >= 0) ::close(direct_fd_);
    direct_fd_ = -1;
  }

  std::string key_, path_, dir_, tmp_;
  int fd_;
  int direct_fd_;  // O_DIRECT, or -1
  std::atomic<bool> direct_;
  PartWriteOptions options_;
  Mutex write_mu_;
};

// The directory holding `path` ("/" for a file at the root) and the file's name.
std::pair<std::string, std::string> DirAndName(const std::string& path) {
  size_t slash = path.rfind('/');
  return {path.substr(0, slash == 0 ? 1 : slash), path.substr(slash + 1)};
}

}  // namespace

Status AbortLocalPartWrite(const std::string& path, std::string_view resume_token) {
  // Only a name with Ferry's marker, in the target's directory, is ever removed.
  if (!IsLocalTempName(resume_token) || resume_token.find('/') != std::string_view::npos) {
    return InvalidArgument("Discard '" + path + "': bad resume token");
  }
  std::string tmp = DirAndName(path).first + "/" + std::string(resume_token);
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) {
    return ErrnoToStatus(errno, "Discard '" + tmp + "'");
  }
  return Status();
}

Result<size_t> AbortLocalPartWritesSince(const std::string& path, SystemTime since) {
  auto [dir, name] = DirAndName(path);
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec), end;
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) return size_t{0};
    return ErrnoToStatus(ec.value(), "Discard unfinished writes to '" + path + "' (list)");
  }
  size_t removed = 0;
  for (; it != end; it.increment(ec)) {
    std::string entry = it->path().filename().string();
    if (!IsTempNameFor(entry, name)) continue;
    std::string tmp = dir + "/" + entry;
    struct stat st {};
    if (::lstat(tmp.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    auto changed = SystemTime(std::chrono::seconds(st.st_mtim.tv_sec) +
                              std::chrono::nanoseconds(st.st_mtim.tv_nsec));
    if (changed < since) continue;
    if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) {
      return ErrnoToStatus(errno, "Discard '" + tmp + "'");
    }
    ++removed;
  }
  if (ec) return ErrnoToStatus(ec.value(), "Discard unfinished writes to '" + path + "' (list)");
  return removed;
}

Result<std::unique_ptr<PartWriter>> NewLocalPartWriter(const std::string& key,
                                                       const std::string& path,
                                                       const PartWriteOptions& options,
                                                       bool direct_io) {
  auto [dir, name] = DirAndName(path);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return ErrnoToStatus(ec.value(), "Write '" + path + "' (create directory)");
  std::string tmp;
  int fd = -1;
  if (!options.resume_token.empty()) {
    if (!IsLocalTempName(options.resume_token) ||
        options.resume_token.find('/') != std::string::npos) {
      return InvalidArgument("Write '" + path + "': bad resume token");
    }
    tmp = dir + "/" + options.resume_token;
    fd = ::open(tmp.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return ErrnoToStatus(errno, "Resume '" + path + "' (temporary file)");
    struct stat st;
    if (::fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != options.size) {
      ::close(fd);
      return Status(StatusCode::kNotFound,
                    "Resume '" + path + "': temporary file has the wrong size");
    }
  } else {
    tmp = TempPathFor(dir, name);
    fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return ErrnoToStatus(errno, "Write '" + path + "' (create temporary file)");
    // Reserve the space now: a full disk fails here, not halfway through.
    int err = ::posix_fallocate(fd, 0, static_cast<off_t>(options.size));
    if (err != 0 && err != EOPNOTSUPP && err != EINVAL) {
      ::close(fd);
      ::unlink(tmp.c_str());
      return ErrnoToStatus(err, "Write '" + path + "' (reserve " + HumanBytes(options.size) + ")");
    }
    if (err != 0 && ::ftruncate(fd, static_cast<off_t>(options.size)) != 0) {
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return ErrnoToStatus(e, "Write '" + path + "'");
    }
  }
  int direct_fd = -1;
  if (direct_io && options.part_size % kDirectAlign == 0 && DirectIoFilesystem(fd)) {
    direct_fd = ::open(tmp.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);  // -1: buffered writes
  }
  return std::unique_ptr<PartWriter>(
      new LocalPartWriter(key, path, dir, tmp, fd, direct_fd, options));
}

}  // namespace ferry::storage::local_internal
