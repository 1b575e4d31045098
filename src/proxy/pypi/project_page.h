#pragma once
// The PyPI "simple" repository model: what one project page (PEP 503 HTML or PEP 691 JSON) says
// about a project's files, and the root index's list of projects. Plain values, no I/O.
//
// Both parsers (simple_html.h, simple_json.h) produce these and both renderers consume them, so
// a page read in one format is written in the other without losing a field the formats share
// (size, upload-time and versions exist only in JSON, PEP 700).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ferry::proxy::pypi {

// Hash name (lowercase, e.g. "sha256") -> hex digest, exactly as upstream gave it (lowercased).
using Hashes = std::map<std::string, std::string>;

// PEP 658/714 core metadata: absent, present without hashes ("true"), or present with hashes.
// The renderers write the same value to both data-dist-info-metadata and data-core-metadata
// (PEP 714), and never invent a hash.
struct CoreMetadata {
  bool available = false;
  Hashes hashes;  // may be empty when available
  friend bool operator==(const CoreMetadata&, const CoreMetadata&) = default;
};

// PEP 592: a yanked file, with an optional reason ("" when none was given).
struct Yanked {
  bool yanked = false;
  std::string reason;
  friend bool operator==(const Yanked&, const Yanked&) = default;
};

struct DistFile {
  std::string filename;  // validated: no '/', '\\', control bytes; not "." or ".."
  std::string url;       // absolute http(s) upstream URL, without fragment
  Hashes hashes;
  std::optional<std::string> requires_python;  // decoded text, e.g. ">=3.9,<3.13"
  Yanked yanked;
  CoreMetadata core_metadata;
  std::optional<bool> gpg_sig;             // data-gpg-sig / "gpg-sig"
  std::optional<uint64_t> size;            // PEP 700 (JSON only)
  std::optional<std::string> upload_time;  // PEP 700 (JSON only), ISO 8601 as given
  friend bool operator==(const DistFile&, const DistFile&) = default;

  // The "sha256" hash when it is 64 hex digits; "" otherwise.
  const std::string& Sha256() const;
};

struct ProjectPage {
  std::string name;  // the project's name as upstream gave it (normalized when HTML)
  // The API version upstream declared ("1.0" when it declared none). The renderers write their
  // own version (ApiVersionFor), since they only write the fields this model knows.
  std::string upstream_api_version = "1.0";
  std::optional<std::vector<std::string>> versions;  // PEP 700 (JSON only)
  std::vector<DistFile> files;
  // Links the parser left out (unsafe scheme, bad filename, ...), one line each, for logs.
  std::vector<std::string> skipped;
};

// The root index (/simple/): project names as upstream gave them.
struct ProjectList {
  std::string upstream_api_version = "1.0";
  std::vector<std::string> names;
};

// "1.1" when the page carries everything PEP 700 requires (versions and every file's size),
// "1.0" otherwise.
std::string ApiVersionFor(const ProjectPage& page);

}  // namespace ferry::proxy::pypi
