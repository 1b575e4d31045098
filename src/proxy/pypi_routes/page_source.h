#pragma once
// Project pages and the root index, as the PyPI handlers get them: from the document cache
// while fresh, from upstream otherwise, and from an expired copy when upstream fails.
//
// A page is fetched as <upstream><normalized>/ with
// `Accept: application/vnd.pypi.simple.v1+json, text/html;q=0.1` (JSON first: it carries
// PEP 700 sizes), redirects followed, parsed by the answer's Content-Type (relative links
// resolve against the final URL). It is stored in the DocCache as RenderProjectJson of the page
// as parsed, with upstream URLs (lossless; how a file request finds its upstream URL), with the
// time it was fetched. Rules (docs/semantics/pypi.md):
//  - stored and younger than ProxyOptions::metadata_ttl, or offline: the stored page (hit);
//  - otherwise upstream (miss); upstream's 404/410 is the answer (kNotFound);
//  - upstream failing (unreachable, 5xx, timeout, a page that does not parse) with an expired
//    page stored: the stored page, with a warning in the log (stale). A stale index is better
//    than a failed install. For kStaleRetryIntervalMs after such a failure the stored page is
//    served without asking upstream (RecentFailures);
//  - offline without a stored page: kUnavailable naming --offline.
//  - concurrent misses of one page make one upstream fetch (SingleFlight); the others take the
//    page it stored.
// Thread-safety: the functions may run concurrently.

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"
#include "proxy/pypi/project_page.h"
#include "proxy/pypi_routes/pypi_deps.h"

namespace ferry::proxy::pypi {

enum class PageOrigin { kFresh, kUpstream, kStale };

struct SourcedPage {
  ProjectPage page;  // upstream URLs
  PageOrigin origin = PageOrigin::kFresh;
  int64_t fetched_ms = 0;  // when the page was fetched from upstream
};

struct SourcedIndex {
  ProjectList list;
  PageOrigin origin = PageOrigin::kFresh;
  int64_t fetched_ms = 0;
};

// The page of `project` (normalized). `refresh`: skip a fresh stored page (the file handler
// asks once more when a stored page does not list a requested file).
Result<SourcedPage> GetProjectPage(PypiDeps& deps, std::string_view project, bool refresh = false);

// The root project list, same rules.
Result<SourcedIndex> GetProjectIndex(PypiDeps& deps);

// The Accept header sent upstream.
inline constexpr std::string_view kUpstreamAccept =
    "application/vnd.pypi.simple.v1+json, text/html;q=0.1";

// The largest page read from upstream (the biggest projects' pages are ~11 MB).
inline constexpr size_t kMaxPageBytes = 64u << 20;

// Kind of upstream document by Content-Type: JSON (PEP 691 v1), HTML (PEP 503 / v1+html /
// no type), or InvalidArgument for another API major version
// (application/vnd.pypi.simple.v2+json) or a type that is no index page.
enum class PageFormat { kJson, kHtml };
Result<PageFormat> FormatOfContentType(std::string_view content_type);

}  // namespace ferry::proxy::pypi
