#include "mount/fs.h"
#include "mount/fs_internal.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <set>

#include "base/log.h"
#include "base/strings.h"
#include "storage/url.h"

namespace ferry::mount {

using namespace fs_internal;  // NOLINT: this file's own helpers

MountFs::MountFs(std::shared_ptr<storage::Store> store, std::string root_key, MountOptions options)
    : store_(std::move(store)),
      options_(std::move(options)),
      inodes_(storage::DirectoryPrefix(std::move(root_key))),
      prefetch_budget_(options_.max_memory),
      fetch_pool_(std::max(1, options_.fetch_threads)),
      small_pool_(std::clamp(options_.fetch_threads, 1, 16)),
      push_limit_(static_cast<uint64_t>(::sysconf(_SC_PHYS_PAGES)) *
                  static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) / 4) {
  small_ =
      std::make_unique<SmallFiles>(store_, prefetch_budget_, small_pool_,
                                   static_cast<size_t>(std::max(1, options_.small_file_ahead)) * 4);
  if (!options_.cache_dir.empty())
    cache_ = std::make_unique<BlockCache>(options_.cache_dir, options_.cache_size);
}

MountFs::~MountFs() {
  {
    MutexLock lock(mu_);
    files_.clear();
    dirs_.clear();
  }
  small_.reset();
}

void MountFs::SetPagePusher(PagePusher pusher) {
  MutexLock lock(pusher_mu_);
  pusher_ = std::move(pusher);
}

void MountFs::WaitForBackgroundFetches() {
  small_pool_.WaitIdle();
  fetch_pool_.WaitIdle();
}

// Opening the file that follows the one opened last in the same directory (name order) means
// the program walks the directory: fetch the next small files whole, in the background.
void MountFs::ReadAheadSiblings(const Node& node) {
  if (options_.small_file_ahead <= 0 || node.attr.size > options_.small_file_limit) return;
  bool in_order;
  {
    MutexLock lock(mu_);
    auto& last = last_opened_[node.parent];
    in_order =
        !last.empty() && last < node.name && inodes_.NextChild(node.parent, last) == node.name;
    last = node.name;
  }
  if (!in_order) return;
  std::string name = node.name;
  for (int i = 0; i < options_.small_file_ahead; ++i) {
    auto next = inodes_.NextChild(node.parent, name);
    if (!next) break;
    name = *next;
    auto child = inodes_.Child(node.parent, name);
    if (!child || child->attr.dir || child->attr.local) continue;
    if (child->attr.size > options_.small_file_limit || child->valid_until <= Clock::now()) break;
    small_->Prefetch(child->key, child->attr.etag, child->attr.size);
  }
}

Fs<Node> MountFs::Resolve(Ino parent, const std::string& name) {
  if (!ValidName(name)) return Fail(name.size() > 1024 ? ENAMETOOLONG : ENOENT);
  auto dir = inodes_.Get(parent);
  if (!dir) return Fail(ENOENT);
  if (!dir->attr.dir) return Fail(ENOTDIR);
  if (auto child = inodes_.Child(parent, name)) {
    if (child->attr.local || child->valid_until > Clock::now()) return *child;
  }
  if (inodes_.KnownMissing(parent, name)) return Fail(ENOENT);
  std::string key = dir->key + name;
  if (auto found = ResolveByListing(parent, dir->key, name)) return *found;
  // A prefix below the name makes it a directory (which shadows an object of the same name).
  auto page = store_->List({.prefix = key + "/", .recursive = false, .max_keys = 1});
  if (!page.ok()) return Fail(page.status(), "list '" + store_->UrlFor(key + "/") + "'");
  if (!page->objects.empty() || !page->prefixes.empty()) {
    return inodes_.Upsert(parent, name, {.dir = true, .mtime = mounted_at_}, Expiry());
  }
  auto info = store_->Stat(key);
  if (!info.ok()) {
    if (info.status().code() == StatusCode::kNotFound) {
      return NotInStore(parent, name);
    }
    return Fail(info.status(), "stat '" + store_->UrlFor(key) + "'");
  }
  return inodes_.Upsert(
      parent, name,
      {.size = info->size, .mtime = info->modified.value_or(SystemTime{}), .etag = info->etag},
      Expiry());
}

