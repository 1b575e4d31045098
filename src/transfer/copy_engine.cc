#include "transfer/copy_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "base/log.h"
#include "base/strings.h"
#include "transfer/copy_internal.h"
#include "transfer/glob_filter.h"
#include "transfer/journal.h"
#include "transfer/stall_watch.h"

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

// A failure every other object of the copy would meet too: the bucket does not exist, the
// credentials are refused, the server denies access (HTTP 403; a local file that cannot be read
// is EACCES without an HTTP status and fails only itself). The copy stops at the first one
// instead of failing each of thousands of objects in turn.
bool StopsTheCopy(const Status& s) {
  return s.code() == StatusCode::kUnauthenticated || s.detail().http_status == 403 ||
         s.detail().remote_code == "NoSuchBucket";
}

// Who a stalled copy waits on, for StallWatch's notice: the endpoints of its remote stores
// ("'http://127.0.0.1:7480'"), else its local paths (a hung NFS mount).
std::string Endpoints(const storage::OpenedUrl& src, const storage::OpenedUrl& dst) {
  std::vector<std::string> remote, local;
  for (const storage::OpenedUrl* u : {&src, &dst}) {
    storage::StoreDescription d = u->store->Describe();
    auto& names = d.kind == "local" || d.kind == "memory" ? local : remote;
    std::string name = "'" + (&names == &local ? u->store->UrlFor(u->key) : d.endpoint) + "'";
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  const auto& names = remote.empty() ? local : remote;
  return names.size() == 1 ? names[0] : names[0] + " or " + names[1];
}

// A destination that receives the source's base name: a trailing '/', the store's root, or
// a directory the store has (local files).
bool IsDirectoryTarget(const storage::OpenedUrl& u) {
  if (u.key.empty() || u.url.trailing_slash) return true;
  return u.store->IsDirectory(u.key);
}

// What the destination holds, for keys asked in increasing order, read one listing page at a
// time (a streaming merge join with the source listing: both are in byte order of keys).
class DestinationCursor final {
 public:
  DestinationCursor(storage::Store& store, std::string prefix) : store_(store) {
    opt_.prefix = std::move(prefix);
  }

  Result<std::optional<storage::ObjectInfo>> Find(const std::string& key) {
    while (true) {
      while (i_ < page_.objects.size() && page_.objects[i_].key < key) ++i_;
      if (i_ < page_.objects.size()) {
        if (page_.objects[i_].key == key) return std::optional(page_.objects[i_]);
        return std::optional<storage::ObjectInfo>();
      }
      if (ended_ || (started_ && page_.next.empty())) {
        ended_ = true;
        return std::optional<storage::ObjectInfo>();
      }
      if (started_) opt_.continuation = page_.next;
      started_ = true;
      auto page = store_.List(opt_);
      if (!page.ok()) {
        if (page.status().code() != StatusCode::kNotFound) return page.status();
        ended_ = true;  // no bucket or directory yet: nothing there
        return std::optional<storage::ObjectInfo>();
      }
      page_ = std::move(*page);
      i_ = 0;
    }
  }

 private:
  storage::Store& store_;
  storage::ListOptions opt_;
  storage::ListPage page_;
  size_t i_ = 0;
  bool started_ = false, ended_ = false;
};

// Feeds items to the file pool, keeping at most `window` of them queued so a huge listing never
// sits in memory.
class Scheduler final {
 public:
  Scheduler(ThreadPool& pool, int window) : pool_(pool), window_(window) {}

  void Submit(Item item, std::function<void(const Item&)> work) {
    {
      MutexLock lock(mu_);
      cv_.Wait(lock, [&]() REQUIRES(mu_) { return queued_ < window_; });
      ++queued_;
    }
    pool_.Submit([this, item = std::move(item), work = std::move(work)] {
      work(item);
      MutexLock lock(mu_);
      --queued_;
      cv_.NotifyAll();
    });
  }

 private:
  ThreadPool& pool_;
  const int window_;
  Mutex mu_;
  CondVar cv_;
  int queued_ GUARDED_BY(mu_) = 0;
};

using SubmitFn = std::function<void(Item)>;

// A single object (SRC names one): its destination key and what the destination has there.
Result<bool> PlanSingle(const storage::OpenedUrl& src, const storage::OpenedUrl& dst,
                        const CopyOptions& options, const SubmitFn& submit) {
  auto info = src.store->Stat(src.key);
  if (!info.ok()) {
    if (info.status().code() != StatusCode::kNotFound) return info.status();
    if (options.recursive) return false;  // a prefix, then
    // Not an object: a directory/prefix needs -r; otherwise it is simply missing.
    auto probe = src.store->List({.prefix = storage::DirectoryPrefix(src.key), .max_keys = 1});
    if (probe.ok() && (!probe->objects.empty() || !probe->skipped.empty())) {
      return InvalidArgument("cp: '" + src.store->UrlFor(src.key) +
                             "' is a directory or prefix; use -r to copy what is under it");
    }
    return info.status();
  }
  std::string dst_key = IsDirectoryTarget(dst)
                            ? storage::DirectoryPrefix(dst.key) + storage::KeyBaseName(src.key)
                            : dst.key;
  if (dst_key == src.key && src.store == dst.store) {
    return InvalidArgument("cp: source and destination are the same object '" +
                           src.store->UrlFor(src.key) + "'");
  }
  Item item{.src_key = src.key, .dst_key = dst_key, .src = std::move(*info)};
  if (options.skip_unchanged) {
    auto existing = dst.store->Stat(dst_key);
    if (existing.ok()) item.dst = std::move(*existing);
  }
  submit(std::move(item));
  return true;
}

// A tree: streams the source listing, joined with the destination listing, into `submit`.
Status PlanTree(const storage::OpenedUrl& src, const storage::OpenedUrl& dst,
                const CopyOptions& options, RunContext& ctx, const SubmitFn& submit) {
  if (!options.recursive) {
    return InvalidArgument("cp: '" + src.store->UrlFor(src.key) +
                           "' is a directory or prefix; use -r to copy what is under it");
  }
  std::string src_prefix = storage::DirectoryPrefix(src.key);
  std::string dst_prefix = storage::DirectoryPrefix(dst.key);
  // Objects written under the source would be listed again: the copy would never end.
  if (src.store == dst.store && StartsWith(dst_prefix, src_prefix)) {
    return InvalidArgument("cp: destination '" + dst.store->UrlFor(dst_prefix) +
                           "' is inside the source '" + src.store->UrlFor(src_prefix) + "'");
  }
  GlobFilter filter(options.include, options.exclude);
  auto newest_allowed = std::chrono::system_clock::now() - options.min_age;
  DestinationCursor existing(*dst.store, dst_prefix);
  bool any = false;
  ctx.counters.listing_done = false;
  storage::ListOptions lo{
      .prefix = src_prefix, .recursive = true, .follow_symlinks = options.follow_symlinks};
  Status s = src.store->ListAll(lo, [&](const storage::ListPage& page) -> Status {
    if (ctx.cancelled()) return Status(StatusCode::kCancelled, "copy interrupted");
    if (ctx.stop) return Status(StatusCode::kCancelled, "copy stopped at a permanent error");
    for (const auto& e : page.skipped) {
      Log(storage::SkipIsWarning(e.kind) ? LogLevel::kWarn : LogLevel::kInfo, "not copying {}{}",
          storage::DescribeSkipped(*src.store, e),
          e.kind == storage::SkipKind::kLinkOutsideTree ? " (ferry cp -L follows links)" : "");
      MutexLock lock(ctx.mu);
      if (ctx.report.left_out.size() < CopyReport::kMaxLeftOut) ctx.report.left_out.push_back(e);
      ++ctx.report.left_out_count;
      any = true;
    }
    for (const auto& o : page.objects) {
      any = true;
      std::string rel = o.key.substr(src_prefix.size());
      if (rel.empty() || !filter.Accepts(rel)) continue;
      if (options.min_age.count() > 0 && o.modified && *o.modified > newest_allowed) continue;
      // Zero-byte "directory markers" some tools create cannot become local files.
      if (rel.back() == '/' && !ctx.dst_caps.arbitrary_keys) continue;
      Item item{.src_key = o.key, .dst_key = dst_prefix + rel, .src = o};
      if (options.skip_unchanged) {
        FERRY_ASSIGN_OR_RETURN(item.dst, existing.Find(item.dst_key));
      }
      ctx.counters.bytes_total += item.src.size;
      ++ctx.counters.files_total;
      submit(std::move(item));
    }
    return Status();
  });
  ctx.counters.listing_done = true;
  FERRY_RETURN_IF_ERROR(s);
  if (!any) return NotFound("cp: nothing at '" + src.store->UrlFor(src_prefix) + "'");
  return Status();
}

// Records one finished object in the report and the counters.
void Finish(RunContext& ctx, const Item& item, const Result<Outcome>& r, Status& first_error) {
  MutexLock lock(ctx.mu);
  ++ctx.counters.files_done;
  if (!r.ok()) {
    ++ctx.counters.files_failed;
    ++ctx.report.files_failed;
    if (first_error.ok() || first_error.code() == StatusCode::kCancelled) first_error = r.status();
    if (StopsTheCopy(r.status())) ctx.stop = true;
    if (ctx.report.errors.size() < 20 && r.status().code() != StatusCode::kCancelled) {
      ctx.report.errors.push_back(r.status().message());
    }
  } else if (r->kind == Outcome::kLeftOut) {
    // Recorded with its reason in report.unstable by CopyItem; neither copied nor failed.
  } else if (r->kind == Outcome::kSkipped) {
    ++ctx.counters.files_skipped;
    ++ctx.report.files_skipped;
    ctx.report.bytes_skipped += item.src.size;
    ctx.counters.bytes_done += item.src.size;
  } else {
    ++ctx.report.files_copied;
    ctx.report.bytes_copied += item.src.size;
  }
  if (r.ok() && r->kind != Outcome::kLeftOut && ctx.options.report_in_sync) {
    InSyncObject done{.src = item.src,
                      .dst_key = item.dst_key,
                      .copied = r->kind == Outcome::kCopied,
                      .crc32c = r->crc32c};
    done.src.key = item.src_key;
    ctx.report.in_sync.push_back(std::move(done));
  }
}

// A file counted as copied whose publication failed (WriteOptions::publish_later): it never got
// its name, so it is a failed file after all.
void UnPublished(RunContext& ctx, const storage::Store::FlushFailure& f, Status& first_error) {
  MutexLock lock(ctx.mu);
  if (first_error.ok() || first_error.code() == StatusCode::kCancelled) first_error = f.status;
  if (ctx.report.errors.size() < 20) ctx.report.errors.push_back(f.status.message());
  if (f.key.empty()) return;  // a directory's fsync: no one file
  ++ctx.counters.files_failed;
  ++ctx.report.files_failed;
  ctx.report.files_copied -= std::min<uint64_t>(ctx.report.files_copied, 1);
  ctx.report.bytes_copied -= std::min<uint64_t>(ctx.report.bytes_copied, f.size);
  std::erase_if(ctx.report.in_sync,
                [&](const InSyncObject& o) { return o.copied && o.dst_key == f.key; });
}

}  // namespace

