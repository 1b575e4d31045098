#include "proxy/pypi/names.h"

namespace ferry::proxy::pypi {
namespace {

bool IsSeparator(char c) { return c == '-' || c == '_' || c == '.'; }

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         IsSeparator(c);
}

}  // namespace

std::string NormalizeName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (IsSeparator(c)) {
      while (i + 1 < name.size() && IsSeparator(name[i + 1])) ++i;
      out.push_back('-');
    } else if (c >= 'A' && c <= 'Z') {
      out.push_back(static_cast<char>(c - 'A' + 'a'));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool IsValidProjectName(std::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  for (char c : name) {
    if (!IsNameChar(c)) return false;
  }
  return !IsSeparator(name.front()) && !IsSeparator(name.back());
}

SimpleRoute RouteSimplePath(std::string_view rest, std::string_view simple_root) {
  SimpleRoute route;
  if (rest.empty()) {
    route.kind = SimpleRoute::Kind::kIndex;
    return route;
  }
  bool slash = rest.back() == '/';
  std::string_view name = slash ? rest.substr(0, rest.size() - 1) : rest;
  if (!IsValidProjectName(name)) return route;  // also rejects deeper paths ("a/b/")
  route.project = NormalizeName(name);
  if (slash && name == route.project) {
    route.kind = SimpleRoute::Kind::kProject;
    return route;
  }
  route.kind = SimpleRoute::Kind::kRedirect;
  route.location = std::string(simple_root) + route.project + "/";
  return route;
}

}  // namespace ferry::proxy::pypi
