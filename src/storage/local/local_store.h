#pragma once
// The local store: plain disks and NFS/NAS mounts, seen as a key space rooted at a directory.
//
// Key "a/b/c" is the file ROOT/a/b/c. Keys must be relative paths without empty, "." or ".."
// segments (kInvalidArgument otherwise); directories are created as needed on write.
//
// Atomic writes (the design, step by step):
//   1. open an unnamed file in ROOT/a/b (O_TMPFILE, mode 0644 minus umask); where the
//      filesystem has no O_TMPFILE (NFS, some FUSE), a named ROOT/a/b/.ferry-tmp.c.<marker>
//      (O_CREAT|O_EXCL) instead;
//   2. Append() writes to it; Abort() or a destroyed writer closes (and unlinks) it;
//   3. Commit(): fsync(file), then give it a name: linkat() of the unnamed file to a temp name
//      and rename() over ROOT/a/b/c (or linkat() straight to the target for create-only writes,
//      which fails with EEXIST if the target appeared), then fsync(directory) (unless the
//      caller syncs the directory later: WriteOptions::sync_directory).
// A crash (kill -9, power loss) while writing leaves nothing on filesystems with O_TMPFILE, and
// at most a ".ferry-tmp." file elsewhere, which List() never shows. On NFS, rename is atomic on
// the server, so readers see the old or the new file, never a partial one.
//
// Parallel part writes (NewPartWriter) need a named file that a later process can resume, so
// they always use a ".ferry-tmp." name; the copy engine's journal names it, and a journal that
// no longer matches its source has its file removed (AbortPartWrite).
//
// Temporary names carry a marker: ".ferry-tmp.NAME.R-C" where R is 16 random hex digits and C is
// the CRC32C of "NAME.R" (IsLocalTempName checks it). Only such names are hidden from listings
// or ever deleted as temporary; a user's own ".ferry-tmp.x" file is an ordinary file.

#include <memory>
#include <string>

#include "storage/store.h"

namespace ferry::storage {

// Prefix of in-progress files; List() hides those whose name also carries the marker.
inline constexpr std::string_view kLocalTempPrefix = ".ferry-tmp.";

// True for a file name Ferry made for an unfinished write (prefix and a valid marker).
bool IsLocalTempName(std::string_view name);

std::shared_ptr<Store> MakeLocalStore(std::string root);

// Validates a local key and returns ROOT/key.
Result<std::string> LocalPath(const std::string& root, std::string_view key);

}  // namespace ferry::storage