// Caches the entries of one listing page under `parent` (valid for the TTL) and returns them,
// directories first: a name that is both an object and a prefix is the directory. Keys that
// are not file names ("dir/" markers, empty or dot segments) are left out.
std::vector<std::pair<std::string, Node>> MountFs::CacheListing(Ino parent,
                                                                const std::string& dir_key,
                                                                const storage::ListPage& page) {
  auto expiry = Expiry();
  std::vector<std::pair<std::string, Node>> out;
  std::set<std::string> dirs;
  for (const auto& p : page.prefixes) {
    std::string name = p.substr(dir_key.size(), p.size() - dir_key.size() - 1);
    if (!ValidName(name)) continue;
    dirs.insert(name);
    out.emplace_back(name,
                     inodes_.Upsert(parent, name, {.dir = true, .mtime = mounted_at_}, expiry));
  }
  for (const auto& o : page.objects) {
    std::string name = o.key.substr(dir_key.size());
    if (!ValidName(name) || dirs.contains(name)) continue;
    out.emplace_back(
        name,
        inodes_.Upsert(parent, name,
                       {.size = o.size, .mtime = o.modified.value_or(SystemTime{}), .etag = o.etag},
                       expiry));
  }
  return out;
}

// One ListObjectsV2 from just before `name` answers whether it is a file, a directory or
// missing, and caches the siblings that follow: programs that open many files of a directory
// in order (training loops, find, tar) then need no metadata request for the next ones.
// Returns nothing when the page ends before `name` could be decided.
std::optional<Fs<Node>> MountFs::ResolveByListing(Ino parent, const std::string& dir_key,
                                                  const std::string& name) {
  const std::string key = dir_key + name;
  auto page = store_->List({.prefix = dir_key,
                            .recursive = false,
                            .start_after = key.substr(0, key.size() - 1),
                            .max_keys = 500});
  if (!page.ok()) {
    if (page.status().code() == StatusCode::kNotFound) return std::nullopt;
    return Fs<Node>(Fail(page.status(), "list '" + store_->UrlFor(dir_key) + "'"));
  }
  std::string last;
  if (!page->objects.empty()) last = page->objects.back().key;
  if (!page->prefixes.empty()) last = std::max(last, page->prefixes.back());
  bool conclusive = page->next.empty() || last >= key + "/";
  std::optional<Node> found;
  for (auto& [child, node] : CacheListing(parent, dir_key, *page)) {
    if (child == name) found = node;
  }
  if (found) return Fs<Node>(*found);
  if (!conclusive) return std::nullopt;
  return NotInStore(parent, name);
}

// `name` is neither an object nor a prefix in the store. What exists only in this mount stays
// (a directory made here, a file being written, a directory holding either); anything else is
// gone, and known missing for the TTL.
Fs<Node> MountFs::NotInStore(Ino parent, const std::string& name) {
  inodes_.SetMissing(parent, name, Expiry());
  if (auto child = inodes_.Child(parent, name); child && child->kept_locally()) return *child;
  inodes_.Remove(parent, name);
  return Fail(ENOENT);
}

Fs<Attr> MountFs::Lookup(Ino parent, const std::string& name) {
  auto node = Resolve(parent, name);
  if (!node) return std::unexpected(node.error());
  inodes_.AddLookup(node->attr.ino);
  return ForKernel(node->attr);
}

void MountFs::Forget(Ino ino, uint64_t n) {
  if (inodes_.Forget(ino, n)) kernel_.Forget(ino);
}

Attr MountFs::ForKernel(Attr a) {
  if (!a.dir && !a.local) kernel_.OnAttrReply(a.ino, a.etag, a.size);
  return a;
}

Fs<Attr> MountFs::GetAttr(Ino ino) {
  auto a = StatNode(ino);
  if (!a) return a;
  return ForKernel(*a);
}

Fs<Attr> MountFs::StatNode(Ino ino) {
  auto node = inodes_.Get(ino);
  if (!node) return Fail(ENOENT);
  if (node->attr.local || node->attr.dir || node->valid_until > Clock::now() || ino == kRootIno) {
    return node->attr;
  }
  auto info = store_->Stat(node->key);
  if (!info.ok()) {
    if (info.status().code() == StatusCode::kNotFound) return Fail(ENOENT);
    return Fail(info.status(), "stat '" + store_->UrlFor(node->key) + "'");
  }
  Attr a = node->attr;
  a.size = info->size;
  a.etag = info->etag;
  a.mtime = info->modified.value_or(a.mtime);
  inodes_.SetAttr(ino, a, Expiry());
  return a;
}

