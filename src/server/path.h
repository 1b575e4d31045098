#pragma once
// Request-target validation: the one place that decides which paths reach a handler
// (house style 8). Everything a handler sees in Request::path went through ParseTarget.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace ferry::server {

struct ParsedTarget {
  std::string path;       // percent-decoded, see Request::path
  std::string raw_query;  // undecoded, without '?'
  std::vector<std::pair<std::string, std::string>> query;
};

// Parses an origin-form request target ("/a/b%20c?x=1"). InvalidArgument (the server answers
// 400 with the message) for: anything not starting with '/' (absolute-URI "http://h/x",
// authority and asterisk forms), a fragment, a malformed %XX escape, a segment that is or
// decodes to "." or "..", an encoded '/' (%2F) or any backslash, NUL or control character
// (raw or encoded), and an empty segment ("//") other than a trailing one ("/simple/x/" is
// fine). Query parameters are form-decoded ('+' is a space); a malformed one is an error too.
Result<ParsedTarget> ParseTarget(std::string_view target);

}  // namespace ferry::server
