#pragma once
// Whether a request may reach its handler, decided from its header alone, before any of its
// body is read (an unauthenticated client cannot make the server buffer a body): tokens
// (server/auth.h), areas, and the browser rules (server/browser_policy.h). One place for the
// whole decision; the session only calls Admit().
//
// Order: a public route (the UI's embedded files, /healthz) needs nothing. Otherwise:
//  1. the Ferry credential: Bearer, Basic or the UI's cookie. On a server with tokens, a read
//     route of an area with anonymous_read needs none (a lab's caches open to all, the tracker
//     behind tokens); every other route needs a valid one: 401 without (WWW-Authenticate: Bearer,
//     and Basic in areas with basic_challenge, so pip reports the 401 and can send credentials),
//     401 for an unknown token, 403 for a write with a read token or the cookie;
//  2. a request that gets in without a Ferry token must name this server in Host (403 otherwise:
//     DNS rebinding);
//  3. a route that writes: CrossSiteWriteRefusal (403 from another origin; 415 for a POST
//     without a token in Authorization and without a JSON-like Content-Type).
// On success the Ferry credential is removed from the request (the Authorization header, the
// ferry_token cookie) and Request::principal says who it was. The one Authorization a handler
// can see is `Bearer X` with X not a Ferry token, where the route needs none: the client's own
// (a Hub token); Basic and other schemes are removed too.

#include <optional>
#include <string>
#include <vector>

#include "server/http_types.h"
#include "server/router.h"

namespace ferry::server {

// A part of the server's paths with its own rules ("/hf/", "/pypi/").
struct Area {
  std::string prefix;            // paths starting with this belong to the area
  bool anonymous_read = false;   // its read routes need no token even on a server with tokens
  bool basic_challenge = false;  // its 401s offer HTTP Basic too (pip, netrc, keyrings)
};

struct AccessPolicy {
  std::vector<std::string> tokens;       // read and write
  std::vector<std::string> read_tokens;  // read only
  std::vector<Area> areas;
  // Host names besides IP literals, localhost and machine_name for requests without a token.
  std::vector<std::string> allowed_hosts;
  std::string machine_name;  // this host's name (gethostname), filled in by the Server

  bool AuthRequired() const { return !tokens.empty() || !read_tokens.empty(); }
  // The area of `path` (longest prefix), or null.
  const Area* AreaOf(std::string_view path) const;
};

// Decides on `req` (method, path, headers, peer set; body not read) for a route of `access`.
// nullopt: go on (req.principal set, the Ferry credential removed); otherwise the answer, which
// closes the connection (the body is never read).
std::optional<Response> Admit(Request& req, Access access, const AccessPolicy& policy);

}  // namespace ferry::server
