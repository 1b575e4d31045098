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
//   3. Commit(): fsync(file), then give it a name: linkat() of the unnamed file straight to
//      ROOT/a/b/c, which fails with EEXIST if the target exists; then a create-only write stops
//      (kAlreadyExists) and any other links it to a temp name and rename()s that over the
//      target; then fsync(directory) (unless the caller syncs the directory later:
//      WriteOptions::sync_directory).
// A crash (kill -9, power loss) while writing leaves nothing on filesystems with O_TMPFILE, and
// at most a ".ferry-tmp." file elsewhere, which List() never shows. On NFS, rename is atomic on
// the server, so readers see the old or the new file, never a partial one.
//
// Parallel part writes (NewPartWriter) need a named file that a later process can resume, so
// they always use a ".ferry-tmp." name; the copy engine's journal names it, and a journal that
// no longer matches its source has its file removed (AbortPartWrite).
//
// Direct I/O (LocalStoreOptions::direct_io): on ext4 and xfs a part writer sends the aligned
// pieces of its parts to the disk with O_DIRECT (offset and length multiples of 4 KiB; a piece
// that is not in 4 KiB-aligned memory goes through a 1 MiB aligned bounce buffer), and a
// streaming writer (NewWriter) does the same for everything past its first 8 MiB, gathered in a
// 1 MiB aligned buffer (so files under 8 MiB are written as before). No copy into
// the page cache, no dirty pages for writeback to find later, and writers of one file no longer
// queue on its inode lock. The tail of a part that is not a multiple of 4 KiB, other filesystems
// (NFS, tmpfs, FUSE, btrfs) and a filesystem that refuses O_DIRECT use ordinary buffered writes.
// The written file is then not in the page cache: a reader right after the copy reads the disk.
// Commit() is unchanged (fsync: the extents' metadata and the device's cache).
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

struct LocalStoreOptions {
  // O_DIRECT for parallel part writes where the filesystem is ext4 or xfs (see above).
  // FERRY_DIRECT_IO=off turns it off (backends/backends.h).
  bool direct_io = true;
};

std::shared_ptr<Store> MakeLocalStore(std::string root, LocalStoreOptions options = {});

// Validates a local key and returns ROOT/key.
Result<std::string> LocalPath(const std::string& root, std::string_view key);

}  // namespace ferry::storage
