#pragma once
// What the kernel may hold for each inode of a mount (its page cache and its attributes), and
// what a FUSE open, read, release or attribute reply must do so that no read sequence of an open
// file ever sees bytes or a size of two versions of an object. No libfuse here: MountFs asks,
// the adapter applies the answer (keep_cache, direct_io, invalidate the kernel's attributes).
//
// Design. The page cache of an inode is shared by every descriptor that reads through it, so it
// belongs to one version (ETag) at a time, its "owner":
// 1. A read open of the owner version, or of any version while no other descriptor reads through
//    the cache, reads through it ("cached"). When the open changes the owner, or the cache is not
//    yet known to hold only the owner's pages, it asks the kernel to drop the cached pages at
//    open (no keep_cache). The first read of such a descriptor proves the drop happened (the
//    kernel drops pages inside open(), before any read), so later opens of the same version
//    keep the cache (keep_cache).
// 2. A read open of another version while descriptors of the owner still read through the cache
//    uses direct I/O: its reads bypass the cache, so they neither see nor add foreign pages.
// 3. The kernel's attributes (above all the size, which ends cached reads) must be those of the
//    version read: an open whose version differs from the attributes last given to the kernel
//    invalidates them first (attributes only; that never waits on pages).
// 4. Once the kernel has been given attributes of another version (a new open, a refreshed
//    getattr or lookup), the owner's cached descriptors are superseded: their pages may be
//    dropped and the kernel's size is another version's, so their reads fail with ESTALE from
//    then on instead of being served. While they stay open, the size given to the kernel is at
//    least the owner's size, so the kernel never ends one of them early with a silent EOF (a
//    newer, shorter version reads to its own end: the daemon answers EOF there). When the last
//    of them closes, the inflated attributes are invalidated.
// 5. A write open (O_TRUNC) ends the owner: the kernel truncates the cache and fills it with the
//    written data; reads of descriptors opened before fail with ESTALE.
// Thread-safe (one mutex); every call is short and never waits on the kernel.

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include "base/mutex.h"

namespace ferry::mount {

// How one read open uses the kernel's caches (the FUSE open reply and a notification).
struct OpenCaching {
  bool keep_cache = false;       // FOPEN_KEEP_CACHE: the cached pages are this version's
  bool direct_io = false;        // FOPEN_DIRECT_IO: bypass the page cache
  bool invalidate_attr = false;  // drop the kernel's cached attributes before replying
};

// What an open descriptor needs to remember for KernelCache::OnRead/OnRelease.
struct CacheTicket {
  bool cached = false;     // reads through the page cache
  uint64_t owner_gen = 0;  // the owner generation it was opened in
  bool confirms = false;   // opened without keep_cache: its first read proves the drop happened
};

class KernelCache final {
 public:
  // A read open of `ino` pinned to `etag` (the object's `size`). `etag` "" (a backend without
  // versions) never shares the cache with another open.
  OpenCaching OnReadOpen(uint64_t ino, const std::string& etag, uint64_t size, CacheTicket* ticket);
  // Before a read of a descriptor is answered: false when it must fail with ESTALE (superseded).
  bool OnRead(uint64_t ino, CacheTicket& ticket);
  // A read descriptor closed. True when the kernel's attributes must be invalidated (they carry
  // a size inflated for readers that are all gone now).
  bool OnRelease(uint64_t ino, const CacheTicket& ticket);
  // File attributes about to be given to the kernel (lookup, getattr, setattr replies): records
  // them, supersedes the owner's readers if they are another version's, and raises `size` to the
  // owner's while those readers are open (see 4.).
  void OnAttrReply(uint64_t ino, const std::string& etag, uint64_t& size);
  // Whether bytes of the version a descriptor reads through the cache (`ticket`) may be put into
  // the kernel's page cache now: it is still the owner, not superseded, and the cache is known
  // to hold only its pages. (The caller must rule out a write open racing with the store: the
  // mount stores only when it is read-only, and only while that descriptor is open.)
  bool MayStore(uint64_t ino, const CacheTicket& ticket);
  // A write open (O_TRUNC) or create of `ino`.
  void OnWriteOpen(uint64_t ino);
  // The kernel dropped the inode (its lookup count reached zero): nothing of it is cached.
  void Forget(uint64_t ino);

 private:
  struct State {
    std::optional<std::string> owner;  // the version the page cache belongs to
    uint64_t owner_size = 0;
    uint64_t owner_gen = 0;                // bumped whenever the owner changes
    bool clean = false;                    // proven: the cache holds no page of an earlier owner
    bool superseded = false;               // the kernel was given another version's attributes
    int cached_opens = 0;                  // open descriptors that read through the cache
    std::optional<std::string> attr_etag;  // version of the kernel's attributes (none: invalid)
    bool attr_inflated = false;            // the kernel's size was raised to the owner's
  };
  Mutex mu_;
  std::unordered_map<uint64_t, State> states_ GUARDED_BY(mu_);
};

}  // namespace ferry::mount
