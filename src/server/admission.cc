#include "server/admission.h"

#include "base/strings.h"
#include "server/auth.h"
#include "server/browser_policy.h"

namespace ferry::server {

namespace {

Response Unauthorized(const Area* area, bool missing) {
  Response r = missing ? ErrorResponse(401,
                                       "this server needs a token: Authorization: Bearer TOKEN, "
                                       "or HTTP Basic with the token as the password",
                                       "UNAUTHENTICATED")
                       : ErrorResponse(401, "the token is not valid", "UNAUTHENTICATED");
  r.headers.Add("WWW-Authenticate", missing ? "Bearer realm=\"ferry\""
                                            : "Bearer realm=\"ferry\", error=\"invalid_token\"");
  if (area && area->basic_challenge) {
    r.headers.Add("WWW-Authenticate", "Basic realm=\"ferry\", charset=\"UTF-8\"");
  }
  r.close = true;
  return r;
}

// `kept_bearer`: the Authorization header is a Bearer token that is not Ferry's (a client's own
// Hub token); it stays for the handler. Any other Authorization goes: Ferry's tokens, and
// whatever else (Basic, other schemes), which no handler passes on either.
void RemoveCredential(Request& req, bool kept_bearer) {
  if (!kept_bearer) req.headers.Remove("Authorization");
  // The cookie goes whichever credential was used: a handler has no use for it.
  if (auto cookie = req.headers.Get("Cookie")) {
    std::string rest = CookieWithoutToken(*cookie);
    if (rest.empty()) {
      req.headers.Remove("Cookie");
    } else {
      req.headers.Set("Cookie", std::move(rest));
    }
  }
}

}  // namespace

const Area* AccessPolicy::AreaOf(std::string_view path) const {
  const Area* best = nullptr;
  for (const Area& a : areas) {
    if (StartsWith(path, a.prefix) && (!best || a.prefix.size() > best->prefix.size())) best = &a;
  }
  return best;
}

std::optional<Response> Admit(Request& req, Access access, const AccessPolicy& policy) {
  // Public routes (the UI's files, the server's own /healthz and sign-in routes) see the
  // request as sent: they serve nothing private and pass nothing on.
  if (access == Access::kPublic) return std::nullopt;
  const Area* area = policy.AreaOf(req.path);
  Credential cred = FindCredential(req.headers);
  std::optional<Principal> who;
  if (policy.AuthRequired() && cred.source != CredentialSource::kNone) {
    who = CredentialPrincipal(cred, policy.tokens, policy.read_tokens);
  }
  const bool open_read = access == Access::kRead && area && area->anonymous_read;
  if (policy.AuthRequired() && !who && !open_read) {
    return Unauthorized(area,
                        cred.source == CredentialSource::kNone && !cred.unreadable_authorization);
  }
  const bool from_header =
      who && (cred.source == CredentialSource::kBearer || cred.source == CredentialSource::kBasic);
  // (CredentialPrincipal makes the UI's cookie a reader, whatever its token.)
  if (access == Access::kWrite && who && *who == Principal::kReader) {
    Response r = ErrorResponse(403,
                               std::string(cred.source == CredentialSource::kCookie
                                               ? "the UI's sign-in cookie only reads: "
                                               : "the token is read-only: ") +
                                   req.method + " " + req.path + " writes",
                               "PERMISSION_DENIED");
    r.close = true;
    return r;
  }
  if (!who) {
    auto host = req.headers.Get("Host");
    if (!host || !HostIsAllowed(*host, policy.machine_name, policy.allowed_hosts)) {
      Response r = ErrorResponse(
          403,
          "the Host header '" + std::string(host.value_or("").substr(0, 200)) +
              "' is not a name of this server; a request without a token must use its address, "
              "localhost or a name given with --allowed-host",
          "PERMISSION_DENIED");
      r.close = true;
      return r;
    }
  }
  if (access == Access::kWrite) {
    if (auto refused = CrossSiteWriteRefusal(req, from_header)) return refused;
  }
  // A Ferry token leaves the request here; a Bearer token that is not Ferry's is the client's own.
  RemoveCredential(req, !who && cred.source == CredentialSource::kBearer);
  req.principal = who.value_or(Principal::kAnonymous);
  return std::nullopt;
}

}  // namespace ferry::server
