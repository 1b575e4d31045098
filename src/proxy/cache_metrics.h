#pragma once
// Counters of a BlobCache, for /metrics and tests. Thread-safe (relaxed atomics).

#include <atomic>
#include <cstdint>

namespace ferry::proxy {

struct CacheMetrics {
  uint64_t hits = 0;                // opens served from a published blob
  uint64_t misses = 0;              // opens that started an upstream fetch
  uint64_t joins = 0;               // opens that attached to a fetch already in flight
  uint64_t direct_range_reads = 0;  // ranges far ahead of the fetch, read from upstream directly
  uint64_t bytes_served = 0;        // bytes returned by BlobReader::Read
  uint64_t bytes_fetched = 0;       // bytes received from upstream (fills and direct ranges)
  uint64_t fetch_calls = 0;         // Fetcher::Fetch calls (resumes included)
  uint64_t resumed_bytes = 0;       // bytes taken from an interrupted fetch's spool file
  uint64_t published = 0;           // blobs verified and published
  uint64_t fetch_failures = 0;      // fills that ended in an error (nothing published)
  uint64_t inflight = 0;            // fills running now
  uint64_t evictions = 0;           // blobs deleted to stay under the size cap
};

struct CacheCounters {
  std::atomic<uint64_t> hits{0}, misses{0}, joins{0}, direct_range_reads{0}, bytes_served{0},
      bytes_fetched{0}, fetch_calls{0}, resumed_bytes{0}, published{0}, fetch_failures{0},
      inflight{0}, evictions{0};

  CacheMetrics Snapshot() const {
    CacheMetrics m;
    m.hits = hits.load();
    m.misses = misses.load();
    m.joins = joins.load();
    m.direct_range_reads = direct_range_reads.load();
    m.bytes_served = bytes_served.load();
    m.bytes_fetched = bytes_fetched.load();
    m.fetch_calls = fetch_calls.load();
    m.resumed_bytes = resumed_bytes.load();
    m.published = published.load();
    m.fetch_failures = fetch_failures.load();
    m.inflight = inflight.load();
    m.evictions = evictions.load();
    return m;
  }
};

}  // namespace ferry::proxy
