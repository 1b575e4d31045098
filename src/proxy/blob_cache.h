#pragma once
// BlobCache: the verified, streaming, content-addressed cache behind `ferry serve`'s Hugging
// Face and PyPI handlers (docs/semantics/cache.md).
//
// Open() answers a request for a blob named by its digest and size:
//  - published in the store: read from it (a hit);
//  - being fetched: attach to that fetch and read bytes as they arrive (single flight: one
//    upstream fetch however many readers);
//  - otherwise: start the fetch (an InflightBlob) and read it as it arrives.
// A range that starts more than direct_range_distance past what the fetch has received (the
// zip directory at a wheel's tail) is read from upstream directly, unverified, while the fill
// goes on, so it is answered without waiting for the whole file.
// A size cap is kept by deleting the least recently used blobs (LruIndex); blobs with open
// readers are not evicted by this process.
// Thread-safety: all methods are thread-safe. Readers must be destroyed before the cache.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "proxy/blob_reader.h"
#include "proxy/blob_store.h"
#include "proxy/cache_metrics.h"
#include "proxy/digest.h"
#include "proxy/fetcher.h"
#include "proxy/inflight_blob.h"
#include "proxy/lru_index.h"

namespace ferry::proxy {

struct BlobCacheOptions {
  std::string prefix;  // where in the store the cache lives: "" or "some/dir/"
  // Total size of published blobs this process keeps; 0 = no cap.
  uint64_t max_bytes = 0;
  // Spool directory, stall timeout and retries of upstream fetches. An empty spool_dir means
  // the system temporary directory.
  FetchOptions fetch;
  // A range starting this many bytes or more past a fetch's progress is read from upstream
  // directly. 16 MiB: about what a fast upstream delivers in a fraction of a second, so
  // anything nearer is served sooner by waiting.
  uint64_t direct_range_distance = 16u << 20;
  // Whether a direct range read of an uncached blob also starts filling the cache.
  bool fill_on_direct_range = true;
  // Bytes a reader of a published blob reads from the store at a time (one ranged GET on S3).
  size_t read_window = 1u << 20;
  // Bytes a direct range read buffers before it stops reading upstream.
  size_t direct_buffer = 4u << 20;
  // Spool files of interrupted fetches (kept for resuming) older than this are removed when
  // the cache is created.
  std::chrono::hours partial_max_age{24};
  // Names this process's access-time file (<prefix>state/access-<instance>.tsv), so processes
  // sharing a store do not overwrite each other's.
  std::string instance = "default";
};

class BlobCache final {
 public:
  // Scans the store (sizes of published blobs, saved access times) and evicts down to the cap.
  static Result<std::unique_ptr<BlobCache>> Create(std::shared_ptr<storage::Store> store,
                                                   BlobCacheOptions options);
  // Cancels fetches still running (nothing half is published), joins them, saves access times.
  ~BlobCache();
  BlobCache(const BlobCache&) = delete;
  BlobCache& operator=(const BlobCache&) = delete;

  // Opens `range` (the whole blob when nullopt) of the blob with `digest` and `size`;
  // `fetcher` gets it from upstream when it is not cached. Errors: kOutOfRange for a range
  // starting past the end, kFailedPrecondition when the cached blob has another size, store
  // errors, kUnavailable (retry in a second) when the blob is stored or being fetched but
  // fetcher->MayServe() refuses it (decided under the lock that decides the join, so no fill
  // of another source can slip in between); upstream errors come from BlobReader::Read.
  Result<std::unique_ptr<BlobReader>> Open(const Digest& digest, uint64_t size,
                                           std::shared_ptr<Fetcher> fetcher,
                                           std::optional<storage::ByteRange> range = std::nullopt)
      EXCLUDES(mu_);

  // Deletes least recently used blobs until the cap holds. Called after each publish.
  Status EnforceCap() EXCLUDES(mu_);
  // False when Open would refuse `fetcher` the blob: it is stored or being fetched by another
  // source, and fetcher.MayServe() says no (the caller may then prove access and try again).
  bool WouldServe(const Digest& digest, const Fetcher& fetcher) EXCLUDES(mu_);
  // Saves the access times (call now and then and at shutdown; a lost save only makes blobs
  // look older).
  Status SaveAccessTimes() EXCLUDES(mu_);
  // Rebuilds the index from the store (startup; after another process changed the store).
  Status Rescan() EXCLUDES(mu_);

  // Reads a published blob back and checks its size and digest (a scrub against bit rot on a
  // NAS). A blob that does not match is deleted and kDataLoss returned: the next Open() fetches
  // it again. kNotFound when it is not cached. Not needed for blobs this cache published; for
  // stores other programs can write to.
  Status Verify(const Digest& digest) EXCLUDES(mu_);

  CacheMetrics metrics() const { return counters_.Snapshot(); }
  uint64_t cached_bytes() const EXCLUDES(mu_);
  BlobStore& blobs() { return blobs_; }

 private:
  BlobCache(std::shared_ptr<storage::Store> store, BlobCacheOptions options);
  void OnFetchDone(InflightBlob& blob, const Status& status) EXCLUDES(mu_);
  void Unpin(const std::string& key) EXCLUDES(mu_);
  std::unique_ptr<BlobReader> AttachLocked(const std::shared_ptr<InflightBlob>& blob,
                                           const std::shared_ptr<Fetcher>& fetcher, uint64_t begin,
                                           uint64_t end, ReadSource source) REQUIRES(mu_);
  std::string AccessKey() const;

  BlobStore blobs_;
  const BlobCacheOptions options_;
  CacheCounters counters_;

  mutable Mutex mu_;
  std::map<Digest, std::shared_ptr<InflightBlob>> inflight_ GUARDED_BY(mu_);
  // Every fetch not yet joined (also finished ones until the next Open()).
  std::vector<std::shared_ptr<InflightBlob>> fetches_ GUARDED_BY(mu_);
  LruIndex lru_ GUARDED_BY(mu_);
  std::map<std::string, int> pins_ GUARDED_BY(mu_);
};

}  // namespace ferry::proxy
