#pragma once
// Direct I/O of the local store's writers (local_store.h, "Direct I/O"): which filesystems get
// O_DIRECT, the alignment it needs, and the one write routine both writers use.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/status.h"

namespace ferry::storage::local_internal {

inline constexpr size_t kDirectAlign = 4096;  // offsets, lengths and memory of O_DIRECT writes

inline bool IsDirectAligned(const void* p) {
  return reinterpret_cast<uintptr_t>(p) % kDirectAlign == 0;
}

// ext4 and xfs: local block filesystems whose O_DIRECT writes are known to be safe and, into
// allocated extents, to run side by side (shared inode lock). NFS (a synchronous round trip per
// write), tmpfs, FUSE and btrfs (checksums of memory that could change under the write) keep the
// page cache.
bool DirectIoFilesystem(int fd);

// What PwriteDirect wrote: `written` bytes (a multiple of kDirectAlign unless the kernel made a
// short write); `refused` when the filesystem rejected O_DIRECT (EINVAL: other alignment rules).
// The caller writes whatever is left through the page cache.
struct DirectWrite {
  size_t written = 0;
  bool refused = false;
};

// pwrite()s `data` (kDirectAlign-aligned memory and length) at `offset` (aligned) on `fd`, which
// has O_DIRECT set. Other errors: the errno as a Status naming `path`.
Result<DirectWrite> PwriteDirect(int fd, std::string_view data, uint64_t offset,
                                 std::string_view path);

}  // namespace ferry::storage::local_internal
