#pragma once
// Pieces shared by fs.cc (lookups, attributes, directories, reads) and fs_write.cc (the write
// path and namespace changes): Status -> errno, name checks, the handle types.

#include <cerrno>
#include <expected>
#include <set>
#include <string>
#include <vector>

#include "base/log.h"
#include "base/mutex.h"
#include "mount/file_reader.h"
#include "mount/fs.h"

namespace ferry::mount::fs_internal {

// Store errors as errno: what the application sees.
inline int ToErrno(const Status& s) {
  switch (s.code()) {
    case StatusCode::kNotFound:
      return ENOENT;
    case StatusCode::kPermissionDenied:
      return EACCES;
    case StatusCode::kAlreadyExists:
      return EEXIST;
    case StatusCode::kInvalidArgument:
      return EINVAL;
    case StatusCode::kFailedPrecondition:
      return ESTALE;  // the object changed under an open file
    case StatusCode::kUnimplemented:
      return EOPNOTSUPP;
    default:
      return EIO;
  }
}

inline std::unexpected<int> Fail(int err) { return std::unexpected(err); }

inline std::unexpected<int> Fail(const Status& s, const std::string& what) {
  Log(LogLevel::kWarn, "{}: {}", what, s.message());
  return std::unexpected(ToErrno(s));
}

inline bool ValidName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

}  // namespace ferry::mount::fs_internal

namespace ferry::mount {

struct MountFs::DirHandle {
  Ino ino = 0;
  std::string prefix;
  Mutex mu;
  std::vector<std::pair<std::string, Attr>> entries GUARDED_BY(mu);  // "." and ".." first
  std::set<std::string> seen GUARDED_BY(mu);
  std::string continuation GUARDED_BY(mu);
  bool listed_all GUARDED_BY(mu) = false;
};

// Set at open and then only read, but for the write state (under mu). The ticket changes only
// inside KernelCache's calls (under its lock).
struct MountFs::FileHandle {
  Ino ino = 0;
  std::string key;
  std::unique_ptr<FileReader> reader;  // read handles
  std::string etag;                    // read handles: the version pinned at open
  CacheTicket ticket;                  // read handles: how the kernel caches it
  uint64_t owner = 0;                  // write handles: the process that opened it
  Mutex mu;
  std::unique_ptr<storage::Writer> writer GUARDED_BY(mu);  // write handles
  uint64_t written GUARDED_BY(mu) = 0;
  bool committed GUARDED_BY(mu) = false;
  int error GUARDED_BY(mu) = 0;  // a failed write: later writes and the close report it
};

}  // namespace ferry::mount
