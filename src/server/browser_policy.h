#pragma once
// What keeps a web page in the user's browser from using `ferry serve` (docs/semantics/serve.md,
// "Threat model"): the rules that only browsers make necessary, in one place.
//
//  - DNS rebinding: a page on evil.example whose name is made to resolve to the server's address
//    reaches it with `Host: evil.example`. A request that gets in without a token must name the
//    server in Host: an IP literal, localhost (or *.localhost), this machine's name, or a name of
//    ServerOptions::allowed_hosts (ferry serve --allowed-host). With a token nothing is needed:
//    the page has no token, and the browser sends no cookie of this origin to another name.
//  - Cross-site request forgery: a page on any origin can make the browser POST a form or a
//    no-cors fetch (text/plain, urlencoded, multipart, or no Content-Type) with no preflight. A
//    request to a route that writes is refused when it comes from another origin (Origin, or
//    Sec-Fetch-Site cross-site/same-site), and a POST that writes without a token in
//    Authorization must carry a Content-Type a page cannot send without a CORS preflight
//    (application/json, ...), which this server never grants (it sends no CORS headers).
//  - Stored XSS: every response gets `X-Content-Type-Options: nosniff`,
//    `Cross-Origin-Resource-Policy: same-origin`, `Referrer-Policy: no-referrer` and, unless the
//    handler set its own (the UI's pages: kUiContentSecurityPolicy), a Content-Security-Policy
//    that sandboxes the document: an HTML or SVG file served from a cache or an artifact store
//    runs no script on this origin even when a browser is sent to it.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/http_types.h"

namespace ferry::server {

// The CSP of every response that does not set one: no script, no plugin, no frame, a unique
// origin (sandbox) even for a document opened directly.
inline constexpr std::string_view kSandboxContentSecurityPolicy =
    "sandbox; default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
// The CSP of the web UI's own pages: scripts and styles from this server's embedded files only
// (no inline script, no eval), data and images from this origin, never framed.
inline constexpr std::string_view kUiContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'";

// Adds the headers above to a response's headers (those the handler set are kept).
void AddSecurityHeaders(Headers& headers);

// True when `host_header` (Host: "name[:port]", "[v6]:port") names this server: an IP literal,
// "localhost" or a name under ".localhost", `machine_name`, or one of `allowed_hosts`
// (case-insensitive, without the port; "*" allows any).
bool HostIsAllowed(std::string_view host_header, std::string_view machine_name,
                   const std::vector<std::string>& allowed_hosts);

// The refusal of a request to a route that writes when a browser sent it from another origin,
// or nullopt. `token_in_authorization`: the request carries a Ferry token in Authorization
// (which a page cannot add without a preflight), so only the origin checks apply.
std::optional<Response> CrossSiteWriteRefusal(const Request& req, bool token_in_authorization);

}  // namespace ferry::server
