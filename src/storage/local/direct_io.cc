#include "storage/local/direct_io.h"

#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "base/errno_status.h"

namespace ferry::storage::local_internal {

bool DirectIoFilesystem(int fd) {
  struct statfs fs;
  if (::fstatfs(fd, &fs) != 0) return false;
  return fs.f_type == EXT4_SUPER_MAGIC || fs.f_type == XFS_SUPER_MAGIC;
}

Result<DirectWrite> PwriteDirect(int fd, std::string_view data, uint64_t offset,
                                 std::string_view path) {
  DirectWrite out;
  while (out.written < data.size()) {
    ssize_t n = ::pwrite(fd, data.data() + out.written, data.size() - out.written,
                         static_cast<off_t>(offset + out.written));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EINVAL) {
      out.refused = true;
      break;
    }
    if (n <= 0) {
      return ErrnoToStatus(n < 0 ? errno : EIO, "Write '" + std::string(path) + "'");
    }
    out.written += static_cast<size_t>(n);
    if (out.written % kDirectAlign != 0) break;  // short and unaligned: the rest buffered
  }
  return out;
}

}  // namespace ferry::storage::local_internal
