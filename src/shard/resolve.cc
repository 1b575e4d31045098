#include "shard/resolve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "base/log.h"
#include "base/strings.h"
#include "shard/index.h"
#include "shard/reader.h"
#include "shard/scan.h"
#include "storage/url.h"

namespace ferry::shard {

namespace {

// 64-bit FNV-1a: a stable name for a list of shard URLs (collisions are caught: the cached index
// records its base and shard names, which must match).
uint64_t Fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// What identifies a shard's version: size and ETag, else modification time.
std::string StatLine(const storage::ObjectInfo& info) {
  std::string tag = info.etag;
  if (tag.empty() && info.modified) {
    tag = std::to_string(info.modified->time_since_epoch().count());
  }
  return fmt::format("{} {}\n", info.size, tag);
}

struct Shards {
  std::shared_ptr<storage::Store> store;
  std::vector<std::string> keys;  // in the order given (a listing: sorted)
};

// The shards directly under a listed directory, and the Ferry indexes directly in it.
Status ListDirectory(const storage::OpenedUrl& dir, Shards* shards,
                     std::vector<std::string>* indexes) {
  std::string prefix = storage::DirectoryPrefix(dir.key);
  shards->store = dir.store;
  FERRY_RETURN_IF_ERROR(dir.store->ListAll({.prefix = prefix}, [&](const storage::ListPage& page) {
    for (const auto& obj : page.objects) {
      std::string_view rest = std::string_view(obj.key).substr(prefix.size());
      if (EndsWith(obj.key, ".tar")) shards->keys.push_back(obj.key);
      if (EndsWith(rest, ".index.json") && rest.find('/') == std::string_view::npos) {
        indexes->push_back(obj.key);
      }
    }
    return Status();
  }));
  std::sort(shards->keys.begin(), shards->keys.end());
  std::sort(indexes->begin(), indexes->end());
  return Status();
}

Result<ResolvedDataset> IndexNow(const Shards& shards, const ResolveOptions& options,
                                 storage::StoreRegistry& registry) {
  // The shards' common directory is the index's base; names are relative to it.
  std::string base = shards.keys.front();
  for (const auto& k : shards.keys) {
    size_t n = 0;
    while (n < base.size() && n < k.size() && base[n] == k[n]) ++n;
    base.resize(n);
  }
  base.resize(base.rfind('/') == std::string::npos ? 0 : base.rfind('/') + 1);
  std::string base_url = shards.store->UrlFor(base);

  std::string identity = base_url;
  for (const auto& k : shards.keys) identity += "\n" + k.substr(base.size());
  std::string dir = options.cache_dir.empty() ? DefaultIndexCacheDir() : options.cache_dir;
  if (!dir.empty() && dir.back() != '/') dir += '/';
  std::string stem = fmt::format("{}{:016x}", dir, Fnv1a(identity));
  FERRY_ASSIGN_OR_RETURN(auto cache, registry.Open(stem + ".index.json"));
  std::string stat_key = cache.key.substr(0, cache.key.size() - 11) + ".stat";

  std::string stats = identity + "\n";
  for (const auto& k : shards.keys) {
    FERRY_ASSIGN_OR_RETURN(auto info, shards.store->Stat(k));
    stats += StatLine(info);
  }
  ResolvedDataset out{.index_url = cache.store->UrlFor(cache.key), .shards = shards.keys.size()};
  auto recorded = cache.store->ReadAll(stat_key);
  if (recorded.ok() && *recorded == stats && cache.store->Stat(cache.key).ok()) {
    out.cached = true;
    return out;
  }
  Log(LogLevel::kInfo, "indexing {} shard(s) under {} (cached in {})", shards.keys.size(),
      storage::RedactUrl(base_url), dir);
  std::vector<ShardToScan> todo;
  for (const auto& k : shards.keys) todo.push_back({.key = k, .name = k.substr(base.size())});
  DatasetIndex index{.base = base_url};
  for (auto& scanned : ScanShards(*shards.store, todo, options.jobs)) {
    if (!scanned.ok()) return std::move(scanned).status();
    index.shards.push_back(std::move(*scanned));
  }
  // The index first, then the record that makes it valid: a crash between them re-scans.
  FERRY_RETURN_IF_ERROR(cache.store->WriteAll(cache.key, IndexToJson(index)).status());
  FERRY_RETURN_IF_ERROR(cache.store->WriteAll(stat_key, stats).status());
  out.scanned = true;
  return out;
}

}  // namespace

std::string DefaultIndexCacheDir() {
  if (const char* d = std::getenv("FERRY_SHARD_INDEX_CACHE"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    return std::string(x) + "/ferry/shard-index";
  }
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/ferry/shard-index";
}

Result<ResolvedDataset> ResolveDataset(storage::StoreRegistry& registry,
                                       const std::vector<std::string>& inputs,
                                       const ResolveOptions& options) {
  if (inputs.empty())
    return InvalidArgument("no dataset given: pass an index, a directory or shards");
  Shards shards;
  if (inputs.size() == 1 && !EndsWith(inputs[0], ".tar")) {
    const std::string& url = inputs[0];
    if (EndsWith(url, ".json")) return ResolvedDataset{.index_url = url};
    FERRY_ASSIGN_OR_RETURN(auto opened, registry.Open(url));
    bool directory =
        opened.url.trailing_slash || opened.key.empty() || opened.store->IsDirectory(opened.key);
    Status index_status;
    if (!directory) {
      // The prefix `ferry shard pack` was given, as before; else a directory without its '/'.
      std::string index_url = IndexUrlFor(url);
      FERRY_ASSIGN_OR_RETURN(auto at, registry.Open(index_url));
      index_status = at.store->Stat(at.key).status();
      if (index_status.ok()) return ResolvedDataset{.index_url = index_url};
      if (index_status.code() != StatusCode::kNotFound) return index_status;
    }
    std::vector<std::string> indexes;
    FERRY_RETURN_IF_ERROR(ListDirectory(opened, &shards, &indexes));
    std::string shown = storage::RedactUrl(url);
    if (indexes.size() == 1) {
      return ResolvedDataset{.index_url = opened.store->UrlFor(indexes[0])};
    }
    if (indexes.size() > 1) {
      std::string names;
      for (const auto& k : indexes) names += (names.empty() ? "" : ", ") + storage::KeyBaseName(k);
      return InvalidArgument(fmt::format("'{}' holds {} dataset indexes ({}): pass one of them",
                                         shown, indexes.size(), names));
    }
    if (shards.keys.empty()) {
      if (!directory) return index_status;  // neither a dataset prefix nor a directory
      return NotFound(
          fmt::format("'{}' holds no Ferry index (*.index.json) and no .tar shards", shown));
    }
  } else {
    for (const auto& url : inputs) {
      if (!EndsWith(url, ".tar")) {
        return InvalidArgument(
            fmt::format("'{}' is not a .tar shard: a list of shards holds .tar URLs only",
                        storage::RedactUrl(url)));
      }
      FERRY_ASSIGN_OR_RETURN(auto opened, registry.Open(url));
      if (shards.store && shards.store->UrlFor("") != opened.store->UrlFor("")) {
        return InvalidArgument(
            fmt::format("'{}' is in another store than '{}': the shards of one "
                        "dataset live in one bucket or file system",
                        storage::RedactUrl(url), storage::RedactUrl(inputs[0])));
      }
      shards.store = opened.store;
      shards.keys.push_back(opened.key);
    }
  }
  return IndexNow(shards, options, registry);
}

}  // namespace ferry::shard
