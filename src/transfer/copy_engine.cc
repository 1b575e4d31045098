#include "transfer/copy_engine.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

#include "base/log.h"
#include "base/strings.h"
#include "transfer/copy_internal.h"
#include "transfer/glob_filter.h"
#include "transfer/journal.h"

namespace ferry::transfer {

using internal::Item;
using internal::Outcome;
using internal::RunContext;

uint64_t ChoosePartSize(uint64_t object_size, uint64_t requested) {
  constexpr uint64_t kMiB = 1ull << 20;
  uint64_t part = requested ? requested : 8 * kMiB;
  part = std::max<uint64_t>(part, 5 * kMiB);  // S3's minimum part size
  uint64_t needed = (object_size + 9999) / 10000;
  part = std::max(part, needed);
  return (part + kMiB - 1) / kMiB * kMiB;
}

namespace {

bool IsDirectoryTarget(const storage::OpenedUrl& u) {
  if (u.key.empty() || u.url.trailing_slash) return true;
  if (u.url.scheme != storage::Scheme::kLocal) return false;
  std::error_code ec;
  return std::filesystem::is_directory("/" + u.key, ec);
}

// Lists every object under `prefix` into `out` (key -> info).
Status ListInto(storage::Store& store, const std::string& prefix,
                const std::function<void(storage::ObjectInfo&&)>& out) {
  return store.ListAll({.prefix = prefix, .recursive = true}, [&](const storage::ListPage& page) {
    for (auto o : page.objects) out(std::move(o));
    return Status();
  });
}

Result<std::vector<Item>> Plan(const storage::OpenedUrl& src, const storage::OpenedUrl& dst,
                               const CopyOptions& options) {
  std::vector<Item> items;
  bool src_is_prefix = src.key.empty() || src.url.trailing_slash;
  std::optional<storage::ObjectInfo> single;
  if (!src_is_prefix) {
    auto info = src.store->Stat(src.key);
    if (info.ok()) {
      single = std::move(*info);
    } else if (info.status().code() != StatusCode::kNotFound) {
      return info.status();
    } else if (!options.recursive) {
      // Not an object: a directory/prefix needs -r; otherwise it is simply missing.
      auto probe = src.store->List({.prefix = storage::DirectoryPrefix(src.key), .max_keys = 1});
      if (probe.ok() && !probe->objects.empty()) {
        return InvalidArgument("cp: '" + src.store->UrlFor(src.key) +
                               "' is a directory or prefix; use -r to copy what is under it");
      }
      return info.status();
    }
  }
  if (single) {
    std::string dst_key = IsDirectoryTarget(dst)
                              ? storage::DirectoryPrefix(dst.key) + storage::KeyBaseName(src.key)
                              : dst.key;
    items.push_back({.src_key = src.key, .dst_key = dst_key, .src = std::move(*single)});
  } else {
    if (!options.recursive) {
      return InvalidArgument("cp: '" + src.store->UrlFor(src.key) +
                             "' is a directory or prefix; use -r to copy what is under it");
    }
    std::string src_prefix = storage::DirectoryPrefix(src.key);
    std::string dst_prefix = storage::DirectoryPrefix(dst.key);
    GlobFilter filter(options.include, options.exclude);
    auto newest_allowed = std::chrono::system_clock::now() - options.min_age;
    FERRY_RETURN_IF_ERROR(ListInto(*src.store, src_prefix, [&](storage::ObjectInfo&& o) {
      std::string rel = o.key.substr(src_prefix.size());
      if (rel.empty() || !filter.Accepts(rel)) return;
      if (options.min_age.count() > 0 && o.modified && *o.modified > newest_allowed) return;
      // Zero-byte "directory markers" some tools create cannot become local files.
      if (rel.back() == '/' && dst.url.scheme == storage::Scheme::kLocal) return;
      items.push_back({.src_key = o.key, .dst_key = dst_prefix + rel, .src = std::move(o)});
    }));
    if (items.empty()) {
      auto any = src.store->List({.prefix = src_prefix, .max_keys = 1});
      if (any.ok() && any->objects.empty() && any->prefixes.empty()) {
        return NotFound("cp: nothing at '" + src.store->UrlFor(src_prefix) + "'");
      }
    }
  }
  // What the destination already has, in one listing instead of one request per object.
  if (options.skip_unchanged && !items.empty()) {
    std::map<std::string, storage::ObjectInfo> existing;
    if (items.size() == 1) {
      auto info = dst.store->Stat(items[0].dst_key);
      if (info.ok()) existing[items[0].dst_key] = *info;
    } else {
      Status s =
          ListInto(*dst.store, storage::DirectoryPrefix(dst.key), [&](storage::ObjectInfo&& o) {
            std::string k = o.key;
            existing.emplace(std::move(k), std::move(o));
          });
      if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
    }
    for (auto& it : items) {
      if (auto e = existing.find(it.dst_key); e != existing.end()) it.dst = e->second;
    }
  }
  return items;
}

}  // namespace

CopyResult RunCopy(const storage::OpenedUrl& src, const storage::OpenedUrl& dst,
                   const CopyOptions& options, ProgressCounters& counters) {
  auto start = std::chrono::steady_clock::now();
  CopyResult result;
  if (!dst.store->capabilities().writable) {
    result.status = Unimplemented("cp: cannot write to '" + dst.store->UrlFor(dst.key) +
                                  "': http(s) URLs are read-only");
    return result;
  }
  auto planned = Plan(src, dst, options);
  if (!planned.ok()) {
    result.status = planned.status();
    return result;
  }
  std::vector<Item>& items = *planned;
  for (const auto& it : items) {
    counters.bytes_total += it.src.size;
    ++counters.files_total;
    if (it.src_key == it.dst_key && src.store == dst.store) {
      result.status = InvalidArgument("cp: source and destination are the same object '" +
                                      src.store->UrlFor(it.src_key) + "'");
      return result;
    }
  }

  bool dst_local = dst.url.scheme == storage::Scheme::kLocal;
  int part_threads = options.part_concurrency > 0 ? options.part_concurrency : (dst_local ? 8 : 16);
  ThreadPool part_pool(part_threads);
  ByteSemaphore memory(options.max_memory);
  RateLimiter limiter(options.bwlimit);
  RunContext ctx{.src_store = src.store,
                 .dst_store = dst.store,
                 .options = options,
                 .counters = counters,
                 .part_pool = part_pool,
                 .memory = memory,
                 .limiter = limiter,
                 .state_dir = Journal::StateDir(options.state_dir),
                 .src_local = src.url.scheme == storage::Scheme::kLocal,
                 .dst_local = dst_local};
  Status first_error;
  {
    ThreadPool file_pool(std::min<int>(options.transfers, static_cast<int>(items.size())));
    for (const auto& item : items) {
      file_pool.Submit([&] {
        auto r = internal::CopyItem(ctx, item);
        std::lock_guard lock(ctx.mu);
        ++counters.files_done;
        if (!r.ok()) {
          ++counters.files_failed;
          ++ctx.report.files_failed;
          if (first_error.ok() || first_error.code() == StatusCode::kCancelled)
            first_error = r.status();
          if (ctx.report.errors.size() < 20 && r.status().code() != StatusCode::kCancelled) {
            ctx.report.errors.push_back(r.status().message());
          }
        } else if (*r == Outcome::kLeftOut) {
          // Recorded with its reason in report.left_out by CopyItem; neither copied nor failed.
        } else if (*r == Outcome::kSkipped) {
          ++counters.files_skipped;
          ++ctx.report.files_skipped;
          ctx.report.bytes_skipped += item.src.size;
          counters.bytes_done += item.src.size;
        } else {
          ++ctx.report.files_copied;
          ctx.report.bytes_copied += item.src.size;
        }
        if (r.ok() && *r != Outcome::kLeftOut && options.report_in_sync) {
          ctx.report.in_sync.push_back(item.src);
          ctx.report.in_sync.back().key = item.src_key;
        }
      });
    }
    file_pool.WaitIdle();
  }
  part_pool.WaitIdle();
  CopyReport& rep = ctx.report;
  rep.files_total = items.size();
  rep.bytes_total = counters.bytes_total;
  rep.bytes_resumed = ctx.bytes_resumed;
  rep.bytes_copied -= std::min(rep.bytes_copied, rep.bytes_resumed);
  rep.verified = ctx.verified;
  rep.unverified = ctx.unverified;
  rep.server_side = ctx.server_side;
  rep.retries = src.store->retry_count() + (dst.store != src.store ? dst.store->retry_count() : 0);
  rep.peak_buffer_bytes = memory.peak();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.report = rep;
  result.status = first_error;
  if (!first_error.ok() && rep.files_failed > 1) {
    result.status =
        Status(first_error.code(),
               std::to_string(rep.files_failed) + " of " + std::to_string(rep.files_total) +
                   " objects failed; first: " + first_error.message(),
               first_error.detail());
  }
  return result;
}

}  // namespace ferry::transfer