CopyResult RunCopy(const storage::OpenedUrl& src, const storage::OpenedUrl& dst,
                   const CopyOptions& options, ProgressCounters& counters) {
  auto start = std::chrono::steady_clock::now();
  CopyResult result;
  storage::Capabilities dst_caps = dst.store->capabilities();
  if (!dst_caps.writable) {
    result.status = Unimplemented("cp: cannot write to '" + dst.store->UrlFor(dst.key) +
                                  "': http(s) URLs are read-only");
    return result;
  }
  int part_threads =
      options.part_concurrency > 0 ? options.part_concurrency : (dst_caps.local_files ? 8 : 16);
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
                 .src_caps = src.store->capabilities(),
                 .dst_caps = dst_caps,
                 .part_threads = part_threads};
  Status first_error;
  Status planned;
  std::atomic<uint64_t> not_tried{0};
  {
    StallWatch stall([&] { return counters.bytes_done.load() + counters.files_done.load(); },
                     [&] { return Endpoints(src, dst); },
                     [&] {
                       return src.store->retry_count() +
                              (dst.store != src.store ? dst.store->retry_count() : 0);
                     });
    ThreadPool file_pool(options.transfers);
    Scheduler scheduler(file_pool, 2 * options.transfers + 16);
    SubmitFn submit = [&](Item item) {
      scheduler.Submit(std::move(item), [&](const Item& it) {
        if (ctx.stop) {
          ++not_tried;
          return;
        }
        const std::string what = "copying '" + src.store->UrlFor(it.src_key) + "'";
        stall.Begin(what);
        Finish(ctx, it, internal::CopyItem(ctx, it), first_error);
        stall.End(what);
      });
    };
    bool src_is_prefix = src.key.empty() || src.url.trailing_slash;
    // The listings and Stat calls of planning can hang too.
    const std::string planning =
        "listing '" + src.store->UrlFor(src.key) + "' -> '" + dst.store->UrlFor(dst.key) + "'";
    stall.Begin(planning);
    Result<bool> single = false;
    if (!src_is_prefix) {
      // One object: it is the whole plan (what the progress line and the report total).
      single = PlanSingle(src, dst, options, [&](Item item) {
        ctx.counters.bytes_total += item.src.size;
        ++ctx.counters.files_total;
        submit(std::move(item));
      });
    }
    if (!single.ok()) {
      planned = single.status();
    } else if (!*single) {
      planned = PlanTree(src, dst, options, ctx, submit);
    }
    stall.End(planning);
    file_pool.WaitIdle();
  }
  part_pool.WaitIdle();
  // Files waiting to be published get their names, and the names of files copied into local
  // directories become durable, before success is reported.
  for (const storage::Store::FlushFailure& f : dst.store->Flush()) UnPublished(ctx, f, first_error);
  if (Status synced = internal::SyncDirectories(ctx); !synced.ok() && first_error.ok()) {
    first_error = synced;
  }
  CopyReport rep;
  {
    MutexLock lock(ctx.mu);  // every worker is done; the lock states it
    rep = std::move(ctx.report);
  }
  rep.files_total = counters.files_total;
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
  // A failed plan (listing error, bad arguments) is the cause; else the first failed object.
  if (!planned.ok() && (first_error.ok() || planned.code() != StatusCode::kCancelled)) {
    if (planned.code() != StatusCode::kCancelled && rep.errors.size() < 20) {
      result.report.errors.insert(result.report.errors.begin(), planned.message());
    }
    result.status = planned;
    result.bad_request = planned.code() == StatusCode::kInvalidArgument && rep.files_total == 0;
    return result;
  }
  result.status = first_error;
  result.stopped = ctx.stop;
  if (ctx.stop && (not_tried > 0 || !counters.listing_done)) {
    result.status =
        Status(first_error.code(),
               fmt::format("stopped at the first error, which every other object "
                           "would meet too ({} failed, {} of {}{} not tried): {}",
                           rep.files_failed, not_tried.load(), rep.files_total,
                           counters.listing_done ? "" : "+ listed", first_error.message()),
               first_error.detail());
  } else if (!first_error.ok() && rep.files_failed > 1) {
    result.status =
        Status(first_error.code(),
               std::to_string(rep.files_failed) + " of " + std::to_string(rep.files_total) +
                   " objects failed; first: " + first_error.message(),
               first_error.detail());
  }
  return result;
}

}  // namespace ferry::transfer
