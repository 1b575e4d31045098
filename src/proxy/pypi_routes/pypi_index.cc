#include "proxy/pypi_routes/pypi_index.h"

#include <algorithm>
#include <set>

namespace ferry::proxy {

namespace {

bool IsIndexName(std::string_view name) {
  if (name.empty() || name.size() > 64 || name == "simple" || name == "files") return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) return false;
  }
  return true;
}

}  // namespace

Result<std::vector<PypiIndex>> ParsePypiIndexes(const std::vector<std::string>& values) {
  std::vector<PypiIndex> out;
  std::set<std::string> names;
  bool unnamed = false;
  for (const std::string& v : values) {
    // A space or control character has no place in a URL (and a newline would split the error
    // line): the value is quoted with them shown as '?'.
    auto blank = [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; };
    std::string shown = v;
    std::replace_if(shown.begin(), shown.end(), blank, '?');
    auto bad = [&](const std::string& why) {
      return InvalidArgument("serve: --pypi-upstream '" + shown + "': " + why);
    };
    if (shown != v) return bad("a URL has no spaces or control characters");
    PypiIndex index;
    size_t eq = v.find('=');
    size_t scheme = v.find("://");
    if (eq != std::string::npos && (scheme == std::string::npos || eq < scheme)) {
      index.name = v.substr(0, eq);
      index.upstream = v.substr(eq + 1);
      if (!IsIndexName(index.name)) {
        return bad("the name '" + index.name +
                   "' is not lowercase letters, digits, '.', '_' and '-' (not 'simple' or "
                   "'files')");
      }
    } else {
      index.upstream = v;
    }
    if (!index.upstream.starts_with("http://") && !index.upstream.starts_with("https://")) {
      return bad("not an http:// or https:// URL");
    }
    if (index.upstream.back() != '/') index.upstream += '/';
    if (index.name.empty() ? unnamed : !names.insert(index.name).second) {
      return bad(index.name.empty() ? "the unnamed index is given twice"
                                    : "the name '" + index.name + "' is given twice");
    }
    unnamed = unnamed || index.name.empty();
    out.push_back(std::move(index));
  }
  // The unnamed index first, then the named ones as given (std::stable_partition's temporary
  // buffer is deprecated in clang's view of libstdc++ 12).
  std::vector<PypiIndex> ordered;
  ordered.reserve(out.size() + 1);
  if (!unnamed) ordered.push_back(PypiIndex{.name = "", .upstream = kDefaultPypiUpstream});
  for (PypiIndex& i : out) {
    if (i.name.empty()) ordered.push_back(std::move(i));
  }
  for (PypiIndex& i : out) {
    if (!i.name.empty()) ordered.push_back(std::move(i));
  }
  return ordered;
}

}  // namespace ferry::proxy
