#pragma once
// Pieces of the local store shared between its files. Not part of the public interface.

#include <sys/stat.h>

#include <map>
#include <memory>
#include <string>

#include "storage/store.h"

namespace ferry::storage::local_internal {

std::string Etag(const struct stat& st);
ObjectInfo InfoFromStat(std::string key, const struct stat& st);
Result<std::unique_ptr<Writer>> NewLocalWriter(const std::string& key, const std::string& path,
                                               const WriteOptions& options);
Result<std::unique_ptr<PartWriter>> NewLocalPartWriter(const std::string& key,
                                                       const std::string& path,
                                                       const PartWriteOptions& options);
// A fresh temporary path next to `dir/name`: ".ferry-tmp.NAME.RANDOM", with NAME cut to 200
// bytes so the whole stays under NAME_MAX.
std::string TempPathFor(const std::string& dir, const std::string& name);

// Publishes a finished temporary file (the protocol in local_store.h): metadata xattrs, fsync,
// close, rename (or link for create-only writes) over `path`, fsync of `dir`. Always closes `fd`;
// on failure the temporary file is removed.
Result<ObjectInfo> PublishTempFile(int fd, const std::string& tmp, const std::string& path,
                                   const std::string& dir, const std::string& key,
                                   const WriteOptions& options);
std::map<std::string, std::string> ReadUserXattrs(const std::string& path);
Result<ListPage> ListLocal(const std::string& root, const ListOptions& options);

}  // namespace ferry::storage::local_internal
