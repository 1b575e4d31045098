#include "tracker/artifacts/artifact_path.h"

#include "base/strings.h"
#include "base/utf8.h"

namespace ferry::tracker::artifacts {

Result<std::string> CleanArtifactPath(std::string_view path, bool allow_empty) {
  std::string_view p = path;
  if (!p.empty() && p.back() == '/') p.remove_suffix(1);
  auto bad = [&](std::string_view why) {
    return InvalidArgument("artifact path '" + std::string(path) +
                           "' is not valid: " + std::string(why));
  };
  if (p.empty()) {
    if (allow_empty) return std::string();
    return bad("it is empty");
  }
  if (p.front() == '/') return bad("it must be relative");
  // Listings are JSON strings: a name that is not UTF-8 could be listed only mangled, and then
  // not fetched by the name listed.
  if (!IsUtf8(p)) return bad("it is not UTF-8");
  for (char c : p) {
    if (c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return bad("backslash or control character");
    }
  }
  std::vector<std::string_view> segments = Split(p, '/');
  for (std::string_view s : segments) {
    if (s.empty() || s == "." || s == "..") return bad("empty, '.' or '..' segment");
  }
  if (segments.front() == kUploadsDir) return bad("reserved for unfinished uploads");
  return std::string(p);
}

std::string JoinKey(std::string_view root_key, std::string_view path) {
  if (root_key.empty()) return std::string(path);
  if (path.empty()) return std::string(root_key);
  std::string key(root_key);
  if (key.back() != '/') key += '/';
  key += path;
  return key;
}

}  // namespace ferry::tracker::artifacts
