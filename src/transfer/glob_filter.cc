#include "transfer/glob_filter.h"

#include <fnmatch.h>

namespace ferry::transfer {

namespace {
bool Matches(const std::string& pattern, const std::string& path) {
  if (fnmatch(pattern.c_str(), path.c_str(), 0) == 0) return true;
  if (pattern.find('/') == std::string::npos) {
    size_t slash = path.rfind('/');
    if (slash != std::string::npos && fnmatch(pattern.c_str(), path.c_str() + slash + 1, 0) == 0) {
      return true;
    }
  }
  return false;
}
}  // namespace

bool GlobFilter::Accepts(std::string_view relative_path) const {
  std::string path(relative_path);
  for (const auto& p : exclude_) {
    if (Matches(p, path)) return false;
  }
  if (include_.empty()) return true;
  for (const auto& p : include_) {
    if (Matches(p, path)) return true;
  }
  return false;
}

}  // namespace ferry::transfer
