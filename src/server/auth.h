#pragma once
// Ferry's own credentials (ServerOptions::tokens, read_tokens): where a client may put a token
// and what it grants. Tokens are secrets: they are compared in constant time and never logged,
// put in a message or passed on (server/admission.h removes them from the request).
//
// A client presents a token in one of three ways, so every client can use one:
//  - `Authorization: Bearer TOKEN`: MLflow clients (MLFLOW_TRACKING_TOKEN), ferry.track, curl,
//    Hugging Face clients (HF_TOKEN);
//  - `Authorization: Basic base64(USER:TOKEN)`: pip and anything that takes credentials from an
//    index URL (http://user:TOKEN@nas:8780/pypi/simple/), netrc or a keyring. The user name is
//    ignored; a bare `http://TOKEN@nas/` (no password) works too;
//  - the cookie `ferry_token`, which only the server sets (HttpOnly, SameSite=Strict: POST
//    /api/ferry/signin, server/signin.h) for the web UI. Its value is not the token but
//    CookieValueFor(token), an HMAC of it: a stolen cookie reveals no token, works only as this
//    cookie, and dies with its token. It grants reads only, whatever the token, so a request a
//    browser is tricked into sending can never write.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/http_types.h"

namespace ferry::server {

inline constexpr std::string_view kTokenCookie = "ferry_token";

enum class CredentialSource { kNone, kBearer, kBasic, kCookie };

struct Credential {
  CredentialSource source = CredentialSource::kNone;
  std::string token;  // the secret (kCookie: the cookie's value); empty for kNone
  // An Authorization header that is neither a well-formed Bearer nor Basic credential (another
  // scheme, bad base64): it cannot be a Ferry token.
  bool unreadable_authorization = false;
};

// The credential of a request: Authorization (Bearer, or Basic's password, else its user
// name), else the cookie ferry_token.
Credential FindCredential(const Headers& headers);

// What `token` may do: kWriter for a token of `tokens`, kReader for one of `read_tokens`,
// nullopt for anything else. Every token of both lists is compared, each in time that depends
// only on the lengths.
std::optional<Principal> TokenPrincipal(std::string_view token,
                                        const std::vector<std::string>& tokens,
                                        const std::vector<std::string>& read_tokens);

// Who presents `credential`: TokenPrincipal for a token in Authorization; kReader for a cookie
// whose value is CookieValueFor() of a token of either list; nullopt otherwise.
std::optional<Principal> CredentialPrincipal(const Credential& credential,
                                             const std::vector<std::string>& tokens,
                                             const std::vector<std::string>& read_tokens);

// The value of the UI's cookie for `token`: "v1." + hex HMAC-SHA256(token, a fixed label).
std::string CookieValueFor(std::string_view token);

// The value of a Cookie request header's ferry_token (percent-decoded), or nullopt.
std::optional<std::string> TokenFromCookie(std::string_view cookie_header);

// The Cookie header without ferry_token ("" when nothing else is left).
std::string CookieWithoutToken(std::string_view cookie_header);

// True when a == b, in time that depends only on the lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace ferry::server
