#pragma once
// The local store: plain disks and NFS/NAS mounts, seen as a key space rooted at a directory.
//
// Key "a/b/c" is the file ROOT/a/b/c. Keys must be relative paths without empty, "." or ".."
// segments (kInvalidArgument otherwise); directories are created as needed on write.
//
// Atomic writes (the design, step by step):
//   1. open ROOT/a/b/.ferry-tmp.c.<random> (O_CREAT|O_EXCL, mode 0644 minus umask);
//   2. Append() writes to it; Abort() or a destroyed writer unlinks it;
//   3. Commit(): fsync(file), then rename() over ROOT/a/b/c (or link() for create-only
//      writes, which fails with EEXIST if the target appeared), then fsync(directory).
// A crash leaves at most a ".ferry-tmp." file, which List() never shows. On NFS, rename is
// atomic on the server, so readers see the old or the new file, never a partial one.

#include <memory>
#include <string>

#include "storage/store.h"

namespace ferry::storage {

// Prefix of in-progress files; List() hides them.
inline constexpr std::string_view kLocalTempPrefix = ".ferry-tmp.";

std::shared_ptr<Store> MakeLocalStore(std::string root);

// Validates a local key and returns ROOT/key.
Result<std::string> LocalPath(const std::string& root, std::string_view key);

}  // namespace ferry::storage
