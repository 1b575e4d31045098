// The write path of the mount core (fs.h): new files streamed as multipart uploads and
// committed at the opener's close or fsync, and the namespace changes (unlink, mkdir, rmdir,
// rename) with the errnos docs/semantics/fuse.md lists.
#include <fcntl.h>

#include "mount/fs.h"
#include "mount/fs_internal.h"
#include "storage/url.h"

namespace ferry::mount {

using namespace fs_internal;  // NOLINT

Fs<std::pair<Attr, uint64_t>> MountFs::Create(Ino parent, const std::string& name, int flags,
                                              uint64_t caller) {
  (void)flags;
  if (options_.read_only) return Fail(EROFS);
  if (!ValidName(name)) return Fail(EINVAL);
  auto dir = inodes_.Get(parent);
  if (!dir) return Fail(ENOENT);
  if (!dir->attr.dir) return Fail(ENOTDIR);
  auto existing = Resolve(parent, name);
  if (existing) return Fail(existing->attr.dir ? EISDIR : EEXIST);
  // Only a name known not to exist: creating after a failed lookup could replace an object.
  if (existing.error() != ENOENT) return std::unexpected(existing.error());
  std::string key = dir->key + name;
  auto w = store_->NewWriter(key, {});
  if (!w.ok()) return Fail(w.status(), "write '" + store_->UrlFor(key) + "'");
  Node n = inodes_.Upsert(parent, name, {.mtime = std::chrono::system_clock::now(), .local = true},
                          Clock::time_point::max());
  inodes_.AddLookup(n.attr.ino);
  kernel_.OnWriteOpen(n.attr.ino);  // the inode number may be an earlier object's
  auto h = std::make_shared<FileHandle>();
  h->ino = n.attr.ino;
  h->key = key;
  h->owner = options_.process_of(caller);
  {
    MutexLock hl(h->mu);
    h->writer = std::move(*w);
  }
  uint64_t fh = next_handle_++;
  MutexLock lock(mu_);
  files_[fh] = h;
  return std::pair{n.attr, fh};
}

Fs<size_t> MountFs::Write(uint64_t fh, uint64_t offset, std::string_view data) {
  std::shared_ptr<FileHandle> h = FileFor(fh);
  if (!h) return Fail(EBADF);
  MutexLock lock(h->mu);
  if (!h->writer && !h->committed) return Fail(EBADF);
  if (h->committed) return Fail(EPERM);  // complete after fsync: it cannot grow any more
  if (h->error) return Fail(h->error);
  if (offset != h->written) return Fail(EOPNOTSUPP);  // sequential writes only
  Status s = h->writer->Append(data);
  if (!s.ok()) {
    h->error = ToErrno(s);
    return Fail(s, "write '" + store_->UrlFor(h->key) + "'");
  }
  h->written += data.size();
  if (auto n = inodes_.Get(h->ino)) {
    Attr a = n->attr;
    a.size = h->written;
    a.mtime = std::chrono::system_clock::now();
    inodes_.SetAttr(h->ino, a, Clock::time_point::max());
  }
  return data.size();
}

Fs<void> MountFs::Commit(FileHandle& h) {
  MutexLock lock(h.mu);
  if (!h.writer || h.committed) return {};
  if (h.error) {
    h.writer->Abort();
    h.writer.reset();
    if (auto n = inodes_.Get(h.ino)) inodes_.Remove(n->parent, n->name);
    return Fail(h.error);
  }
  auto info = h.writer->Commit();
  h.writer.reset();
  h.committed = true;
  auto n = inodes_.Get(h.ino);
  if (!info.ok()) {
    // Not durable: the object does not exist (multipart aborted); the name goes away.
    if (n) inodes_.Remove(n->parent, n->name);
    return Fail(info.status(), "commit '" + store_->UrlFor(h.key) + "'");
  }
  if (n) {
    Attr a = n->attr;
    a.local = false;
    a.size = info->size;
    a.etag = info->etag;
    if (info->modified) a.mtime = *info->modified;
    inodes_.SetAttr(h.ino, a, Expiry());
    // Its directories exist in the store now.
    for (Ino p = n->parent; p != kRootIno;) {
      auto pn = inodes_.Get(p);
      if (!pn) break;
      Attr pa = pn->attr;
      pa.local = false;
      inodes_.SetAttr(p, pa, Expiry());
      p = pn->parent;
    }
  }
  return {};
}

// close() of any descriptor of the file. A shell's `> file` opens, dup2()s and closes the
// original descriptor before writing, so a flush before any data is not the end: an empty
// handle commits at release (or fsync); one with data commits here, and close() reports it.
// Closes by other processes (children that inherited the descriptor and exec()ed) do nothing.
Fs<void> MountFs::Flush(uint64_t fh, uint64_t caller) {
  std::shared_ptr<FileHandle> h = FileFor(fh);
  if (!h) return Fail(EBADF);
  {
    MutexLock lock(h->mu);
    if (h->writer && h->written == 0 && !h->error) return {};
    if (h->writer && h->owner != 0 && caller != 0 && options_.process_of(caller) != h->owner) {
      return {};
    }
  }
  return Commit(*h);
}

Fs<void> MountFs::Fsync(uint64_t fh) {
  std::shared_ptr<FileHandle> h = FileFor(fh);
  if (!h) return Fail(EBADF);
  return Commit(*h);
}

bool MountFs::Release(uint64_t fh) {
  std::shared_ptr<FileHandle> h;
  {
    MutexLock lock(mu_);
    auto it = files_.find(fh);
    if (it == files_.end()) return false;
    h = it->second;
    files_.erase(it);
  }
  (void)Commit(*h);  // a writer with no flush (the process died): commit what was written
  if (!h->reader) return false;
  h->reader->StopBackground();  // no page cache store after the descriptor is gone
  return kernel_.OnRelease(h->ino, h->ticket);
}

Fs<void> MountFs::Unlink(Ino parent, const std::string& name) {
  if (options_.read_only) return Fail(EROFS);
  auto node = Resolve(parent, name);
  if (!node) return std::unexpected(node.error());
  if (node->attr.dir) return Fail(EISDIR);
  if (node->attr.local) return Fail(EBUSY);
  Status s = store_->Delete(node->key);
  if (!s.ok() && s.code() != StatusCode::kNotFound)
    return Fail(s, "delete '" + store_->UrlFor(node->key) + "'");
  inodes_.Remove(parent, name);
  inodes_.SetMissing(parent, name, Expiry());
  return {};
}

Fs<Attr> MountFs::Mkdir(Ino parent, const std::string& name) {
  if (options_.read_only) return Fail(EROFS);
  if (!ValidName(name)) return Fail(EINVAL);
  auto existing = Resolve(parent, name);
  if (existing) return Fail(EEXIST);
  if (existing.error() != ENOENT) return std::unexpected(existing.error());  // ENOTDIR, EIO
  // A local directory: S3 has none; it becomes real when a file is written below it.
  Node n = inodes_.Upsert(parent, name,
                          {.dir = true, .mtime = std::chrono::system_clock::now(), .local = true},
                          Clock::time_point::max());
  inodes_.AddLookup(n.attr.ino);
  return n.attr;
}

Fs<void> MountFs::Rmdir(Ino parent, const std::string& name) {
  if (options_.read_only) return Fail(EROFS);
  auto node = Resolve(parent, name);
  if (!node) return std::unexpected(node.error());
  if (!node->attr.dir) return Fail(ENOTDIR);
  auto page = store_->List({.prefix = node->key, .recursive = true, .max_keys = 2});
  if (!page.ok()) return Fail(page.status(), "list '" + store_->UrlFor(node->key) + "'");
  for (const auto& o : page->objects) {
    if (o.key != node->key) return Fail(ENOTEMPTY);
  }
  if (!inodes_.LocalChildren(node->attr.ino).empty()) return Fail(ENOTEMPTY);
  for (const auto& o : page->objects) (void)store_->Delete(o.key);  // a "dir/" marker object
  inodes_.Remove(parent, name);
  inodes_.SetMissing(parent, name, Expiry());
  return {};
}

Fs<void> MountFs::Rename(Ino parent, const std::string& name, Ino, const std::string&) {
  if (options_.read_only) return Fail(EROFS);
  auto node = Resolve(parent, name);
  if (!node) return std::unexpected(node.error());
  // S3 has no rename. Directories: refused. Files: EXDEV, so mv copies and then deletes.
  return Fail(node->attr.dir ? EOPNOTSUPP : EXDEV);
}

}  // namespace ferry::mount
