#include "proxy/pypi/url.h"

#include <vector>

#include "base/strings.h"

namespace ferry::proxy::pypi {
namespace {

// scheme "://" authority, for an absolute http(s) URL; the rest is path?query#fragment.
struct Parts {
  std::string scheme;  // lowercase
  std::string_view authority;
  std::string_view path;
  std::string_view query;  // with '?', or empty
};

std::optional<std::string> SchemeOf(std::string_view url) {
  size_t colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  for (size_t i = 0; i < colon; ++i) {
    char c = url[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (i > 0 && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
    if (!ok) return std::nullopt;
  }
  std::string scheme(url.substr(0, colon));
  for (char& c : scheme) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return scheme;
}

// An absolute lowercase http(s) URL with a host, a path and no dot segments: already resolved.
// (Nearly every link on pypi.org; resolving them the long way is most of a big page's parse.)
bool IsResolvedAlready(std::string_view ref) {
  std::string_view rest;
  if (ref.starts_with("https://")) {
    rest = ref.substr(8);
  } else if (ref.starts_with("http://")) {
    rest = ref.substr(7);
  } else {
    return false;
  }
  std::string_view path = rest.substr(0, rest.find_first_of("?#"));
  size_t slash = path.find('/');
  return slash != std::string_view::npos && slash > 0 &&
         path.find("/.") == std::string_view::npos && path.find('\\') == std::string_view::npos;
}

std::optional<Parts> SplitAbsolute(std::string_view url) {
  auto scheme = SchemeOf(url);
  if (!scheme || (*scheme != "http" && *scheme != "https")) return std::nullopt;
  std::string_view rest = url.substr(scheme->size() + 1);
  if (rest.substr(0, 2) != "//") return std::nullopt;
  rest.remove_prefix(2);
  rest = SplitFragment(rest).first;
  size_t end = rest.find_first_of("/?");
  Parts p;
  p.scheme = *scheme;
  p.authority = rest.substr(0, end);
  if (p.authority.empty()) return std::nullopt;
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end);
  size_t q = rest.find('?');
  p.path = rest.substr(0, q);
  p.query = q == std::string_view::npos ? std::string_view() : rest.substr(q);
  return p;
}

// RFC 3986 5.2.4.
std::string RemoveDotSegments(std::string_view path) {
  std::vector<std::string_view> out;
  bool trailing_slash = false;
  size_t i = 0;
  if (!path.empty() && path[0] == '/') i = 1;
  while (i <= path.size()) {
    size_t slash = path.find('/', i);
    std::string_view seg =
        path.substr(i, slash == std::string_view::npos ? path.size() - i : slash - i);
    bool last = slash == std::string_view::npos;
    trailing_slash = last && (seg == "." || seg == "..");
    if (seg == "..") {
      if (!out.empty()) out.pop_back();
    } else if (seg != ".") {
      out.push_back(seg);
    }
    if (last) break;
    i = slash + 1;
  }
  std::string result;
  for (auto seg : out) {
    result.push_back('/');
    result.append(seg);
  }
  if (trailing_slash || result.empty()) result.push_back('/');
  return result;
}

}  // namespace

std::pair<std::string_view, std::string_view> SplitFragment(std::string_view url) {
  size_t hash = url.find('#');
  if (hash == std::string_view::npos) return {url, {}};
  return {url.substr(0, hash), url.substr(hash + 1)};
}

std::optional<std::string> ResolveUrl(std::string_view base, std::string_view ref) {
  ref = Trim(ref);
  auto b = SplitAbsolute(base);
  if (!b) return std::nullopt;
  if (IsResolvedAlready(ref)) return std::string(ref);
  std::string out;
  if (auto scheme = SchemeOf(ref)) {
    if (*scheme != "http" && *scheme != "https") return std::nullopt;
    auto r = SplitAbsolute(ref);
    if (!r) return std::nullopt;
    out = r->scheme + "://" + std::string(r->authority) + RemoveDotSegments(r->path);
    out.append(r->query);
  } else if (ref.substr(0, 2) == "//") {
    return ResolveUrl(base, b->scheme + ":" + std::string(ref));
  } else {
    auto [no_fragment, fragment] = SplitFragment(ref);
    size_t q = no_fragment.find('?');
    std::string_view path = no_fragment.substr(0, q);
    std::string_view query =
        q == std::string_view::npos ? std::string_view() : no_fragment.substr(q);
    out = b->scheme + "://" + std::string(b->authority);
    if (path.empty()) {
      out.append(RemoveDotSegments(b->path));
      out.append(q == std::string_view::npos ? b->query : query);
    } else if (path[0] == '/') {
      out.append(RemoveDotSegments(path));
      out.append(query);
    } else {
      std::string_view dir = b->path.substr(0, b->path.rfind('/') + 1);
      std::string merged = dir.empty() ? "/" : std::string(dir);
      merged.append(path);
      out.append(RemoveDotSegments(merged));
      out.append(query);
    }
    if (ref.find('#') != std::string_view::npos) {
      out.push_back('#');
      out.append(fragment);
    }
    return out;
  }
  auto frag = SplitFragment(ref);
  if (ref.find('#') != std::string_view::npos) {
    out.push_back('#');
    out.append(frag.second);
  }
  return out;
}

bool IsSafeFilename(std::string_view name) {
  if (name.empty() || name.size() > 255 || name == "." || name == "..") return false;
  for (size_t i = 0; i < name.size();) {
    unsigned char c = static_cast<unsigned char>(name[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F || c == '/' || c == '\\') return false;
      ++i;
      continue;
    }
    // Well-formed UTF-8 only (a JSON answer could not carry the name otherwise).
    size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4
                                          : 0;
    if (len == 0 || i + len > name.size()) return false;
    unsigned char c1 = static_cast<unsigned char>(name[i + 1]);
    if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0) || (c == 0xF0 && c1 < 0x90) ||
        (c == 0xF4 && c1 >= 0x90)) {
      return false;
    }
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(name[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

std::optional<std::string> FilenameOfUrl(std::string_view url) {
  url = SplitFragment(url).first;
  url = url.substr(0, url.find('?'));
  size_t slash = url.rfind('/');
  std::string_view last = slash == std::string_view::npos ? url : url.substr(slash + 1);
  if (last.find('%') == std::string_view::npos) {
    if (!IsSafeFilename(last)) return std::nullopt;
    return std::string(last);
  }
  auto decoded = PercentDecode(last);
  if (!decoded || !IsSafeFilename(*decoded)) return std::nullopt;
  return decoded;
}

}  // namespace ferry::proxy::pypi
