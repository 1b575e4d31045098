#pragma once
// The web UI's sign-in (docs/semantics/ui.md, "Tokens"), served by the Server itself because it
// alone holds the tokens. A browser cannot put a header on a link or an image, so the UI trades
// a token for the cookie ferry_token, which only the server sets and scripts cannot read:
//
//   POST /api/ferry/signin   Authorization: Bearer TOKEN (no body)
//        204 + Set-Cookie: ferry_token=CookieValueFor(TOKEN); Path=/; HttpOnly; SameSite=Strict;
//        Max-Age=30 days (Secure when X-Forwarded-Proto is https); 401 for an unknown token;
//        400 on a server without tokens. A page of another origin cannot send it: the
//        Authorization header needs a CORS preflight, which this server never grants.
//   POST /api/ferry/signout  204 + the cookie cleared
//   GET  /api/ferry/whoami   {"auth_required": bool, "access": "write"|"read"|"none",
//                             "signed_in": bool (a valid cookie)}
//
// All three are Access::kPublic routes (they answer without a token).

#include "server/admission.h"
#include "server/http_types.h"

namespace ferry::server {

Response HandleSignIn(const Request& req, const AccessPolicy& policy);
Response HandleSignOut(const Request& req, const AccessPolicy& policy);
Response HandleWhoAmI(const Request& req, const AccessPolicy& policy);

}  // namespace ferry::server