Permissions MountFs::PermissionsOf(const Attr& attr) const {
  uint32_t mode = attr.dir ? (S_IFDIR | 0755) : (S_IFREG | 0644);
  if (options_.read_only) mode &= ~uint32_t{0222};
  return {.mode = mode, .uid = options_.uid, .gid = options_.gid};
}

Fs<Attr> MountFs::SetAttr(Ino ino, const AttrChange& change) {
  if (change.mode || change.uid || change.gid) {
    // Compared with what is shown now (refreshed after the TTL, as for a stat).
    auto shown = StatNode(ino);
    if (!shown) return std::unexpected(shown.error());
    const Permissions now = PermissionsOf(*shown);
    if ((change.mode && (*change.mode & 07777) != (now.mode & 07777)) ||
        (change.uid && *change.uid != now.uid) || (change.gid && *change.gid != now.gid)) {
      return Fail(EPERM);  // objects have no modes or owners to change
    }
  }
  auto node = inodes_.Get(ino);
  if (!node) return Fail(ENOENT);
  if (change.size) {
    if (node->attr.dir) return Fail(EISDIR);
    if (options_.read_only) return Fail(EROFS);
    // Only a file being written, and only to its current size (O_TRUNC of a new file).
    if (!node->attr.local || *change.size != node->attr.size) return Fail(EOPNOTSUPP);
  }
  return ForKernel(node->attr);  // times: accepted, not stored (objects keep their upload time)
}

Fs<uint64_t> MountFs::OpenDir(Ino ino) {
  auto node = inodes_.Get(ino);
  if (!node) return Fail(ENOENT);
  if (!node->attr.dir) return Fail(ENOTDIR);
  auto d = std::make_shared<DirHandle>();
  d->ino = ino;
  d->prefix = node->key;
  {
    MutexLock dl(d->mu);
    d->entries.push_back({".", node->attr});
    d->entries.push_back({"..", Attr{.ino = node->parent, .dir = true}});
  }
  uint64_t h = next_handle_++;
  MutexLock lock(mu_);
  dirs_[h] = d;
  return h;
}

// One ListObjectsV2 page (1000 keys): a 100,000-object prefix streams page by page.
Fs<void> MountFs::FetchPage(DirHandle& d) {
  d.mu.AssertHeld();  // ReadDir holds it across pages
  auto page =
      store_->List({.prefix = d.prefix, .recursive = false, .continuation = d.continuation});
  if (!page.ok()) return Fail(page.status(), "list '" + store_->UrlFor(d.prefix) + "'");
  for (auto& [name, node] : CacheListing(d.ino, d.prefix, *page)) {
    if (d.seen.insert(name).second) d.entries.push_back({name, node.attr});
  }
  d.continuation = page->next;
  if (d.continuation.empty()) d.listed_all = true;
  return {};
}

Fs<void> MountFs::ReadDir(uint64_t dh, uint64_t offset, const DirFiller& add) {
  std::shared_ptr<DirHandle> d;
  {
    MutexLock lock(mu_);
    auto it = dirs_.find(dh);
    if (it == dirs_.end()) return Fail(EBADF);
    d = it->second;
  }
  MutexLock lock(d->mu);
  for (uint64_t i = offset;; ++i) {
    while (i >= d->entries.size() && !d->listed_all) {
      if (auto r = FetchPage(*d); !r) return r;
      if (d->listed_all) {
        // Local entries (mkdir'ed directories, files being written) that the store lacks.
        for (const auto& name : inodes_.LocalChildren(d->ino)) {
          if (!d->seen.insert(name).second) continue;
          if (auto c = inodes_.Child(d->ino, name)) d->entries.push_back({name, c->attr});
        }
      }
    }
    if (i >= d->entries.size()) return {};
    if (!add(d->entries[i].first, d->entries[i].second, i + 1)) return {};
  }
}

void MountFs::ReleaseDir(uint64_t dh) {
  MutexLock lock(mu_);
  dirs_.erase(dh);
}

