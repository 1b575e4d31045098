#pragma once
// The simple indexes `ferry serve` caches (docs/semantics/pypi.md, "Several indexes"): one
// unnamed index at /pypi/simple/ (PyPI unless told otherwise) and any number of named ones at
// /pypi/{name}/simple/, e.g. PyTorch's per-CUDA wheel indexes beside PyPI:
//   --pypi-upstream https://pypi.org/simple/                          -> /pypi/simple/
//   --pypi-upstream torch-cu124=https://download.pytorch.org/whl/cu124 -> /pypi/torch-cu124/simple/
// Each has its own pages and files root (/pypi/{name}/files/); blobs are shared by sha256.

#include <string>
#include <vector>

#include "base/status.h"

namespace ferry::proxy {

struct PypiIndex {
  std::string name;      // "" for the unnamed index
  std::string upstream;  // the simple index URL, ending in '/'
  // "/pypi/" or "/pypi/{name}/".
  std::string Root() const { return name.empty() ? "/pypi/" : "/pypi/" + name + "/"; }
};

// The default unnamed index.
inline constexpr const char* kDefaultPypiUpstream = "https://pypi.org/simple/";

// Reads --pypi-upstream values ("URL" or "NAME=URL"). The unnamed index comes first: the one
// given, else kDefaultPypiUpstream. kInvalidArgument naming the value when a URL is not
// http(s)://, a name is not [a-z0-9][a-z0-9._-]* (at most 64) or is "simple" or "files", or a
// name (or the unnamed index) is given twice.
Result<std::vector<PypiIndex>> ParsePypiIndexes(const std::vector<std::string>& values);

}  // namespace ferry::proxy
