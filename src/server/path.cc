#include "server/path.h"

#include "base/strings.h"

namespace ferry::server {

namespace {

bool BadByte(char c) {
  auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f || c == '\\';
}

Result<std::string> DecodeQueryPart(std::string_view s) {
  std::string plus(s);
  for (char& c : plus) {
    if (c == '+') c = ' ';
  }
  auto d = PercentDecode(plus);
  if (!d) return InvalidArgument("malformed %-escape in query");
  return std::move(*d);
}

}  // namespace

Result<ParsedTarget> ParseTarget(std::string_view target) {
  if (target.empty() || target[0] != '/') {
    return InvalidArgument("request target must be a path starting with '/'");
  }
  if (target.find('#') != std::string_view::npos) {
    return InvalidArgument("request target must not contain a fragment");
  }
  ParsedTarget out;
  std::string_view raw_path = target;
  if (size_t q = target.find('?'); q != std::string_view::npos) {
    raw_path = target.substr(0, q);
    out.raw_query = std::string(target.substr(q + 1));
  }
  std::vector<std::string_view> segments = Split(raw_path.substr(1), '/');
  for (size_t i = 0; i < segments.size(); ++i) {
    std::string_view raw = segments[i];
    if (raw.empty() && i + 1 != segments.size()) {
      return InvalidArgument("request path has an empty segment ('//')");
    }
    auto decoded = PercentDecode(raw);
    if (!decoded) return InvalidArgument("request path has a malformed %-escape");
    for (char c : *decoded) {
      if (c == '/') return InvalidArgument("request path has an encoded '/' (%2F) in a segment");
      if (c == '\0' || BadByte(c)) {
        return InvalidArgument("request path has a backslash, NUL or control character");
      }
    }
    if (*decoded == "." || *decoded == "..") {
      return InvalidArgument("request path has a '.' or '..' segment");
    }
    out.path += '/';
    out.path += *decoded;
  }
  if (!out.raw_query.empty()) {
    for (std::string_view part : Split(out.raw_query, '&')) {
      if (part.empty()) continue;
      size_t eq = part.find('=');
      FERRY_ASSIGN_OR_RETURN(std::string key, DecodeQueryPart(part.substr(0, eq)));
      std::string value;
      if (eq != std::string_view::npos) {
        FERRY_ASSIGN_OR_RETURN(value, DecodeQueryPart(part.substr(eq + 1)));
      }
      out.query.emplace_back(std::move(key), std::move(value));
    }
  }
  return out;
}

}  // namespace ferry::server
