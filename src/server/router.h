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

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "server/http_types.h"

namespace ferry::server {

using Handler = std::function<Response(const Request&)>;

class Router final {
 public:
  // Adds a route; InvalidArgument for a malformed pattern (a catch-all before the end, an
  // empty or duplicate parameter name, a pattern not starting with '/').
  Status Add(std::string method, std::string_view pattern, Handler handler);
  // The `Response Handle(const Request&, Deps&)` shape of house style 8; `deps` must outlive
  // the router.
  template <typename Deps>
  Status Add(std::string method, std::string_view pattern,
             Response (*handle)(const Request&, Deps&), Deps& deps) {
    return Add(std::move(method), pattern,
               [handle, &deps](const Request& r) { return handle(r, deps); });
  }

  // A route whose handler reads the request body itself, as it arrives (Request::body_stream):
  // uploads of any size. The server applies no body limit to it and sends "100 Continue" to a
  // client that expects one.
  Status AddStreaming(std::string method, std::string_view pattern, Handler handler);
  // True when Dispatch() would run a streaming route for this method and path.
  bool StreamsBody(std::string_view method, std::string_view path) const;

  // True when some route already matches exactly this method and pattern text.
  bool Has(std::string_view method, std::string_view pattern) const;

  // Runs the matching route's handler with Request::params filled in. No path match: 404.
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
  };
  // The route Dispatch() runs for (method, path) with its params; null when none.
  const Route* Find(std::string_view method, std::string_view path,
                    std::vector<std::pair<std::string, std::string>>* params) const;
  static bool Match(const Route& route, std::string_view path,
                    std::vector<std::pair<std::string, std::string>>* params);
  std::vector<Route> routes_;
};

// The signature of a module's "add my routes" function, once its dependencies are bound.
using RouteRegistrar = std::function<Status(Router&)>;

}  // namespace ferry::server
