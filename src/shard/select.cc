#include "shard/select.h"

#include <fnmatch.h>

namespace ferry::shard {

bool GlobMatch(std::string_view pattern, std::string_view path) {
  std::string p(pattern);
  std::string subject(pattern.find('/') == std::string_view::npos
                          ? path.substr(path.rfind('/') + 1)  // npos + 1 == 0: the whole path
                          : path);
  return fnmatch(p.c_str(), subject.c_str(), 0) == 0;
}

FileFilter::Verdict FileFilter::Check(std::string_view path) const {
  if (!dotfiles) {
    for (size_t start = 0; start <= path.size();) {
      if (start < path.size() && path[start] == '.') return Verdict::kHidden;
      size_t slash = path.find('/', start);
      if (slash == std::string_view::npos) break;
      start = slash + 1;
    }
  }
  if (!include.empty()) {
    bool any = false;
    for (const auto& p : include) any = any || GlobMatch(p, path);
    if (!any) return Verdict::kExcluded;
  }
  for (const auto& p : exclude) {
    if (GlobMatch(p, path)) return Verdict::kExcluded;
  }
  return Verdict::kTake;
}

}  // namespace ferry::shard
