#include "proxy/pypi_routes/pypi_routes.h"

#include <memory>

#include "proxy/pypi_routes/handlers.h"

namespace ferry::proxy {

server::RouteRegistrar PypiRoutes(ProxyContext& px, std::string upstream,
                                  server::MetricsRegistry* metrics) {
  auto deps = std::make_shared<pypi::PypiDeps>();
  deps->px = &px;
  if (upstream.empty() || upstream.back() != '/') upstream += '/';
  deps->upstream = std::move(upstream);
  if (metrics) {
    const char* help =
        "PyPI index page lookups: hit (stored, fresh), miss (fetched), stale "
        "(upstream failed, an expired page served)";
    deps->counters.hit = &metrics->GetCounter("ferry_pypi_pages_total", help, {{"result", "hit"}});
    deps->counters.miss =
        &metrics->GetCounter("ferry_pypi_pages_total", help, {{"result", "miss"}});
    deps->counters.stale =
        &metrics->GetCounter("ferry_pypi_pages_total", help, {{"result", "stale"}});
  }
  return [deps](server::Router& router) -> Status {
    // The handlers hold `deps` (shared): the router may outlive this registrar.
    auto simple = [deps](const server::Request& r) { return pypi::HandleSimple(r, *deps); };
    FERRY_RETURN_IF_ERROR(router.Add("GET", "/pypi/simple", simple));
    FERRY_RETURN_IF_ERROR(router.Add("GET", "/pypi/simple/{rest...}", simple));
    return router.Add("GET", "/pypi/files/{rest...}",
                      [deps](const server::Request& r) { return pypi::HandleFile(r, *deps); });
  };
}

}  // namespace ferry::proxy
