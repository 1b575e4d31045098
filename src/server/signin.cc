#include "server/signin.h"

#include "base/strings.h"
#include "server/auth.h"
#include "server/browser_policy.h"

namespace ferry::server {

namespace {

constexpr int kCookieMaxAgeSeconds = 30 * 24 * 3600;

std::string CookieHeader(const Request& req, std::string_view value, int max_age) {
  const bool https =
      EqualsIgnoreCase(Trim(req.headers.Get("X-Forwarded-Proto").value_or("")), "https");
  return std::string(kTokenCookie) + "=" + std::string(value) +
         "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" + std::to_string(max_age) +
         (https ? "; Secure" : "");
}

Response NoContent() {
  Response r;
  r.status = 204;
  r.headers.Set("Cache-Control", "no-store");
  return r;
}

}  // namespace

Response HandleSignIn(const Request& req, const AccessPolicy& policy) {
  if (auto refused = CrossSiteWriteRefusal(req, /*token_in_authorization=*/true)) {
    return std::move(*refused);
  }
  if (!policy.AuthRequired()) {
    return ErrorResponse(400, "this server needs no token: there is nothing to sign in to",
                         "INVALID_PARAMETER_VALUE");
  }
  Credential cred = FindCredential(req.headers);
  if (cred.source != CredentialSource::kBearer && cred.source != CredentialSource::kBasic) {
    return ErrorResponse(401, "sign in with the token in Authorization: Bearer TOKEN",
                         "UNAUTHENTICATED");
  }
  if (!TokenPrincipal(cred.token, policy.tokens, policy.read_tokens)) {
    return ErrorResponse(401, "the token is not valid", "UNAUTHENTICATED");
  }
  Response r = NoContent();
  r.headers.Set("Set-Cookie", CookieHeader(req, CookieValueFor(cred.token), kCookieMaxAgeSeconds));
  return r;
}

Response HandleSignOut(const Request& req, const AccessPolicy&) {
  if (auto refused = CrossSiteWriteRefusal(req, /*token_in_authorization=*/false)) {
    return std::move(*refused);
  }
  Response r = NoContent();
  r.headers.Set("Set-Cookie", CookieHeader(req, "", 0));
  return r;
}

Response HandleWhoAmI(const Request& req, const AccessPolicy& policy) {
  Credential cred = FindCredential(req.headers);
  std::optional<Principal> who;
  if (policy.AuthRequired()) who = CredentialPrincipal(cred, policy.tokens, policy.read_tokens);
  std::string access = !policy.AuthRequired()       ? "write"
                       : !who                       ? "none"
                       : *who == Principal::kWriter ? "write"
                                                    : "read";
  const bool signed_in = who && cred.source == CredentialSource::kCookie;
  Response r =
      JsonResponse(200, std::string("{\"auth_required\": ") +
                            (policy.AuthRequired() ? "true" : "false") + ", \"access\": \"" +
                            access + "\", \"signed_in\": " + (signed_in ? "true" : "false") + "}");
  r.headers.Set("Cache-Control", "no-store");
  return r;
}

}  // namespace ferry::server
