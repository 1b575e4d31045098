#pragma once
// The PyPI handlers of `ferry serve` (docs/semantics/pypi.md), plain functions of a request
// (house style 8): the routes are registered by PypiRoutes (pypi_routes.h).
//
//   GET /pypi/simple/{rest...}      the root list and project pages, negotiated (PEP 691),
//                                   `Vary: Accept` on every answer (301, 404 and 406 too)
//   GET|HEAD /pypi/files/{rest...}  a file a page listed, or its .metadata: from the verified
//                                   blob cache (sha256 files), or streamed (files without sha256)
//
// Status mapping: upstream's 404 for a project page -> 404; a file the page does not list ->
// 404; anything else upstream did wrong -> 502 (504 for timeouts), never 404; --offline and
// not cached -> 504.

#include "proxy/pypi_routes/pypi_deps.h"
#include "server/http_types.h"

namespace ferry::proxy::pypi {

// `request.params` has "rest": the decoded path after /pypi/simple/ (no "rest": the request
// was for /pypi/simple itself, answered 301 to /pypi/simple/).
server::Response HandleSimple(const server::Request& request, PypiDeps& deps);

// `request.params` has "rest": the decoded path after /pypi/files/.
server::Response HandleFile(const server::Request& request, PypiDeps& deps);

// The answer for a failed page lookup (GetProjectPage/GetProjectIndex).
server::Response PageErrorResponse(const Status& status, const PypiDeps& deps);

}  // namespace ferry::proxy::pypi
