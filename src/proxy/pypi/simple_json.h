#pragma once
// PEP 691 JSON (with PEP 700's versions, size and upload-time, PEP 714's core-metadata) to and
// from the model in project_page.h.

#include <string>
#include <string_view>

#include "base/status.h"
#include "proxy/pypi/project_page.h"

namespace ferry::proxy::pypi {

// Parses a project page fetched from `page_url` (absolute http(s); relative file URLs resolve
// against it). "core-metadata" is preferred over "dist-info-metadata" and PyPI's short-lived
// "data-dist-info-metadata" (each a bool or a hash object); "yanked" is a bool or a reason string.
// A file with a missing or unsafe "filename" or a non-http(s) "url" is recorded in
// ProjectPage::skipped; hashes whose name or value is not a hash are dropped. InvalidArgument when
// the text is not JSON, nests deeper than 64 levels, has no "files" array, or declares an API major
// version other than 1.
Result<ProjectPage> ParseProjectJson(std::string_view json, std::string_view page_url);

// Parses the root index: {"meta": ..., "projects": [{"name": ...}, ...]}.
Result<ProjectList> ParseIndexJson(std::string_view json);

// PEP 691 JSON of `page`, URLs as in the model (RewriteForProxy first for the proxy): meta
// api-version ApiVersionFor(page), name (normalized), versions (when known), and per file filename,
// url, hashes (possibly {}), requires-python, yanked (false, true or the reason), core-metadata
// (false, true or the hashes), gpg-sig, size and upload-time when known. Never
// "dist-info-metadata": PEP 714 renamed it because pip 22.3-23.1 crash on that key in JSON. Strings
// that are not valid UTF-8 have the bad bytes replaced by U+FFFD. Also the lossless form the proxy
// stores a page in (with upstream URLs).
std::string RenderProjectJson(const ProjectPage& page);

// The root index as JSON: {"meta": {"api-version": "1.0"}, "projects": [{"name": ...}]}.
std::string RenderIndexJson(const ProjectList& list);

}  // namespace ferry::proxy::pypi
