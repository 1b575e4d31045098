#include "tracker/postgres/pg_url.h"

#include "base/redact.h"

namespace ferry::tracker::postgres {
namespace {

struct Parts {
  size_t userinfo_begin = 0, userinfo_end = 0;  // [begin, end) before '@'; empty when none
  size_t query_begin = std::string_view::npos;  // index of '?'
};

Parts Split(std::string_view url) {
  Parts p;
  size_t start = url.find("://");
  start = start == std::string_view::npos ? 0 : start + 3;
  size_t auth_end = url.find_first_of("/?", start);
  if (auth_end == std::string_view::npos) auth_end = url.size();
  size_t at = url.rfind('@', auth_end == 0 ? 0 : auth_end - 1);
  if (at != std::string_view::npos && at >= start && at < auth_end) {
    p.userinfo_begin = start;
    p.userinfo_end = at;
  }
  p.query_begin = url.find('?', start);
  return p;
}

}  // namespace

bool IsPostgresUrl(std::string_view url) {
  return url.starts_with("postgresql://") || url.starts_with("postgres://");
}

std::string RedactPostgresUrl(std::string_view url) {
  Parts p = Split(url);
  std::string out;
  size_t pos = 0;
  if (p.userinfo_end > p.userinfo_begin) {
    size_t colon = url.find(':', p.userinfo_begin);
    if (colon != std::string_view::npos && colon < p.userinfo_end) {
      out.append(url.substr(0, colon + 1)).append(kRedacted);
      pos = p.userinfo_end;
    }
  }
  if (p.query_begin == std::string_view::npos) return out.append(url.substr(pos));
  out.append(url.substr(pos, p.query_begin - pos));
  // Parameters: password=... hidden, the rest kept.
  size_t i = p.query_begin;
  while (i < url.size()) {
    out += url[i];  // '?' or '&'
    size_t end = url.find('&', i + 1);
    if (end == std::string_view::npos) end = url.size();
    std::string_view param = url.substr(i + 1, end - i - 1);
    if (param.starts_with("password=")) {
      out.append("password=").append(kRedacted);
    } else {
      out.append(param);
    }
    i = end;
  }
  return out;
}

std::string PostgresUrlPassword(std::string_view url) {
  Parts p = Split(url);
  if (p.userinfo_end > p.userinfo_begin) {
    size_t colon = url.find(':', p.userinfo_begin);
    if (colon != std::string_view::npos && colon < p.userinfo_end) {
      return std::string(url.substr(colon + 1, p.userinfo_end - colon - 1));
    }
  }
  if (p.query_begin == std::string_view::npos) return "";
  size_t i = p.query_begin;
  while (i < url.size()) {
    size_t end = url.find('&', i + 1);
    if (end == std::string_view::npos) end = url.size();
    std::string_view param = url.substr(i + 1, end - i - 1);
    if (param.starts_with("password=")) return std::string(param.substr(9));
    i = end;
  }
  return "";
}

}  // namespace ferry::tracker::postgres
