#include "proxy/service/proxy_context.h"

namespace ferry::proxy {

std::string ExternalBase(const server::Request& request) {
  std::string_view host = request.headers.Get("Host").value_or("localhost");
  // A Host header is one authority: anything else is not used in a link.
  for (char c : host) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' ||
              c == '[' || c == ']' || c == '_';
    if (!ok) return "http://localhost";
  }
  if (host.empty()) return "http://localhost";
  return "http://" + std::string(host);
}

void AddCacheMetrics(server::MetricsRegistry& registry, std::shared_ptr<BlobCache> cache) {
  registry.AddCollector([cache](server::MetricsRegistry& r) {
    CacheMetrics m = cache->metrics();
    auto counter = [&](const char* name, const char* help, uint64_t v) {
      r.GetCounter(name, help).Mirror(v);
    };
    counter("ferry_cache_hits_total", "Blob opens served from the cache", m.hits);
    counter("ferry_cache_misses_total", "Blob opens that started an upstream fetch", m.misses);
    counter("ferry_cache_joins_total", "Blob opens that joined a fetch already running", m.joins);
    counter("ferry_cache_direct_range_reads_total",
            "Ranges far ahead of a fetch, read from upstream directly", m.direct_range_reads);
    counter("ferry_cache_bytes_served_total", "Blob bytes sent to clients", m.bytes_served);
    counter("ferry_cache_bytes_fetched_total", "Bytes received from upstream", m.bytes_fetched);
    counter("ferry_cache_bytes_saved_total",
            "Blob bytes served without fetching them upstream (served minus fetched)",
            m.bytes_served > m.bytes_fetched ? m.bytes_served - m.bytes_fetched : 0);
    counter("ferry_cache_fetch_calls_total", "Upstream fetch calls, resumes included",
            m.fetch_calls);
    counter("ferry_cache_published_total", "Blobs verified and published", m.published);
    counter("ferry_cache_fetch_failures_total", "Fills that failed (nothing published)",
            m.fetch_failures);
    counter("ferry_cache_evictions_total", "Blobs deleted to stay under the size cap", m.evictions);
    r.GetGauge("ferry_cache_inflight_fetches", "Upstream fills running now")
        .Set(static_cast<int64_t>(m.inflight));
    r.GetGauge("ferry_cache_bytes", "Bytes of published blobs in the cache")
        .Set(static_cast<int64_t>(cache->cached_bytes()));
  });
}

}  // namespace ferry::proxy
