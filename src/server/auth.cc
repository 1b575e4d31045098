#include "server/auth.h"

#include "base/strings.h"
#include "server/http_types.h"

namespace ferry::server {

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  size_t n = a.size() > b.size() ? a.size() : b.size();
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

AuthResult CheckBearer(std::string_view authorization, const std::vector<std::string>& tokens,
                       const std::vector<std::string>& read_tokens) {
  authorization = Trim(authorization);
  if (authorization.empty()) return AuthResult::kMissing;
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() <= kScheme.size() ||
      !EqualsIgnoreCase(authorization.substr(0, kScheme.size()), kScheme)) {
    return AuthResult::kInvalid;
  }
  std::string_view token = Trim(authorization.substr(kScheme.size()));
  bool write = false;
  bool read = false;
  for (const std::string& t : tokens) write |= ConstantTimeEquals(token, t);
  for (const std::string& t : read_tokens) read |= ConstantTimeEquals(token, t);
  if (token.empty()) return AuthResult::kInvalid;
  if (write) return AuthResult::kOk;
  return read ? AuthResult::kReadOnly : AuthResult::kInvalid;
}

std::optional<std::string> TokenFromCookie(std::string_view cookie_header) {
  // Cookie: a=1; ferry_token=abc%2B; b=2   (RFC 6265 5.4: pairs separated by "; ")
  while (!cookie_header.empty()) {
    size_t end = cookie_header.find(';');
    std::string_view pair = Trim(cookie_header.substr(0, end));
    cookie_header = end == std::string_view::npos ? "" : cookie_header.substr(end + 1);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos || Trim(pair.substr(0, eq)) != kTokenCookie) continue;
    auto value = PercentDecode(Trim(pair.substr(eq + 1)));
    if (value && !value->empty()) return value;
  }
  return std::nullopt;
}

// The answer refusing `req` on a server with tokens, or nullopt when it may go on: a bearer
// token in Authorization, else the web UI's cookie (auth.h), which grants reads only.
std::optional<Response> CheckAccess(const Request& req, Access access,
                                    const std::vector<std::string>& tokens,
                                    const std::vector<std::string>& read_tokens) {
  std::optional<std::string> header;
  if (auto h = req.headers.Get("Authorization")) header = std::string(*h);
  bool from_cookie = false;
  if (!header) {
    if (auto cookie = req.headers.Get("Cookie")) {
      if (auto token = TokenFromCookie(*cookie)) {
        header = "Bearer " + *token;
        from_cookie = true;
      }
    }
  }
  AuthResult auth = CheckBearer(header.value_or(""), tokens, read_tokens);
  if (auth == AuthResult::kMissing || auth == AuthResult::kInvalid) {
    Response r = auth == AuthResult::kMissing
                     ? ErrorResponse(401, "this server needs a bearer token (Authorization)",
                                     "UNAUTHENTICATED")
                     : ErrorResponse(401, "the bearer token is not valid", "UNAUTHENTICATED");
    r.headers.Set("WWW-Authenticate", auth == AuthResult::kMissing
                                          ? "Bearer realm=\"ferry\""
                                          : "Bearer realm=\"ferry\", error=\"invalid_token\"");
    return r;
  }
  if (access == Access::kWrite && (auth == AuthResult::kReadOnly || from_cookie)) {
    return ErrorResponse(403,
                         std::string(from_cookie ? "the UI's sign-in cookie only reads: "
                                                 : "the bearer token is read-only: ") +
                             req.method + " " + req.path + " writes",
                         "PERMISSION_DENIED");
  }
  return std::nullopt;
}

}  // namespace ferry::server
