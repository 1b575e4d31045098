#pragma once
// Parsing of the URLs users write. The rules (docs/semantics/urls.md):
//
//   /abs/path, ./rel, rel     local path, taken literally (no decoding), made absolute
//   file:///abs/path          local path, percent-decoded; host must be empty or localhost
//   s3://bucket/key           S3 object or prefix; the key is literal, as in aws-cli, s5cmd and
//                             rclone: no percent-decoding, no query ('%', '?', '#', spaces are
//                             part of the key)
//   PROFILE:s3://bucket/key   the same, with endpoint, region, addressing and credentials from
//                             the AWS shared-config profile PROFILE (copies between endpoints)
//   http(s)://host/path?q     read-only; the key is the path, the query is sent with every
//                             request but never shown (presigned URLs); no user:password@
//
// Parsing is strict: unknown schemes are errors, never ignored, and an
// argument that starts with a known scheme and a colon ("s3:/b/k", "s3:b", "https:/h") is a
// malformed URL, never a local path ("file:/abs/path", RFC 8089's short form, is a file URL).
// Messages about a URL show RedactUrl() of it: no http(s) query, no userinfo.

#include <string>
#include <string_view>

#include "base/status.h"

namespace ferry::storage {

enum class Scheme { kLocal, kS3, kHttp, kHttps };

struct ParsedUrl {
  Scheme scheme = Scheme::kLocal;
  std::string bucket;   // s3: bucket; http(s): host[:port]
  std::string key;      // s3: object key or prefix; local: absolute path without leading '/';
                        // http(s): path and query without the leading '/'
  std::string profile;  // s3 only: the PROFILE of "PROFILE:s3://..." ("" = none written)
  std::string query;    // http(s) only: the raw query string (may hold a signature); never shown
  bool trailing_slash = false;  // the user wrote a trailing '/': a directory or prefix
};

// `cwd` makes relative local paths absolute (empty = the process's working directory).
Result<ParsedUrl> ParseUrl(std::string_view url, std::string_view cwd = {});

// `url` as messages may show it: the query (anything after '?') of http(s) URLs and any
// user:password@ dropped.
std::string RedactUrl(std::string_view url);

// The last path segment of a key ("a/b/c" -> "c", "a/b/" -> "b").
std::string KeyBaseName(std::string_view key);
// `key` as a directory prefix: "a/b" -> "a/b/"; "" and "a/b/" stay as they are.
std::string DirectoryPrefix(std::string key);

// Renders a key of an s3 store back into URL form: "s3://bucket/key" with the key as it is
// (keys are literal), "PROFILE:s3://bucket/key" when `profile` is not empty. ParseUrl of the
// result gives back the same bucket, key and profile.
std::string FormatS3Url(std::string_view bucket, std::string_view key,
                        std::string_view profile = {});

// Whether `name` can be written as the PROFILE of "PROFILE:s3://...": letters, digits, '_', '-',
// '.', '+', '@', not starting with '-'.
bool IsUrlProfileName(std::string_view name);

}  // namespace ferry::storage
