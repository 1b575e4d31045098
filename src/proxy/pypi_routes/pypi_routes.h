#pragma once
// The PyPI proxy's routes for `ferry serve` (docs/semantics/pypi.md), one set per index
// (pypi_index.h), under its root R ("/pypi/" or "/pypi/{name}/"):
//   GET R simple, R simple/{rest...}  HandleSimple
//   GET R files/{rest...}             HandleFile (HEAD too: answered from the size)

#include <string>

#include "proxy/pypi_routes/pypi_index.h"
#include "proxy/service/proxy_context.h"
#include "server/metrics.h"
#include "server/router.h"

namespace ferry::proxy {

// A registrar for the routes above. `px` must outlive the router. `metrics` (may be null) gets
// ferry_pypi_pages_total{result="hit|miss|stale"} (with index="{name}" for a named index).
server::RouteRegistrar PypiRoutes(ProxyContext& px, const PypiIndex& index,
                                  server::MetricsRegistry* metrics);

}  // namespace ferry::proxy