uint64_t ProcessOf(uint64_t tid) {
  if (tid == 0) return 0;
  std::ifstream status("/proc/" + std::to_string(tid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("Tgid:")) return std::strtoull(line.c_str() + 5, nullptr, 10);
  }
  return tid;  // gone already, or not Linux: the thread id is the best we have
}

Fs<OpenReply> MountFs::Open(Ino ino, int flags, uint64_t caller) {
  auto node = inodes_.Get(ino);
  if (!node) return Fail(ENOENT);
  if (node->attr.dir) return Fail(EISDIR);
  int acc = flags & O_ACCMODE;
  auto h = std::make_shared<FileHandle>();
  h->ino = ino;
  h->key = node->key;
  OpenReply reply;
  if (acc != O_RDONLY) h->owner = options_.process_of(caller);
  if (acc != O_RDONLY) {
    if (options_.read_only) return Fail(EROFS);
    if (node->attr.local) return Fail(EBUSY);  // one writer per new file
    // Replacing a whole object is allowed (O_TRUNC); changing part of one is not.
    if (!(flags & O_TRUNC) || acc == O_RDWR) return Fail(EPERM);
    auto w = store_->NewWriter(node->key, {});
    if (!w.ok()) return Fail(w.status(), "write '" + store_->UrlFor(node->key) + "'");
    {
      MutexLock hl(h->mu);
      h->writer = std::move(*w);
    }
    Attr a = node->attr;
    a.size = 0;
    a.local = true;
    a.etag.clear();
    inodes_.SetAttr(ino, a, Clock::time_point::max());
    kernel_.OnWriteOpen(ino);
  } else {
    if (node->attr.local) return Fail(EBUSY);  // not readable until it is committed
    auto attr = StatNode(ino);
    if (!attr) return std::unexpected(attr.error());
    h->etag = attr->etag;
    reply.caching = kernel_.OnReadOpen(ino, attr->etag, attr->size, &h->ticket);
    BlockCacheFill::Fetched to_page_cache;
    if (options_.read_only && cache_ && h->ticket.cached && attr->size <= push_limit_) {
      to_page_cache = [this, ino, ticket = h->ticket](uint64_t offset, std::string_view bytes) {
        for (uint64_t at = 0; at < bytes.size(); at += BlockCache::kBlock) {  // short holds
          if (!kernel_.MayStore(ino, ticket)) return;
          MutexLock lock(pusher_mu_);
          if (!pusher_) return;
          pusher_(ino, offset + at, bytes.substr(at, BlockCache::kBlock));
        }
      };
    }
    h->reader = std::make_unique<FileReader>(
        std::make_shared<PinnedObject>(store_, node->key, attr->etag, attr->size, cache_.get()),
        options_.prefetch, prefetch_budget_, fetch_pool_, std::move(to_page_cache));
    if (auto whole = small_->Take(node->key, attr->etag)) h->reader->UseWhole(std::move(*whole));
    ReadAheadSiblings(*node);
  }
  reply.fh = next_handle_++;
  MutexLock lock(mu_);
  files_[reply.fh] = h;
  return reply;
}

std::shared_ptr<MountFs::FileHandle> MountFs::FileFor(uint64_t fh) {
  MutexLock lock(mu_);
  auto it = files_.find(fh);
  return it == files_.end() ? nullptr : it->second;
}

Fs<std::string> MountFs::Read(uint64_t fh, uint64_t offset, size_t size) {
  std::shared_ptr<FileHandle> h = FileFor(fh);
  if (!h) return Fail(EBADF);
  if (!h->reader) return Fail(EBADF);
  auto data = h->reader->Read(offset, size);
  if (!data.ok()) {
    auto code = data.status().code();
    if (code == StatusCode::kFailedPrecondition || code == StatusCode::kNotFound) {
      // Replaced or deleted since the open: the next open asks the store again, not the cache.
      inodes_.Expire(h->ino, h->etag);
      Log(LogLevel::kWarn, "read '{}': {} (ESTALE)", store_->UrlFor(h->key),
          data.status().message());
      return Fail(ESTALE);
    }
    return Fail(data.status(), "read '" + store_->UrlFor(h->key) + "'");
  }
  // The kernel may have been given another version's size or dropped this one's pages since.
  if (!kernel_.OnRead(h->ino, h->ticket)) return Fail(ESTALE);
  return std::move(*data);
}
}  // namespace ferry::mount
