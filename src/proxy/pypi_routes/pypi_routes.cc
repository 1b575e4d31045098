#include "proxy/pypi_routes/pypi_routes.h"

#include <memory>

#include "proxy/pypi_routes/handlers.h"

namespace ferry::proxy {

server::RouteRegistrar PypiRoutes(ProxyContext& px, const PypiIndex& index,
                                  server::MetricsRegistry* metrics) {
  auto deps = std::make_shared<pypi::PypiDeps>();
  deps->px = &px;
  deps->upstream = index.upstream;
  if (deps->upstream.empty() || deps->upstream.back() != '/') deps->upstream += '/';
  deps->root = index.Root();
  deps->scope = index.name.empty() ? "" : index.name + "/";
  if (metrics) {
    const char* help =
        "PyPI index page lookups: hit (stored, fresh), miss (fetched), stale "
        "(upstream failed, an expired page served)";
    auto counter = [&](const char* result) {
      server::Labels labels = {{"result", result}};
      if (!index.name.empty()) labels.push_back({"index", index.name});
      return &metrics->GetCounter("ferry_pypi_pages_total", help, labels);
    };
    deps->counters.hit = counter("hit");
    deps->counters.miss = counter("miss");
    deps->counters.stale = counter("stale");
  }
  return [deps](server::Router& router) -> Status {
    // The handlers hold `deps` (shared): the router may outlive this registrar.
    auto simple = [deps](const server::Request& r) { return pypi::HandleSimple(r, *deps); };
    FERRY_RETURN_IF_ERROR(router.Add("GET", deps->root + "simple", simple));
    FERRY_RETURN_IF_ERROR(router.Add("GET", deps->root + "simple/{rest...}", simple));
    return router.Add("GET", deps->root + "files/{rest...}",
                      [deps](const server::Request& r) { return pypi::HandleFile(r, *deps); });
  };
}

}  // namespace ferry::proxy
