#include "proxy/blob_cache.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "base/log.h"
#include "proxy/blob_readers.h"

namespace ferry::proxy {

namespace {
int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
int64_t ToMs(const std::optional<SystemTime>& t) {
  if (!t) return 0;
  return std::chrono::duration_cast<std::chrono::milliseconds>(t->time_since_epoch()).count();
}

// Removes this cache's spool files that no fetch resumed for partial_max_age.
void RemoveOldPartials(const BlobCacheOptions& options) {
  std::error_code ec;
  auto now = std::filesystem::file_time_type::clock::now();
  for (const auto& e : std::filesystem::directory_iterator(options.fetch.spool_dir, ec)) {
    std::string name = e.path().filename().string();
    if (!name.starts_with(options.fetch.spool_prefix) || !name.ends_with(".partial")) continue;
    auto modified = e.last_write_time(ec);
    if (ec || now - modified < options.partial_max_age) continue;
    std::filesystem::remove(e.path(), ec);
    if (!ec) Log(LogLevel::kInfo, "cache: removed old partial download '{}'", e.path().string());
  }
}
}  // namespace

Result<std::unique_ptr<BlobCache>> BlobCache::Create(std::shared_ptr<storage::Store> store,
                                                     BlobCacheOptions options) {
  if (options.fetch.spool_dir.empty()) {
    std::error_code ec;
    options.fetch.spool_dir = std::filesystem::temp_directory_path(ec).string();
    if (ec) options.fetch.spool_dir = "/tmp";
  }
  if (options.fetch.spool_prefix.empty()) {
    options.fetch.spool_prefix = "ferry-" + options.instance + "-";
  }
  RemoveOldPartials(options);
  std::unique_ptr<BlobCache> cache(new BlobCache(std::move(store), std::move(options)));
  FERRY_RETURN_IF_ERROR(cache->Rescan());
  FERRY_RETURN_IF_ERROR(cache->EnforceCap());
  return cache;
}

BlobCache::BlobCache(std::shared_ptr<storage::Store> store, BlobCacheOptions options)
    : blobs_(std::move(store), options.prefix), options_(std::move(options)) {}

BlobCache::~BlobCache() {
  std::vector<std::shared_ptr<InflightBlob>> fetches;
  {
    MutexLock lock(mu_);
    fetches = fetches_;
  }
  for (auto& f : fetches) f->Cancel(Status(StatusCode::kCancelled, "the cache is closing"));
  for (auto& f : fetches) f->Join();
  SaveAccessTimes().IgnoreError();
}

std::string BlobCache::AccessKey() const {
  return options_.prefix + "state/access-" + options_.instance + ".tsv";
}

uint64_t BlobCache::cached_bytes() const {
  MutexLock lock(mu_);
  return lru_.total_bytes();
}

namespace {
Status NotThisSources(const Digest& digest) {
  return Status(StatusCode::kUnavailable,
                "Read " + digest.ToString() +
                    ": the cached bytes came from another source; try "
                    "again in a moment",
                ErrorDetail{.throttled = true, .retry_after = std::chrono::seconds(1)});
}
}  // namespace

bool BlobCache::WouldServe(const Digest& digest, const Fetcher& fetcher) {
  {
    MutexLock lock(mu_);
    if (auto it = inflight_.find(digest); it != inflight_.end()) {
      return fetcher.MayServe(&it->second->fetcher());
    }
  }
  return !blobs_.Stat(digest).ok() || fetcher.MayServe(nullptr);
}

Result<std::unique_ptr<BlobReader>> BlobCache::Open(const Digest& digest, uint64_t size,
                                                    std::shared_ptr<Fetcher> fetcher,
                                                    std::optional<storage::ByteRange> range) {
  uint64_t begin = range ? range->offset : 0;
  if (begin > size || (range && begin == size && size > 0)) {
    return Status(StatusCode::kOutOfRange, "Read " + digest.ToString() + ": range starts at " +
                                               std::to_string(begin) + ", the blob has " +
                                               std::to_string(size) + " bytes");
  }
  uint64_t end = size;
  if (range && range->length) end = std::min(size, begin + *range->length);
  const std::string key = blobs_.KeyFor(digest);
  {
    MutexLock lock(mu_);
    // Join fetches that have ended (their threads are exiting or gone).
    std::erase_if(fetches_, [](const std::shared_ptr<InflightBlob>& f) {
      if (!f->finished()) return false;
      f->Join();
      return true;
    });
    auto it = inflight_.find(digest);
    if (it != inflight_.end()) {
      if (!fetcher->MayServe(&it->second->fetcher())) return NotThisSources(digest);
      counters_.joins++;
      return AttachLocked(it->second, fetcher, begin, end, ReadSource::kJoined);
    }
  }
  Result<uint64_t> stored = blobs_.Stat(digest);
  if (stored.ok()) {
    if (!fetcher->MayServe(nullptr)) return NotThisSources(digest);
    if (*stored != size) {
      return Status(StatusCode::kFailedPrecondition,
                    "Read '" + blobs_.UrlFor(digest) + "': cached blob has " +
                        std::to_string(*stored) + " bytes, expected " + std::to_string(size));
    }
    {
      MutexLock lock(mu_);
      if (lru_.Contains(key)) {
        lru_.Touch(key, NowMs());
      } else {
        lru_.Insert(key, size, NowMs());
      }
      pins_[key]++;
    }
    counters_.hits++;
    return std::unique_ptr<BlobReader>(new StoreBlobReader(blobs_, digest, begin, end, size,
                                                           options_.read_window, counters_,
                                                           [this, key] { Unpin(key); }));
  }
  if (stored.status().code() != StatusCode::kNotFound) return stored.status();

  MutexLock lock(mu_);
  auto it = inflight_.find(digest);
  if (it != inflight_.end()) {  // started by another request since we looked
    if (!fetcher->MayServe(&it->second->fetcher())) return NotThisSources(digest);
    counters_.joins++;
    return AttachLocked(it->second, fetcher, begin, end, ReadSource::kJoined);
  }
  if (!options_.fill_on_direct_range && begin >= options_.direct_range_distance) {
    counters_.direct_range_reads++;
    return std::unique_ptr<BlobReader>(new DirectRangeReader(fetcher, begin, end, size,
                                                             options_.fetch.stall_timeout,
                                                             options_.direct_buffer, counters_));
  }
  FERRY_ASSIGN_OR_RETURN(
      std::shared_ptr<InflightBlob> blob,
      InflightBlob::Start(digest, size, fetcher, blobs_, options_.fetch, counters_,
                          [this](InflightBlob& b, const Status& st) { OnFetchDone(b, st); }));
  inflight_[digest] = blob;
  fetches_.push_back(blob);
  counters_.misses++;
  counters_.inflight++;
  return AttachLocked(blob, fetcher, begin, end, ReadSource::kMiss);
}

std::unique_ptr<BlobReader> BlobCache::AttachLocked(const std::shared_ptr<InflightBlob>& blob,
                                                    const std::shared_ptr<Fetcher>& fetcher,
                                                    uint64_t begin, uint64_t end,
                                                    ReadSource source) {
  if (begin >= blob->fetched() + options_.direct_range_distance) {
    counters_.direct_range_reads++;
    return std::make_unique<DirectRangeReader>(fetcher, begin, end, blob->size(),
                                               options_.fetch.stall_timeout, options_.direct_buffer,
                                               counters_);
  }
  return std::make_unique<InflightBlobReader>(blob, begin, end, source, counters_);
}

void BlobCache::OnFetchDone(InflightBlob& blob, const Status& status) {
  {
    MutexLock lock(mu_);
    auto it = inflight_.find(blob.digest());
    if (it != inflight_.end() && it->second.get() == &blob) inflight_.erase(it);
    counters_.inflight--;
    if (status.ok()) lru_.Insert(blobs_.KeyFor(blob.digest()), blob.size(), NowMs());
  }
  if (!status.ok()) {
    Log(LogLevel::kWarn, "cache: {}", status.ToString());
    return;
  }
  Status st = EnforceCap();
  if (!st.ok()) Log(LogLevel::kWarn, "cache: {}", st.ToString());
}

void BlobCache::Unpin(const std::string& key) {
  MutexLock lock(mu_);
  auto it = pins_.find(key);
  if (it != pins_.end() && --it->second <= 0) pins_.erase(it);
}

Status BlobCache::EnforceCap() {
  if (options_.max_bytes == 0) return Status::Ok();
  std::vector<std::string> victims;
  {
    MutexLock lock(mu_);
    victims = lru_.Victims(options_.max_bytes, [&](const std::string& k) NO_THREAD_SAFETY_ANALYSIS {
      return pins_.contains(k);
    });
    for (const std::string& k : victims) lru_.Erase(k);
  }
  Status first;
  for (const std::string& k : victims) {
    // Deleting a verified blob never makes anything wrong: at worst it is fetched again.
    Status st = blobs_.store().Delete(k);
    if (st.ok()) {
      counters_.evictions++;
    } else if (first.ok()) {
      first = st.WithContext("Evict from cache");
    }
  }
  return first;
}

Status BlobCache::Verify(const Digest& digest) {
  const std::string url = blobs_.UrlFor(digest);
  FERRY_ASSIGN_OR_RETURN(uint64_t size, blobs_.Stat(digest));
  BlobHasher hasher(digest.algorithm, size);
  FERRY_RETURN_IF_ERROR(blobs_.Read(digest, {}, [&](std::string_view chunk) {
    hasher.Update(chunk);
    return Status::Ok();
  }));
  if (hasher.bytes() == size && hasher.Finish() == digest) return Status::Ok();
  {
    MutexLock lock(mu_);
    lru_.Erase(blobs_.KeyFor(digest));
  }
  Status deleted = blobs_.Delete(digest);
  return Status(StatusCode::kDataLoss,
                "Verify blob '" + url + "': content does not match its digest; " +
                    (deleted.ok() ? "deleted" : "could not delete: " + deleted.ToString()));
}

Status BlobCache::SaveAccessTimes() {
  std::string text;
  {
    MutexLock lock(mu_);
    text = lru_.SerializeAccessTimes();
  }
  auto written = blobs_.store().WriteAll(AccessKey(), text);
  if (!written.ok()) return written.status().WithContext("Save cache access times");
  return Status::Ok();
}

Status BlobCache::Rescan() {
  FERRY_ASSIGN_OR_RETURN(BlobStore::ScanResult scan, blobs_.Scan());
  std::vector<std::string> access_texts;
  storage::ListOptions list;
  list.prefix = options_.prefix + "state/access-";
  Status st = blobs_.store().ListAll(list, [&](const storage::ListPage& page) {
    for (const storage::ObjectInfo& o : page.objects) {
      auto text = blobs_.store().ReadAll(o.key);
      // A file another process is replacing or removing: its times are only a hint.
      if (text.ok()) access_texts.push_back(std::move(text).value());
    }
    return Status::Ok();
  });
  if (!st.ok()) return st.WithContext("Scan cache access times");
  for (const std::string& k : scan.foreign) {
    Log(LogLevel::kWarn, "cache: '{}' is not a content address; left alone",
        blobs_.store().UrlFor(k));
  }
  MutexLock lock(mu_);
  lru_ = LruIndex();
  for (const StoredBlob& b : scan.blobs) {
    lru_.Insert(blobs_.KeyFor(b.digest), b.size, ToMs(b.modified));
  }
  for (const std::string& t : access_texts) lru_.ApplyAccessTimes(t);
  return Status::Ok();
}

}  // namespace ferry::proxy
