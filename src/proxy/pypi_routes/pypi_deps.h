#pragma once
// What the PyPI handlers (/pypi/simple/, /pypi/files/) need: the proxy's shared parts, the
// upstream simple index, and their page counters. One PypiDeps per server, made by PypiRoutes
// (pypi_routes.h) and kept alive by the routes it registers.

#include <string>

#include "proxy/service/proxy_context.h"
#include "server/metrics.h"

namespace ferry::proxy::pypi {

// Page lookups by outcome (ferry_pypi_pages_total{result=...}); null when not counted.
struct PageCounters {
  server::Counter* hit = nullptr;    // a stored page within its TTL (or any age when offline)
  server::Counter* miss = nullptr;   // fetched from upstream
  server::Counter* stale = nullptr;  // upstream failed; an expired stored page was served
};

struct PypiDeps {
  ProxyContext* px = nullptr;  // outlives the routes
  // The upstream simple index, ending in '/' ("https://pypi.org/simple/"); a project's page is
  // upstream + normalized name + "/".
  std::string upstream;
  PageCounters counters;
};

// Where the routes live, and the DocCache namespaces they use.
inline constexpr const char* kSimpleRoot = "/pypi/simple/";
inline constexpr const char* kPageNamespace = "pypi-page";    // key: normalized project name
inline constexpr const char* kIndexNamespace = "pypi-index";  // key: "/"
inline constexpr const char* kSizeNamespace = "pypi-size";    // key: "sha256:<hex>"

}  // namespace ferry::proxy::pypi
