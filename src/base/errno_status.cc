#include "base/errno_status.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace ferry {

Status ErrnoToStatus(int err, std::string_view what) {
  std::string msg = std::string(what) + ": " + std::strerror(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return Status(StatusCode::kNotFound, msg);
    case EEXIST:
      return Status(StatusCode::kAlreadyExists, msg);
    case EACCES:
    case EPERM:
    case EROFS:
      return Status(StatusCode::kPermissionDenied, msg);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return Status(StatusCode::kResourceExhausted, msg);
    case EINVAL:
    case ENAMETOOLONG:
    case EISDIR:
      return Status(StatusCode::kInvalidArgument, msg);
    case EINTR:
    case EAGAIN:
    case ETIMEDOUT:
    case ESTALE:  // NFS: retrying after a fresh lookup usually succeeds
      return Status(StatusCode::kUnavailable, msg);
    case EIO:
      return Status(StatusCode::kDataLoss, msg);
    default:
      return Status(StatusCode::kInternal, msg);
  }
}

}  // namespace ferry
