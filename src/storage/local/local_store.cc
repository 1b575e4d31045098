#include "storage/local/local_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <functional>
#include <utility>
#include <vector>

#include "base/errno_status.h"
#include "base/strings.h"
#include "storage/local/local_internal.h"
#include "storage/local/publisher.h"

namespace ferry::storage {

Result<std::string> LocalPath(const std::string& root, std::string_view key) {
  if (key.empty()) return InvalidArgument("empty key");
  for (auto seg : Split(key, '/')) {
    if (seg.empty() || seg == "." || seg == "..") {
      return InvalidArgument("'" + std::string(key) +
                             "' is not a valid local path (empty, '.' or '..' segment)");
    }
  }
  std::string path = root;
  if (path.back() != '/') path.push_back('/');
  return path + std::string(key);
}

namespace local_internal {

std::string Etag(const struct stat& st) {
  char buf[80];
  std::snprintf(
      buf, sizeof buf, "%llx-%llx-%llx", static_cast<unsigned long long>(st.st_ino),
      static_cast<unsigned long long>(st.st_size),
      static_cast<unsigned long long>(st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec));
  return buf;
}

ObjectInfo InfoFromStat(std::string key, const struct stat& st) {
  return ObjectInfo{
      .key = std::move(key),
      .size = static_cast<uint64_t>(st.st_size),
      .modified = SystemTime(std::chrono::duration_cast<SystemTime::duration>(
          std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec))),
      .etag = Etag(st)};
}

std::map<std::string, std::string> ReadUserXattrs(const std::string& path) {
  std::map<std::string, std::string> out;
  char names[4096];
  ssize_t n = ::listxattr(path.c_str(), names, sizeof names);
  for (ssize_t i = 0; i < n;) {
    std::string name(names + i);
    i += static_cast<ssize_t>(name.size()) + 1;
    if (!StartsWith(name, "user.")) continue;
    char value[1024];
    ssize_t v = ::getxattr(path.c_str(), name.c_str(), value, sizeof value);
    if (v >= 0) out[name.substr(5)] = std::string(value, static_cast<size_t>(v));
  }
  return out;
}

}  // namespace local_internal

namespace {

using local_internal::InfoFromStat;

class LocalStore final : public Store {
 public:
  LocalStore(std::string root, LocalStoreOptions options)
      : root_(std::move(root)), options_(options) {}

  std::string UrlFor(std::string_view key) const override {
    std::string r = root_;
    if (r.back() != '/') r.push_back('/');
    return r + std::string(key);
  }

  Capabilities capabilities() const override {
    // Metadata goes to user.* xattrs where the filesystem has them (best effort), so it is not
    // promised.
    return {.server_side_copy = false,
            .conditional_write = true,
            .arbitrary_keys = false,
            .user_metadata = false,
            .part_writes = true,
            .commit_metadata_limit = UINT64_MAX,
            .local_files = true,
            .checksums = ChecksumSource::kReadData,
            .in_place_updates = true};
  }

  StoreDescription Describe() override { return {.kind = "local", .endpoint = root_}; }

