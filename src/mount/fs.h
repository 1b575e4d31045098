#pragma once
// The kernel-free core of `ferry mount`: every filesystem operation on an S3 prefix (or any
// Store), returning a value or an errno. src/mount/fuse_adapter.cc maps libfuse's low-level
// requests onto it one to one; tests drive it directly. Semantics: docs/semantics/fuse.md.

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "base/thread_pool.h"
#include "mount/block_cache.h"
#include "mount/inodes.h"
#include "mount/kernel_cache.h"
#include "mount/memory_budget.h"
#include "mount/read_window.h"
#include "mount/small_files.h"
#include "storage/store.h"

namespace ferry::mount {

template <typename T>
using Fs = std::expected<T, int>;  // errno on failure

uint64_t ProcessOf(uint64_t tid);

struct MountOptions {
  bool read_only = false;
  std::chrono::seconds metadata_ttl{60};  // attributes, directory entries and negative entries
  uint64_t max_memory = 512ull << 20;     // read-ahead buffers of all open files together
  std::string cache_dir;                  // local block cache ("" = none)
  uint64_t cache_size = 10ull << 30;
  PrefetchOptions prefetch;
  int fetch_threads = 48;  // a cache fill takes up to BlockCacheFill::kStreams of them
  uint64_t small_file_limit = 1ull << 20;  // files up to this size are read ahead across files
  int small_file_ahead = 16;               // how many following files
  // Thread id -> process id (Linux: /proc/<tid>/status Tgid); asked only for writers.
  std::function<uint64_t(uint64_t)> process_of = ProcessOf;
  // The owner every file and directory shows (objects have none): the user running the mount.
  uint32_t uid = ::getuid();
  uint32_t gid = ::getgid();
};

// The mode and owner an entry shows: files 0644, directories 0755 (without the write bits on a
// read-only mount), owned by MountOptions::uid/gid.
struct Permissions {
  uint32_t mode = 0;  // file type and permission bits, as in st_mode
  uint32_t uid = 0, gid = 0;
};

// What a setattr asks to change; unset fields stay as they are. Times are accepted and not
// stored (objects keep their upload time), so they are not part of it.
struct AttrChange {
  std::optional<uint64_t> size;  // truncate
  std::optional<uint32_t> mode;  // permission bits (07777)
  std::optional<uint32_t> uid, gid;
};

// An open file: its handle and how the kernel is to cache it (kernel_cache.h; write opens and
// creates: all false).
struct OpenReply {
  uint64_t fh = 0;
  OpenCaching caching;
};

class MountFs {
 public:
  MountFs(std::shared_ptr<storage::Store> store, std::string root_key, MountOptions options);
  ~MountFs();

  // Lookup, GetAttr and SetAttr answer the kernel: the attributes they return are what it caches.
  Fs<Attr> Lookup(Ino parent, const std::string& name);  // counts a kernel lookup
  void Forget(Ino ino, uint64_t n);
  Fs<Attr> GetAttr(Ino ino);
  // size: truncate (only a file being written, to its current size or 0 before any write:
  // else EOPNOTSUPP). Mode and owner: setting the values shown succeeds (cp -p, mv and tar do
  // that); other values fail with EPERM, as objects have no modes or owners to change.
  Fs<Attr> SetAttr(Ino ino, const AttrChange& change);
  Permissions PermissionsOf(const Attr& attr) const;

  Fs<uint64_t> OpenDir(Ino ino);
  // Calls add(name, attr, next_offset) for entries from `offset` until add returns false.
  using DirFiller = std::function<bool(const std::string& name, const Attr& attr, uint64_t next)>;
  Fs<void> ReadDir(uint64_t dh, uint64_t offset, const DirFiller& add);
  void ReleaseDir(uint64_t dh);

