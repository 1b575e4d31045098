#pragma once
// What the PyPI handlers (/pypi/simple/, /pypi/files/) need: the proxy's shared parts, the
// upstream simple index, and their page counters. One PypiDeps per server, made by PypiRoutes
// (pypi_routes.h) and kept alive by the routes it registers.

#include <cstdint>
#include <map>
#include <string>

#include "base/mutex.h"

#include "proxy/service/proxy_context.h"
#include "proxy/service/single_flight.h"
#include "server/metrics.h"

namespace ferry::proxy::pypi {

// Page lookups by outcome (ferry_pypi_pages_total{result=...}); null when not counted.
struct PageCounters {
  server::Counter* hit = nullptr;    // a stored page within its TTL (or any age when offline)
  server::Counter* miss = nullptr;   // fetched from upstream
  server::Counter* stale = nullptr;  // upstream failed; an expired stored page was served
};

// Documents whose upstream fetch failed while an expired copy was served: until the given time
// that copy is served again without asking upstream, so a hung upstream costs one timeout, not
// one per request (pip gives up on a page after 15 s; its retry then gets the stored page).
class RecentFailures final {
 public:
  bool Active(const std::string& key, int64_t now_ms) const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    auto it = until_.find(key);
    return it != until_.end() && now_ms < it->second;
  }
  void Set(const std::string& key, int64_t until_ms) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    until_[key] = until_ms;
  }
  void Clear(const std::string& key) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    until_.erase(key);
  }

 private:
  mutable Mutex mu_;
  std::map<std::string, int64_t> until_ GUARDED_BY(mu_);  // one entry per failed page at most
};

// How long an expired page is served without asking upstream after upstream failed for it.
inline constexpr int64_t kStaleRetryIntervalMs = 30'000;

struct PypiDeps {
  ProxyContext* px = nullptr;  // outlives the routes
  // Where the index is served: "/pypi/" (the unnamed index) or "/pypi/{name}/" (pypi_index.h).
  std::string root = "/pypi/";
  // Its DocCache keys' prefix: "" or "{name}/" (a normalized project name holds no '/').
  std::string scope;
  std::string SimpleRoot() const { return root + "simple/"; }
  std::string FilesRoot() const { return root + "files/"; }
  // The upstream simple index, ending in '/' ("https://pypi.org/simple/"); a project's page is
  // upstream + normalized name + "/".
  std::string upstream;
  PageCounters counters;
  RecentFailures failures;
  // Concurrent misses of one page fetch it once (page_source.cc).
  SingleFlight page_flights;
};

// The DocCache namespaces the routes use (keys after PypiDeps::scope).
inline constexpr const char* kPageNamespace = "pypi-page";    // key: normalized project name
inline constexpr const char* kIndexNamespace = "pypi-index";  // key: "/"
inline constexpr const char* kSizeNamespace = "pypi-size";    // key: "sha256:<hex>", unscoped

}  // namespace ferry::proxy::pypi
