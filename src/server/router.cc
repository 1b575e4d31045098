#include "server/router.h"

#include <set>

#include "base/strings.h"

namespace ferry::server {

Access DefaultAccess(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS" ? Access::kRead
                                                                    : Access::kWrite;
}

Status Router::Add(std::string method, std::string_view pattern, Handler handler) {
  Access access = DefaultAccess(method);
  return Add(std::move(method), pattern, access, std::move(handler));
}

Status Router::Add(std::string method, std::string_view pattern, Access access, Handler handler) {
  if (pattern.empty() || pattern[0] != '/') {
    return InvalidArgument("route pattern '" + std::string(pattern) + "' must start with '/'");
  }
  Route route{.method = std::move(method),
              .pattern = std::string(pattern),
              .handler = std::move(handler),
              .access = access};
  std::vector<std::string_view> parts = Split(pattern.substr(1), '/');
  std::set<std::string, std::less<>> names;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view p = parts[i];
    if (p.size() >= 2 && p.front() == '{' && p.back() == '}') {
      std::string_view name = p.substr(1, p.size() - 2);
      Segment::Kind kind = Segment::kParam;
      if (EndsWith(name, "...")) {
        name.remove_suffix(3);
        kind = Segment::kRest;
        if (i + 1 != parts.size()) {
          return InvalidArgument("route pattern '" + std::string(pattern) +
                                 "': a {name...} catch-all must be the last segment");
        }
      }
      if (name.empty() || !names.emplace(name).second) {
        return InvalidArgument("route pattern '" + std::string(pattern) +
                               "': empty or duplicate parameter name");
      }
      route.segments.push_back({kind, std::string(name)});
    } else {
      route.segments.push_back({Segment::kLiteral, std::string(p)});
    }
  }
  routes_.push_back(std::move(route));
  return Status();
}

Status Router::AddFallback(std::string_view pattern, Handler handler) {
  FERRY_RETURN_IF_ERROR(Add("*", pattern, Access::kRead, std::move(handler)));
  fallbacks_.push_back(std::move(routes_.back()));
  routes_.pop_back();
  return Status();
}

Status Router::AddStreaming(std::string method, std::string_view pattern, Handler handler) {
  FERRY_RETURN_IF_ERROR(Add(std::move(method), pattern, std::move(handler)));
  routes_.back().streaming = true;
  return Status();
}

const Router::Route* Router::Find(std::string_view method, std::string_view path,
                                  std::vector<std::pair<std::string, std::string>>* params) const {
  const Route* get_route = nullptr;
  std::vector<std::pair<std::string, std::string>> p;
  for (const Route& r : routes_) {
    if (!Match(r, path, &p)) continue;
    if (r.method == method) {
      *params = std::move(p);
      return &r;
    }
    if (method == "HEAD" && r.method == "GET" && get_route == nullptr) {
      get_route = &r;
      *params = p;
    }
  }
  return get_route;
}

bool Router::StreamsBody(std::string_view method, std::string_view path) const {
  std::vector<std::pair<std::string, std::string>> params;
  const Route* r = Find(method, path, &params);
  return r != nullptr && r->streaming;
}

Access Router::AccessFor(std::string_view method, std::string_view path) const {
  std::vector<std::pair<std::string, std::string>> params;
  const Route* r = Find(method, path, &params);
  return r == nullptr ? Access::kRead : r->access;
}

bool Router::Has(std::string_view method, std::string_view pattern) const {
  for (const Route& r : routes_) {
    if (r.method == method && r.pattern == pattern) return true;
  }
  return false;
}

bool Router::Match(const Route& route, std::string_view path,
                   std::vector<std::pair<std::string, std::string>>* params) {
  std::vector<std::string_view> parts = Split(path.substr(1), '/');
  params->clear();
  size_t i = 0;
  for (const Segment& seg : route.segments) {
    if (seg.kind == Segment::kRest) {
      std::string rest;
      for (size_t j = i; j < parts.size(); ++j) {
        if (j > i) rest += '/';
        rest += parts[j];
      }
      params->emplace_back(seg.text, std::move(rest));
      return true;
    }
    if (i >= parts.size()) return false;
    if (seg.kind == Segment::kLiteral) {
      if (parts[i] != seg.text) return false;
    } else {
      if (parts[i].empty()) return false;
      params->emplace_back(seg.text, std::string(parts[i]));
    }
    ++i;
  }
  return i == parts.size();
}

Response Router::Dispatch(Request request) const {
  std::vector<std::pair<std::string, std::string>> params;
  if (const Route* r = Find(request.method, request.path, &params)) {
    request.params = std::move(params);
    return r->handler(request);
  }
  std::set<std::string> allowed;
  for (const Route& r : routes_) {
    if (Match(r, request.path, &params)) allowed.insert(r.method);
  }
  if (allowed.empty()) {
    for (const Route& f : fallbacks_) {
      if (Match(f, request.path, &params)) {
        request.params = std::move(params);
        return f.handler(request);
      }
    }
    return ErrorResponse(404, "no route for " + request.path);
  }
  std::string allow;
  if (allowed.contains("GET")) allowed.insert("HEAD");
  for (const std::string& m : allowed) allow += (allow.empty() ? "" : ", ") + m;
  Response r = ErrorResponse(405, "method " + request.method + " not allowed for " + request.path +
                                      " (allowed: " + allow + ")");
  r.headers.Set("Allow", allow);
  return r;
}

}  // namespace ferry::server
