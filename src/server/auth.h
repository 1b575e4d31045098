#pragma once
// Bearer-token checks for the server (ServerOptions::tokens). Tokens are secrets: they are
// compared in constant time and never logged or put in a message.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/http_types.h"
#include "server/router.h"

namespace ferry::server {

// kOk: a token of `tokens` (may read and write); kReadOnly: a token of `read_tokens` only.
enum class AuthResult { kOk, kReadOnly, kMissing, kInvalid };

// Checks an Authorization header value ("Bearer <token>"; the scheme is case-insensitive)
// against `tokens` (read-write) and `read_tokens` (read-only). Every token of both lists is
// compared, each in time that depends only on the lengths.
AuthResult CheckBearer(std::string_view authorization, const std::vector<std::string>& tokens,
                       const std::vector<std::string>& read_tokens = {});

// The web UI's sign-in: a browser cannot put a header on a link or an image, so the UI keeps
// the token in the cookie `ferry_token` (percent-encoded, SameSite=Strict). Returns the token
// of `cookie_header` (a Cookie request header), or nullopt. A cookie grants reads only
// (session.cc), whatever the token, so a forged cross-site request can never write.
inline constexpr std::string_view kTokenCookie = "ferry_token";
std::optional<std::string> TokenFromCookie(std::string_view cookie_header);

// The answer refusing `req` for a route of `access` on a server with tokens (401 without a
// valid token, 403 for a write with a read-only token or the cookie), or nullopt when it may go
// on. The token comes from Authorization, else from the UI's cookie.
std::optional<Response> CheckAccess(const Request& req, Access access,
                                    const std::vector<std::string>& tokens,
                                    const std::vector<std::string>& read_tokens);

// True when a == b, in time that depends only on the lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace ferry::server
