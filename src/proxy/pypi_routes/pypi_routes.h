#pragma once
// The PyPI proxy's routes for `ferry serve` (docs/semantics/pypi.md):
//   GET /pypi/simple, /pypi/simple/{rest...}  HandleSimple
//   GET /pypi/files/{rest...}                  HandleFile (HEAD too: answered from the size)

#include <string>

#include "proxy/service/proxy_context.h"
#include "server/metrics.h"
#include "server/router.h"

namespace ferry::proxy {

// A registrar for the routes above. `px` must outlive the router; `upstream` is the simple
// index to cache ("https://pypi.org/simple/"; a missing trailing '/' is added). `metrics`
// (may be null) gets ferry_pypi_pages_total{result="hit|miss|stale"}.
server::RouteRegistrar PypiRoutes(ProxyContext& px, std::string upstream,
                                  server::MetricsRegistry* metrics);

}  // namespace ferry::proxy
