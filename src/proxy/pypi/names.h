#pragma once
// Project names and the routing of /pypi/simple/ paths (PEP 503 "normalized names").

#include <string>
#include <string_view>

namespace ferry::proxy::pypi {

// PEP 503: lowercase, with every run of '-', '_' and '.' replaced by one '-'
// (re.sub(r"[-_.]+", "-", name).lower()).
std::string NormalizeName(std::string_view name);

// True when `name` is a valid project name (PEP 508: ASCII letters, digits, '-', '_' and '.',
// starting and ending with a letter or digit) of at most 200 bytes: anything else is answered
// 404 without asking upstream.
bool IsValidProjectName(std::string_view name);

// What a request below the simple root is.
struct SimpleRoute {
  enum class Kind {
    kIndex,     // "" : the root project list
    kProject,   // "<normalized>/" : serve project `project`
    kRedirect,  // 301 to `location` (non-normalized name, or a missing trailing '/')
    kNotFound,  // 404
  };
  Kind kind = Kind::kNotFound;
  std::string project;   // the normalized name for kProject and kRedirect
  std::string location;  // for kRedirect: simple_root + normalized + "/"
};

// `rest` is the percent-decoded request path after the simple root (e.g. after
// "/pypi/simple/"); `simple_root` is that root with its trailing '/' ("/pypi/simple/"), used to
// build redirect locations (absolute paths, so clients resolve them against the same host).
SimpleRoute RouteSimplePath(std::string_view rest, std::string_view simple_root);

}  // namespace ferry::proxy::pypi
