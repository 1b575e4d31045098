#pragma once
// What the proxy knows about one file of one commit: the facts huggingface_hub and the npm
// client read from a resolve HEAD (X-Repo-Commit, ETag, X-Linked-Etag, X-Linked-Size), and the
// content address the cache stores it under. Read from upstream's answer once, kept in the
// DocCache (a commit's files never change), and turned back into the client's headers.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "base/status.h"
#include "http/http_client.h"
#include "proxy/digest.h"
#include "server/http_types.h"

namespace ferry::proxy::hf {

struct FileMeta {
  std::string commit;  // 40 hex
  std::string etag;    // without quotes: the git blob sha1, or the sha256 for LFS files
  bool lfs = false;    // X-Linked-Etag / X-Linked-Size were given
  uint64_t size = 0;
  Digest digest;  // sha256 (LFS) or git-sha1 (small files)
};

// Reads a resolve answer's headers (the final answer of a HEAD whose relative redirects were
// followed: 200 from resolve-cache, or the 302 to the CDN). kUnavailable (the proxy answers
// 502) when a fact is missing or malformed: no X-Repo-Commit, no usable size, an ETag that is
// neither a git blob sha1 nor a sha256 (then nothing could verify the bytes).
Result<FileMeta> MetaFromResolveAnswer(const http::Response& response, std::string_view url);

// The headers the proxy answers a resolve with: X-Repo-Commit, ETag (quoted), and for LFS files
// X-Linked-Etag and X-Linked-Size; Content-Type application/octet-stream. Never a Xet header or
// a Location.
server::Headers ClientHeaders(const FileMeta& meta);

// DocCache fields and back (nullopt when the fields are incomplete).
std::map<std::string, std::string> MetaToFields(const FileMeta& meta);
std::optional<FileMeta> MetaFromFields(const std::map<std::string, std::string>& fields);

// A quoted, possibly weak ETag header value without W/ and quotes.
std::string BareEtag(std::string_view value);

}  // namespace ferry::proxy::hf
