#pragma once
// Routes (method, path pattern) to handler functions: plain functions of a Request (house
// style 8). Modules that serve HTTP (proxy, tracker) only add routes; they never see sockets:
//
//   // in src/proxy/hf_routes.h: a RouteRegistrar-shaped function
//   void AddHfRoutes(server::Router& router, HfDeps& deps);
//   Response HandleResolve(const Request& req, HfDeps& deps);  // unit-tested with values
//   router.Add("GET", "/hf/{repo}/resolve/{rest...}", &HandleResolve, deps);
//
// Patterns are '/'-separated segments: a literal, `{name}` (exactly one non-empty segment) or,
// as the last segment only, `{name...}` (the rest of the path, possibly empty, '/' included).
// A trailing '/' is significant ("/simple/{project}/" does not match "/simple/numpy").
// The first registered route that matches the path wins. Routes are added before the server
// starts; Dispatch() is then const and safe from many threads.
//
// Each route says whether it only reads (Access): a read-only bearer token
// (ServerOptions::read_tokens) may call only kRead routes. By default GET, HEAD and OPTIONS
// routes read and every other method writes; a POST that only reads (a search, a listing)
// says so where it is registered: router.Add("POST", "/runs/search", Access::kRead, handler).
// A route that serves nothing private (the web UI's embedded files) is Access::kPublic: it
// answers without a token even on a server that requires one.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "server/http_types.h"

namespace ferry::server {

using Handler = std::function<Response(const Request&)>;

// What a route does to the server's state, for read-only tokens.
enum class Access { kRead, kWrite, kPublic };
// GET, HEAD and OPTIONS: kRead; any other method: kWrite.
Access DefaultAccess(std::string_view method);

class Router final {
 public:
  // Adds a route; InvalidArgument for a malformed pattern (a catch-all before the end, an
  // empty or duplicate parameter name, a pattern not starting with '/').
  // The route's access is DefaultAccess(method).
  Status Add(std::string method, std::string_view pattern, Handler handler);
  // A route with an explicit access (a POST that only reads: Access::kRead).
  Status Add(std::string method, std::string_view pattern, Access access, Handler handler);
  // The `Response Handle(const Request&, Deps&)` shape of house style 8; `deps` must outlive
  // the router.
  template <typename Deps>
  Status Add(std::string method, std::string_view pattern,
             Response (*handle)(const Request&, Deps&), Deps& deps) {
    return Add(std::move(method), pattern,
               [handle, &deps](const Request& r) { return handle(r, deps); });
  }
  template <typename Deps>
  Status Add(std::string method, std::string_view pattern, Access access,
             Response (*handle)(const Request&, Deps&), Deps& deps) {
    return Add(std::move(method), pattern, access,
               [handle, &deps](const Request& r) { return handle(r, deps); });
  }

  // A route whose handler reads the request body itself, as it arrives (Request::body_stream):
  // uploads of any size. The server applies no body limit to it and sends "100 Continue" to a
  // client that expects one.
  Status AddStreaming(std::string method, std::string_view pattern, Handler handler);
  // True when Dispatch() would run a streaming route for this method and path.
  bool StreamsBody(std::string_view method, std::string_view path) const;

  // The access of the route Dispatch() would run; kRead when none matches (the answer is then
  // 404 or 405 and no handler runs).
  Access AccessFor(std::string_view method, std::string_view path) const;

  // The answer, in any method, for a path that `pattern` matches and no route does (not even in
  // another method, which stays 405): an API's own "no such endpoint" body under its prefix.
  // Checked after every route, in the order added; no handler runs for access checks
  // (AccessFor is kRead).
  Status AddFallback(std::string_view pattern, Handler handler);
  // True when some route already matches exactly this method and pattern text.
  bool Has(std::string_view method, std::string_view pattern) const;

  // Runs the matching route's handler with Request::params filled in. No path match: the
  // first matching fallback, else 404.
  // A path match without the method: 405 with Allow. HEAD without a HEAD route runs the GET
  // route (the server then sends the headers only). Handlers' exceptions are not caught here.
  Response Dispatch(Request request) const;

 private:
  struct Segment {
    enum Kind { kLiteral, kParam, kRest } kind;
    std::string text;  // the literal, or the parameter name
  };
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<Segment> segments;
    Handler handler;
    bool streaming = false;
    Access access = Access::kWrite;
  };
  // The route Dispatch() runs for (method, path) with its params; null when none.
  const Route* Find(std::string_view method, std::string_view path,
                    std::vector<std::pair<std::string, std::string>>* params) const;
  static bool Match(const Route& route, std::string_view path,
                    std::vector<std::pair<std::string, std::string>>* params);
  std::vector<Route> routes_;
  std::vector<Route> fallbacks_;
};

// The signature of a module's "add my routes" function, once its dependencies are bound.
using RouteRegistrar = std::function<Status(Router&)>;

}  // namespace ferry::server
