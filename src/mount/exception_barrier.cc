#include "mount/exception_barrier.h"

#include "base/log.h"

namespace ferry::mount {

void LogEscapedException(const char* op, const char* what) noexcept {
  try {
    Log(LogLevel::kError, "FUSE {} failed with an exception: {}", op, what);
  } catch (...) {  // formatting or writing the log failed: nothing more to do
  }
}

}  // namespace ferry::mount
