#pragma once
// --include / --exclude filters on paths relative to the copy's source.
//
// Patterns use shell globs (fnmatch): '*' and '?' also match '/', '[...]' classes. A pattern
// without '/' is matched against the base name as well as the whole relative path, so
// "*.tmp" excludes temp files at any depth. With includes, an object must match one of them;
// excludes always win.

#include <string>
#include <string_view>
#include <vector>

namespace ferry::transfer {

class GlobFilter final {
 public:
  GlobFilter(std::vector<std::string> include, std::vector<std::string> exclude)
      : include_(std::move(include)), exclude_(std::move(exclude)) {}
  bool Accepts(std::string_view relative_path) const;

 private:
  std::vector<std::string> include_, exclude_;
};

}  // namespace ferry::transfer