  bool IsDirectory(std::string_view key) override {
    auto path = LocalPathFor(key);
    struct stat st;
    return path && ::stat(path->c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }

  // A trailing '/' (a directory, as URLs write it) is kept.
  std::optional<std::string> LocalPathFor(std::string_view key) const override {
    if (key.empty()) return root_;
    const bool dir = key.back() == '/';
    auto path = LocalPath(root_, dir ? key.substr(0, key.size() - 1) : key);
    if (!path.ok()) return std::nullopt;
    return dir ? *path + "/" : *path;
  }

  Result<ObjectInfo> Stat(std::string_view key) override {
    auto path = LocalPath(root_, key);
    if (!path.ok()) return path.status().WithContext("Stat '" + UrlFor(key) + "'");
    struct stat st;
    if (::stat(path->c_str(), &st) != 0) return ErrnoToStatus(errno, "Stat '" + *path + "'");
    if (S_ISDIR(st.st_mode)) {
      return NotFound("Stat '" + *path + "': is a directory, not a file");
    }
    ObjectInfo info = InfoFromStat(std::string(key), st);
    info.metadata = local_internal::ReadUserXattrs(*path);
    return info;
  }

  Status Read(std::string_view key, const ReadOptions& options, const ByteSink& sink) override {
    FERRY_ASSIGN_OR_RETURN(OpenFile file, Open(key, options));
    FERRY_ASSIGN_OR_RETURN(Span span, SpanOf(file, options));
    constexpr size_t kChunk = 1 << 20;
    std::vector<char> buf(std::min<uint64_t>(kChunk, std::max<uint64_t>(span.length, 1)));
    return ReadSpan(file, span, [&](uint64_t done, size_t want) -> Result<size_t> {
      want = std::min(want, buf.size());
      ssize_t n = Pread(file.fd, buf.data(), want, span.offset + done);
      if (n > 0) FERRY_RETURN_IF_ERROR(sink(std::string_view(buf.data(), static_cast<size_t>(n))));
      return n < 0 ? Result<size_t>(ErrnoToStatus(errno, "Read '" + file.path + "'"))
                   : Result<size_t>(static_cast<size_t>(n));
    });
  }

  // Straight from the page cache into `dst` (pread), 1 MiB at a time for progress and stops.
  Result<size_t> ReadInto(std::string_view key, const ReadOptions& options, std::span<char> dst,
                          const ReadProgress& progress) override {
    FERRY_ASSIGN_OR_RETURN(OpenFile file, Open(key, options));
    FERRY_ASSIGN_OR_RETURN(Span span, SpanOf(file, options));
    if (span.length > dst.size()) {
      return Status(StatusCode::kDataLoss,
                    "Read '" + file.path + "': " + std::to_string(span.length) +
                        " bytes, more than the " + std::to_string(dst.size()) + " expected");
    }
    FERRY_RETURN_IF_ERROR(ReadSpan(file, span, [&](uint64_t done, size_t want) -> Result<size_t> {
      want = std::min<size_t>(want, size_t{1} << 20);
      ssize_t n = Pread(file.fd, dst.data() + done, want, span.offset + done);
      if (n > 0) FERRY_RETURN_IF_ERROR(progress(static_cast<size_t>(n)));
      return n < 0 ? Result<size_t>(ErrnoToStatus(errno, "Read '" + file.path + "'"))
                   : Result<size_t>(static_cast<size_t>(n));
    }));
    return static_cast<size_t>(span.length);
  }

  Result<std::unique_ptr<Writer>> NewWriter(std::string_view key,
                                            const WriteOptions& options) override {
    auto path = LocalPath(root_, key);
    if (!path.ok()) return path.status().WithContext("Write '" + UrlFor(key) + "'");
    return local_internal::NewLocalWriter(std::string(key), *path, options, options_.direct_io,
                                          &publisher_);
  }

  Result<ObjectInfo> LinkLocalFile(std::string_view key, const std::string& file,
                                   const WriteOptions& options) override {
    auto path = LocalPath(root_, key);
    if (!path.ok()) return path.status().WithContext("Write '" + UrlFor(key) + "'");
    return local_internal::LinkLocalFile(file, std::string(key), *path, options);
  }

  std::vector<FlushFailure> Flush() override { return publisher_.Flush(); }

  Result<std::unique_ptr<PartWriter>> NewPartWriter(std::string_view key,
                                                    const PartWriteOptions& options) override {
    auto path = LocalPath(root_, key);
    if (!path.ok()) return path.status().WithContext("Write '" + UrlFor(key) + "'");
    return local_internal::NewLocalPartWriter(std::string(key), *path, options, options_.direct_io);
  }

  Status AbortPartWrite(std::string_view key, std::string_view resume_token) override {
    auto path = LocalPath(root_, key);
    if (!path.ok()) return path.status().WithContext("Discard '" + UrlFor(key) + "'");
    return local_internal::AbortLocalPartWrite(*path, resume_token);
  }

  Result<size_t> AbortPartWritesSince(std::string_view key, SystemTime since) override {
    auto path = LocalPath(root_, key);
    if (!path.ok()) return path.status().WithContext("Discard '" + UrlFor(key) + "'");
    return local_internal::AbortLocalPartWritesSince(*path, since);
  }

  Result<ListPage> List(const ListOptions& options) override {
    return local_internal::ListLocal(root_, options, cursors_);
  }

  Status Delete(std::string_view key) override {
    auto path = LocalPath(root_, key);
    if (!path.ok()) return path.status().WithContext("Delete '" + UrlFor(key) + "'");
    if (::unlink(path->c_str()) != 0 && errno != ENOENT) {
      return ErrnoToStatus(errno, "Delete '" + *path + "'");
    }
    return Status();
  }

 private:
  // An open file being read; closed with the object.
  struct OpenFile {
    OpenFile(int f, std::string p) : fd(f), path(std::move(p)) {}
    OpenFile(OpenFile&& o) noexcept : fd(std::exchange(o.fd, -1)), path(std::move(o.path)) {}
    OpenFile& operator=(OpenFile&&) = delete;
    ~OpenFile() {
      if (fd >= 0) ::close(fd);
    }
    int fd;
    std::string path;
  };
  struct Span {
    uint64_t offset = 0;
    uint64_t length = 0;
  };

  // Opens `key` for reading; fills options.info from the open file (size, etag, xattrs).
  Result<OpenFile> Open(std::string_view key, const ReadOptions& options) {
    auto path = LocalPath(root_, key);
    if (!path.ok()) return path.status().WithContext("Read '" + UrlFor(key) + "'");
    int fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoToStatus(errno, "Read '" + *path + "'");
    OpenFile file(fd, std::move(*path));
    if (options.info) {
      struct stat st;
      if (::fstat(fd, &st) == 0) {
        *options.info = local_internal::InfoFromStat(std::string(key), st);
        options.info->metadata = local_internal::ReadUserXattrs(file.path);
      }
    }
    return file;
  }

  // The span of the open file that `options` asks for, after checking the file is one and
  // still the version asked for (if_match); tells the kernel it will be read in order.
  static Result<Span> SpanOf(const OpenFile& file, const ReadOptions& options) {
    struct stat st;
    if (::fstat(file.fd, &st) != 0) return ErrnoToStatus(errno, "Read '" + file.path + "'");
    if (S_ISDIR(st.st_mode)) return InvalidArgument("Read '" + file.path + "': is a directory");
    if (!options.if_match.empty() && options.if_match != local_internal::Etag(st)) {
      return Status(StatusCode::kFailedPrecondition, "Read '" + file.path + "': file changed");
    }
    uint64_t size = static_cast<uint64_t>(st.st_size);
    Span span{.offset = options.range ? options.range->offset : 0};
    if (span.offset > size) {
      return Status(StatusCode::kOutOfRange, "Read '" + file.path + "': offset " +
                                                 std::to_string(span.offset) +
                                                 " is past the end (" + std::to_string(size) + ")");
    }
    span.length = size - span.offset;
    if (options.range && options.range->length)
      span.length = std::min(span.length, *options.range->length);
    ::posix_fadvise(file.fd, static_cast<off_t>(span.offset), static_cast<off_t>(span.length),
                    POSIX_FADV_SEQUENTIAL);
    return span;
  }

  static ssize_t Pread(int fd, char* buf, size_t n, uint64_t offset) {
    ssize_t got;
    do {
      got = ::pread(fd, buf, n, static_cast<off_t>(offset));
    } while (got < 0 && errno == EINTR);
    return got;
  }

  // Calls `read_at(done, want)` (which preads at most `want` bytes at span.offset + done and
  // returns how many) until the span is read; a file that ends early is kDataLoss.
  static Status ReadSpan(const OpenFile& file, const Span& span,
                         const std::function<Result<size_t>(uint64_t, size_t)>& read_at) {
    uint64_t done = 0;
    while (done < span.length) {
      size_t want = static_cast<size_t>(std::min<uint64_t>(span.length - done, 1u << 30));
      Result<size_t> n = read_at(done, want);
      if (!n.ok()) return n.status();
      if (*n == 0) {
        return Status(StatusCode::kDataLoss, "Read '" + file.path + "': file shrank while reading");
      }
      done += *n;
    }
    return Status();
  }

  std::string root_;
  LocalStoreOptions options_;
  local_internal::ListCursors cursors_;
  local_internal::Publisher publisher_;  // writes with WriteOptions::publish_later
};

}  // namespace

std::shared_ptr<Store> MakeLocalStore(std::string root, LocalStoreOptions options) {
  if (root.empty()) root = "/";
  return std::make_shared<LocalStore>(std::move(root), options);
}

}  // namespace ferry::storage
