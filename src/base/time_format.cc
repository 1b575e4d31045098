#include "base/time_format.h"

#include <cstdio>
#include <cstring>
#include <ctime>

namespace ferry {

namespace {
std::tm ToUtc(SystemTime t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  return tm;
}
}  // namespace

std::string FormatAmzDate(SystemTime t) {
  std::tm tm = ToUtc(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string FormatIso8601(SystemTime t) {
  std::tm tm = ToUtc(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

namespace {
// SystemTime counts nanoseconds in 64 bits: about 1678 to 2262. A date outside (a server's or a
// file's garbage) is no date rather than an overflow.
std::optional<SystemTime> FromTimeT(std::time_t t) {
  constexpr std::time_t kLimit = 9'000'000'000;  // ~285 years either side of 1970
  if (t == static_cast<std::time_t>(-1) || t < -kLimit || t > kLimit) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t);
}
}  // namespace

std::optional<SystemTime> ParseIso8601(std::string_view s) {
  std::string str(s);
  std::tm tm{};
  const char* end = strptime(str.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) return std::nullopt;
  // Optional fraction, then Z or +00:00.
  if (*end == '.') {
    ++end;
    while (*end >= '0' && *end <= '9') ++end;
  }
  if (!(*end == 'Z' || std::strcmp(end, "+00:00") == 0 || *end == '\0')) return std::nullopt;
  return FromTimeT(timegm(&tm));
}

std::optional<SystemTime> ParseHttpDate(std::string_view s) {
  std::string str(s);
  std::tm tm{};
  const char* end = strptime(str.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &tm);
  if (end == nullptr) return std::nullopt;
  return FromTimeT(timegm(&tm));
}

}  // namespace ferry
