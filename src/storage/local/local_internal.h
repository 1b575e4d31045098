#pragma once
// Pieces of the local store shared between its files. Not part of the public interface.

#include <sys/stat.h>

#include <list>
#include <map>
#include <memory>
#include <string>

#include "base/mutex.h"
#include "storage/store.h"

namespace ferry::storage::local_internal {

std::string Etag(const struct stat& st);
ObjectInfo InfoFromStat(std::string key, const struct stat& st);
// `direct_io` (here and below): LocalStoreOptions::direct_io (local_store.h). `publisher`
// takes the writer's file at Commit() when options.publish_later and the file is unnamed.
class Publisher;
Result<std::unique_ptr<Writer>> NewLocalWriter(const std::string& key, const std::string& path,
                                               const WriteOptions& options, bool direct_io,
                                               Publisher* publisher);
Result<std::unique_ptr<PartWriter>> NewLocalPartWriter(const std::string& key,
                                                       const std::string& path,
                                                       const PartWriteOptions& options,
                                                       bool direct_io);
// Removes the temporary file of an unfinished part write to `path` (Store::AbortPartWrite).
Status AbortLocalPartWrite(const std::string& path, std::string_view resume_token);
// Removes the marked temporary files of part writes to `path` last changed at or after `since`
// (Store::AbortPartWritesSince); returns how many.
Result<size_t> AbortLocalPartWritesSince(const std::string& path, SystemTime since);
// fsync of directory `dir`; filesystems that refuse it (some NFS clients) keep the names anyway.
Status FsyncDir(const std::string& dir);
// A fresh temporary path next to `dir/name`: ".ferry-tmp.NAME.R-C" (the marker in
// local_store.h), with NAME cut to 200 bytes so the whole stays under NAME_MAX.
std::string TempPathFor(const std::string& dir, const std::string& name);
// True for a directory entry TempPathFor could have made for a file called `name`.
bool IsTempNameFor(std::string_view entry, std::string_view name);

// Publishes a finished temporary file (the protocol in local_store.h): metadata xattrs, fsync,
// close, rename (or link for create-only writes) over `path`, fsync of `dir`. Always closes `fd`;
// on failure the temporary file is removed.
Result<ObjectInfo> PublishTempFile(int fd, const std::string& tmp, const std::string& path,
                                   const std::string& dir, const std::string& key,
                                   const WriteOptions& options);
// PublishTempFile in two steps, for files published later in batches (publisher.h):
// StampTempFile sets the metadata xattrs and returns the file's stat; NameTempFile, once the
// data is durable, gives it its name (link or rename, as above), closes `fd` and fsyncs `dir`
// if options.sync_directory. On failure NameTempFile closes `fd` and removes any temporary name.
Result<struct stat> StampTempFile(int fd, const std::string& path, const WriteOptions& options);
Result<ObjectInfo> NameTempFile(int fd, const std::string& tmp, const std::string& path,
                                const std::string& dir, const std::string& key,
                                const WriteOptions& options, const struct stat& st);
// Store::LinkLocalFile for the local store: `file` published as `key` (at `path`) by a hard
// link to a temporary name, then PublishTempFile.
Result<ObjectInfo> LinkLocalFile(const std::string& file, const std::string& key,
                                 const std::string& path, const WriteOptions& options);
std::map<std::string, std::string> ReadUserXattrs(const std::string& path);

// Where unfinished listings stopped, so the next page continues the walk instead of walking the
// tree again from its root (each page would re-read every directory on its way: quadratic in
// the size of one big directory). Keyed by the list options and ListPage::next; a miss (evicted,
// other process) falls back to a fresh walk that skips what sorts before the continuation.
// Holds at most kMax walks. Thread-safe.
struct WalkState;
class ListCursors final {
 public:
  static constexpr size_t kMax = 32;
  ListCursors();
  ~ListCursors();
  std::unique_ptr<WalkState> Take(const std::string& id);
  void Put(std::string id, std::unique_ptr<WalkState> state);

 private:
  Mutex mu_;
  std::list<std::pair<std::string, std::unique_ptr<WalkState>>> walks_
      GUARDED_BY(mu_);  // newest first
};

Result<ListPage> ListLocal(const std::string& root, const ListOptions& options,
                           ListCursors& cursors);

}  // namespace ferry::storage::local_internal
