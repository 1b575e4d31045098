#pragma once
// PEP 503 HTML (with PEP 592 yanked, PEP 658/714 core metadata, PEP 629 repository version) to
// and from the model in project_page.h.

#include <string>
#include <string_view>

#include "base/status.h"
#include "proxy/pypi/project_page.h"

namespace ferry::proxy::pypi {

// Parses a project page fetched from `page_url` (absolute http(s); relative links and
// <base href> resolve against it). Tolerant: any attribute order and quoting, entities, tags
// in any case. Each <a> becomes a file unless it is unusable, which is recorded in
// ProjectPage::skipped instead: no href, a non-http(s) URL (javascript:, data:, ...), a file
// name that is unsafe (IsSafeFilename: '..', '/', control bytes). The file name is the URL's
// last path segment (what pip uses). `#<name>=<hex>` fragments become hashes (lowercased);
// data-core-metadata is preferred over data-dist-info-metadata; a metadata value that is
// neither "true" nor "<name>=<hex>" is treated as absent (a hash is never invented).
// `project` is the requested project; its normalized form becomes ProjectPage::name.
// InvalidArgument when `page_url` is not absolute http(s), or the page declares an API major
// version other than 1 (PEP 629: clients must not guess).
Result<ProjectPage> ParseProjectHtml(std::string_view html, std::string_view page_url,
                                     std::string_view project);

// Parses the root index (/simple/): one project per <a>, named by the anchor's text.
Result<ProjectList> ParseIndexHtml(std::string_view html);

// PEP 503 HTML of `page`, URLs as they are in the model (RewriteForProxy first for the proxy):
// href = url + "#sha256=<hex>" (or the first hash when there is no sha256), and, when set,
// data-requires-python (escaped), data-yanked (the reason, escaped), data-gpg-sig, and
// data-dist-info-metadata plus data-core-metadata with the same value ("sha256=<hex>" or
// "true"). Declares pypi:repository-version ApiVersionFor(page).
std::string RenderProjectHtml(const ProjectPage& page);

// The root index: one <a href="<normalized>/">name</a> per project (relative links).
std::string RenderIndexHtml(const ProjectList& list);

}  // namespace ferry::proxy::pypi
