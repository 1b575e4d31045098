#pragma once
// PostgreSQL connection URLs as `ferry serve --tracker-db` takes them
// (postgresql://[user[:password]@]host[:port]/dbname[?param=value&...], libpq's URI form) and
// their display form: the password (in the user info or a `password=` parameter) replaced by
// [REDACTED], so a URL can be printed in logs and error messages. Pure functions.

#include <string>
#include <string_view>

namespace ferry::tracker::postgres {

// True for "postgresql://..." and "postgres://...".
bool IsPostgresUrl(std::string_view url);

// `url` with its password replaced by [REDACTED] (unchanged when it has none).
std::string RedactPostgresUrl(std::string_view url);

// The password `url` carries ("" when none), percent-decoding left to libpq: for registering
// it as a secret (base/redact.h), so it is scrubbed wherever it might appear.
std::string PostgresUrlPassword(std::string_view url);

}  // namespace ferry::tracker::postgres