  // `caller` is the requesting thread (0 = unknown). Only a close() by the process that opened
  // a file for writing commits it: descriptors inherited by children that exec() are closed
  // too, and those closes must not end the write. A read open is pinned to the object's ETag
  // (the cached attributes', refreshed after --metadata-ttl); reads of it fail with ESTALE
  // once the object was replaced or deleted, never returning bytes of two versions.
  Fs<OpenReply> Open(Ino ino, int flags, uint64_t caller = 0);
  Fs<std::string> Read(uint64_t fh, uint64_t offset, size_t size);
  Fs<std::pair<Attr, uint64_t>> Create(Ino parent, const std::string& name, int flags,
                                       uint64_t caller = 0);
  Fs<size_t> Write(uint64_t fh, uint64_t offset, std::string_view data);
  Fs<void> Flush(uint64_t fh, uint64_t caller = 0);  // close(): commits a written file
  Fs<void> Fsync(uint64_t fh);
  // True when the kernel's cached attributes of the file must be invalidated now.
  bool Release(uint64_t fh);

  Fs<void> Unlink(Ino parent, const std::string& name);
  Fs<Attr> Mkdir(Ino parent, const std::string& name);
  Fs<void> Rmdir(Ino parent, const std::string& name);
  Fs<void> Rename(Ino parent, const std::string& name, Ino new_parent, const std::string& new_name);

  // Puts bytes of a file into the kernel's page cache (FUSE notify_store). The adapter sets it
  // once the session exists and clears it (nullptr) before the session ends; a call in progress
  // finishes first. Used on read-only mounts with --cache-dir: each span a cache fill brings is
  // stored while the descriptor that started the fill is open and its version owns the page
  // cache (KernelCache::MayStore), so later reads of it never reach the daemon.
  using PagePusher = std::function<void(Ino ino, uint64_t offset, std::string_view bytes)>;
  void SetPagePusher(PagePusher pusher);

  uint64_t memory_in_use() const { return prefetch_budget_.used(); }
  // Blocks until the background fetches started so far (read-ahead parts, small files read
  // ahead, disk cache fills) have finished: explicit synchronization for tests.
  void WaitForBackgroundFetches();

 private:
  struct DirHandle;
  struct FileHandle;
  Clock::time_point Expiry() const { return Clock::now() + options_.metadata_ttl; }
  Fs<Node> Resolve(Ino parent, const std::string& name);
  Fs<Node> NotInStore(Ino parent, const std::string& name);
  Fs<Attr> StatNode(Ino ino);  // attributes, refreshed from the store after the TTL
  Attr ForKernel(Attr a);      // attributes as given to the kernel (kernel_cache.h)
  std::optional<Fs<Node>> ResolveByListing(Ino parent, const std::string& dir_key,
                                           const std::string& name);
  Fs<void> Commit(FileHandle& h);
  std::shared_ptr<FileHandle> FileFor(uint64_t fh);  // null when fh is not open
  Fs<void> FetchPage(DirHandle& d);
  std::vector<std::pair<std::string, Node>> CacheListing(Ino parent, const std::string& dir_key,
                                                         const storage::ListPage& page);
  void ReadAheadSiblings(const Node& node);

  std::shared_ptr<storage::Store> store_;
  MountOptions options_;
  InodeTable inodes_;
  KernelCache kernel_;
  MemoryBudget prefetch_budget_;
  std::unique_ptr<BlockCache> cache_;
  ThreadPool fetch_pool_;
  ThreadPool small_pool_;  // whole-file fetches of SmallFiles (apart from read-ahead parts)
  std::unique_ptr<SmallFiles> small_;
  const uint64_t push_limit_;  // objects up to a quarter of the RAM go to the page cache whole
  Mutex pusher_mu_;
  PagePusher pusher_ GUARDED_BY(pusher_mu_);
  Mutex mu_;
  std::map<Ino, std::string> last_opened_ GUARDED_BY(mu_);  // per directory: the name opened last
  std::map<uint64_t, std::shared_ptr<DirHandle>> dirs_ GUARDED_BY(mu_);
  std::map<uint64_t, std::shared_ptr<FileHandle>> files_ GUARDED_BY(mu_);
  std::atomic<uint64_t> next_handle_{1};
  SystemTime mounted_at_ = std::chrono::system_clock::now();  // implicit directories' mtime
};

}  // namespace ferry::mount
