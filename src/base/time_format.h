#pragma once
// Time formats that appear on the wire: SigV4's basic ISO 8601, ISO 8601 with fractions
// (S3 listings, credential expirations) and RFC 7231 dates (Last-Modified).

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace ferry {

using SystemTime = std::chrono::system_clock::time_point;

std::string FormatAmzDate(SystemTime t);                      // 20130524T000000Z
std::string FormatIso8601(SystemTime t);                      // 2013-05-24T00:00:00Z
std::optional<SystemTime> ParseIso8601(std::string_view s);   // 2013-05-24T00:00:00[.123]Z
std::optional<SystemTime> ParseHttpDate(std::string_view s);  // Fri, 24 May 2013 00:00:00 GMT

}  // namespace ferry
