#pragma once
// What the proxy handlers (Hugging Face at /hf, PyPI at /pypi) share: the blob cache, the
// document cache, the upstream client, the mode, and the clock. One ProxyContext per server,
// created by `ferry serve` (cli/serve_command.cc) and outliving its router.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "proxy/blob_cache.h"
#include "proxy/doc_cache.h"
#include "proxy/upstream/upstream_client.h"
#include "server/http_types.h"
#include "server/metrics.h"

namespace ferry::proxy {

struct ProxyOptions {
  // Serve only what is cached; never contact upstream (uncached: 504).
  bool offline = false;
  // How long a mutable answer (a branch's commit, an API listing, an index page) is reused
  // before upstream is asked again. Answers for a commit id are kept for good.
  std::chrono::seconds metadata_ttl{600};
};

struct ProxyContext {
  std::shared_ptr<BlobCache> cache;
  std::shared_ptr<DocCache> docs;
  std::shared_ptr<UpstreamClient> upstream;
  ProxyOptions options;
  // Milliseconds since the epoch (tests inject a clock).
  std::function<int64_t()> now_ms = &DocCache::NowMs;
};

// The URL of this server as the client reached it ("http://" + Host), for links that must be
// absolute (the Hub's paged tree Link header). Falls back to "http://localhost".
std::string ExternalBase(const server::Request& request);

// Registers a collector that mirrors the cache's counters into `registry` as
// ferry_cache_* metrics (hits, misses, joins, bytes served/fetched/saved, in-flight fetches...).
void AddCacheMetrics(server::MetricsRegistry& registry, std::shared_ptr<BlobCache> cache);

}  // namespace ferry::proxy
