#pragma once
// Where the proxy serves a project's files, and how a request for one is traced back to the
// upstream file. The scheme (documented in docs/semantics/pypi.md):
//
//   {files}<project>/sha256/<hex>/<filename>   a file upstream lists with a sha256:
//                                              content-addressed, the cache key is the sha256
//                                              and a fill is verified
//   {files}<project>/nohash/<filename>         a file without a sha256 (not verified)
//   <either file URL> + ".metadata"            its PEP 658 core metadata
//
// <project> is the normalized name and <filename> is percent-encoded, so one path segment each.
// The upstream URL is not in the path: the handler finds it in the project page it stored when
// it served the index page (FindUpstreamFile), which also means a client can only fetch files a
// page listed. `files_root` is the index's files root, ending in '/': "/pypi/files/" for the
// unnamed index, "/pypi/{name}/files/" for a named one (root-relative links, the same bytes
// whatever Host a client used), or the same after "http://host:port".

#include <optional>
#include <string>
#include <string_view>

#include "proxy/pypi/project_page.h"

namespace ferry::proxy::pypi {

// The proxy URL of `file` of project `project` (normalized), without fragment.
std::string ProxyFileUrl(std::string_view files_root, std::string_view project,
                         const DistFile& file);

// `page` with every file URL replaced by its ProxyFileUrl under `project`, the normalized name
// the client asked for (SimpleRoute::project; never the page's own "name", which upstream
// controls). Everything else is kept as is (hashes, metadata hashes, requires-python, yanked,
// size, upload-time).
ProjectPage RewriteForProxy(ProjectPage page, std::string_view files_root,
                            std::string_view project);

// A parsed request path below the files root.
struct FileRequest {
  std::string project;   // normalized
  std::string sha256;    // lowercase hex; "" for nohash
  std::string filename;  // decoded; may end in ".metadata"
};

// Parses the still percent-encoded path after the files root. nullopt (answer 404) when it is
// not one of the two shapes, the project name is not normalized, the hash is not 64 hex digits,
// or the file name is unsafe (IsSafeFilename).
std::optional<FileRequest> ParseFilePath(std::string_view path);

// What to fetch upstream for a request, found in the stored page of its project.
struct UpstreamFile {
  const DistFile* file = nullptr;  // the page's entry (points into the page)
  bool metadata = false;           // the request is for file->url + ".metadata"
  std::string url;                 // the upstream URL to fetch
  // The sha256 the bytes must have ("" when upstream gave none): the file's, or for metadata
  // the core-metadata sha256 (never the file's).
  std::string expected_sha256;
};

// nullopt (404) when the page lists no such file, the sha256 in the path is not the file's, or a
// ".metadata" request names a file without core metadata.
std::optional<UpstreamFile> FindUpstreamFile(const ProjectPage& page, const FileRequest& req);

}  // namespace ferry::proxy::pypi
