#include "shard/dataset_ops.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "shard/reader.h"
#include "shard/scan.h"
#include "shard/tar.h"
#include "storage/url.h"

namespace ferry::shard {

namespace {

// The shards `args` name, relative to `dir` (the index's directory).
Result<std::vector<ShardToScan>> ShardsToIndex(storage::StoreRegistry& registry,
                                               const storage::OpenedUrl& dir,
                                               const std::vector<std::string>& args) {
  std::vector<ShardToScan> shards;
  auto add = [&](const std::string& key) {
    shards.push_back({.key = key, .name = key.substr(dir.key.size())});
  };
  for (const auto& a : args) {
    FERRY_ASSIGN_OR_RETURN(auto opened, registry.Open(a));
    if (opened.store->UrlFor("") != dir.store->UrlFor("") || !StartsWith(opened.key, dir.key)) {
      return InvalidArgument("shard '" + storage::RedactUrl(a) +
                             "' is not under the index's directory '" + dir.store->UrlFor(dir.key) +
                             "'");
    }
    if (!opened.url.trailing_slash && opened.key != dir.key) {
      add(opened.key);
      continue;
    }
    FERRY_RETURN_IF_ERROR(opened.store->ListAll({.prefix = storage::DirectoryPrefix(opened.key)},
                                                [&](const storage::ListPage& p) {
                                                  for (const auto& obj : p.objects) {
                                                    if (EndsWith(obj.key, ".tar")) add(obj.key);
                                                  }
                                                  return Status();
                                                }));
  }
  if (shards.empty()) return NotFound("no .tar shards found");
  return shards;
}

}  // namespace

Result<IndexedDataset> IndexShards(storage::StoreRegistry& registry,
                                   const std::vector<std::string>& shard_urls,
                                   const std::string& index_url, int jobs) {
  FERRY_ASSIGN_OR_RETURN(auto at, registry.Open(IndexUrlFor(index_url)));
  storage::OpenedUrl dir{.store = at.store, .key = ShardDirKey(at.key), .url = at.url};
  FERRY_ASSIGN_OR_RETURN(auto shards, ShardsToIndex(registry, dir, shard_urls));
  IndexedDataset out;
  for (auto& scanned : ScanShards(*dir.store, shards, jobs)) {
    if (!scanned.ok()) return std::move(scanned).status();
    out.index.shards.push_back(std::move(*scanned));
  }
  FERRY_RETURN_IF_ERROR(at.store->WriteAll(at.key, IndexToJson(out.index)).status());
  out.url = at.store->UrlFor(at.key);
  return out;
}

std::string CompareShard(const ShardInfo& s, const ShardInfo& got) {
  if (got.size != s.size) {
    return fmt::format("{}: {} bytes, the index says {}", s.name, got.size, s.size);
  }
  if (got.offsets != s.offsets) {
    return fmt::format("{}: {} samples (or their offsets) differ from the index's {}", s.name,
                       got.samples, s.samples);
  }
  if (!s.sample_crcs.empty() && got.sample_crcs != s.sample_crcs) {
    auto [mine, theirs] = std::mismatch(got.sample_crcs.begin(), got.sample_crcs.end(),
                                        s.sample_crcs.begin(), s.sample_crcs.end());
    size_t i = static_cast<size_t>(mine - got.sample_crcs.begin());
    return fmt::format("{}: sample {} at offset {}: CRC32C of its data does not match the index",
                       s.name, i, i < s.offsets.size() ? s.offsets[i] : got.size);
  }
  if (!s.crc32c.empty() && got.crc32c != s.crc32c) {
    return fmt::format("{}: CRC32C {}, the index says {}", s.name, got.crc32c, s.crc32c);
  }
  return "";
}

Status VerifyReport::status() const {
  if (problems.empty()) return Status();
  return Status(StatusCode::kDataLoss,
                fmt::format("{} of {} shard(s) do not match '{}'", problems.size(),
                            index.shards.size(), index_url));
}

Result<VerifyReport> VerifyDataset(storage::StoreRegistry& registry,
                                   const std::string& url_or_prefix, int jobs) {
  FERRY_ASSIGN_OR_RETURN(auto opened, OpenIndex(registry, url_or_prefix));
  VerifyReport report{.index_url = storage::RedactUrl(opened.url), .index = opened.index};
  std::vector<ShardToScan> shards;
  for (const auto& s : report.index.shards) shards.push_back({opened.ShardKey(s), s.name});
  auto scanned = ScanShards(*opened.at.store, shards, jobs);
  for (size_t i = 0; i < scanned.size(); ++i) {
    std::string problem = scanned[i].ok() ? CompareShard(report.index.shards[i], *scanned[i])
                                          : scanned[i].status().message();
    if (!problem.empty()) report.problems.push_back(std::move(problem));
  }
  std::sort(report.problems.begin(), report.problems.end());
  return report;
}

Result<std::string> ReadShardMember(storage::Store& store, const std::string& key,
                                    const std::string& url, const std::string& name) {
  const std::string shard = "shard '" + storage::RedactUrl(url) + "'";
  bool found = false, done = false;
  std::string data;
  TarParser parser({.on_entry =
                        [&](const TarEntry& e) {
                          found = e.name == name;
                          return Status();
                        },
                    .on_data =
                        [&](std::string_view d) {
                          if (found) data.append(d);
                          return Status();
                        },
                    .on_end_of_entry = [&]() -> Status {
                      if (!found) return Status();
                      done = true;
                      return Status(StatusCode::kCancelled, "found");  // stop reading here
                    }});
  Status read = store.Read(key, {}, [&](std::string_view chunk) { return parser.Feed(chunk); });
  if (done) return data;
  FERRY_RETURN_IF_ERROR(read.WithContext(shard));
  FERRY_RETURN_IF_ERROR(parser.Finish().WithContext(shard));
  return NotFound("no file '" + name + "' in " + shard);
}

}  // namespace ferry::shard
