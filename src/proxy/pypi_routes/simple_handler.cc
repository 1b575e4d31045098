// GET /pypi/simple/ and /pypi/simple/<project>/: route (404, 301), negotiate (406), then the
// stored or fetched page, its file URLs rewritten to /pypi/files/..., in the negotiated format.

#include "base/log.h"
#include "proxy/pypi/names.h"
#include "proxy/pypi/negotiation.h"
#include "proxy/pypi/proxy_urls.h"
#include "proxy/pypi/simple_html.h"
#include "proxy/pypi/simple_json.h"
#include "proxy/pypi_routes/handlers.h"
#include "proxy/pypi_routes/page_source.h"
#include "proxy/service/blob_response.h"

namespace ferry::proxy::pypi {

namespace {

server::Response WithVary(server::Response r) {
  r.headers.Set("Vary", std::string(kVaryHeaderValue));
  return r;
}

server::Response Rendered(const Negotiated& how, std::string body) {
  server::Response r;
  r.status = 200;
  r.headers.Set("Content-Type", how.content_type);
  r.body = std::move(body);
  return r;
}

}  // namespace

server::Response PageErrorResponse(const Status& status, const PypiDeps& deps) {
  if (status.code() == StatusCode::kNotFound) return server::ErrorResponse(404, status.message());
  if (deps.px->options.offline) return server::ErrorResponse(504, status.message());
  Log(LogLevel::kWarn, "pypi: {}", status.message());
  return server::ErrorResponse(UpstreamStatusFor(status), status.message());
}

server::Response HandleSimple(const server::Request& request, PypiDeps& deps) {
  auto rest = request.Param("rest");
  SimpleRoute route;
  if (rest) {
    route = RouteSimplePath(*rest, deps.SimpleRoot());
  } else {  // "/pypi/[{name}/]simple" itself
    route.kind = SimpleRoute::Kind::kRedirect;
    route.location = deps.SimpleRoot();
  }
  switch (route.kind) {
    case SimpleRoute::Kind::kNotFound:
      return WithVary(server::ErrorResponse(404, "not a project: '" + request.path + "'"));
    case SimpleRoute::Kind::kRedirect: {
      server::Response r = server::TextResponse(301, "see " + route.location + "\n");
      r.headers.Set("Location", route.location);
      return WithVary(std::move(r));
    }
    case SimpleRoute::Kind::kIndex:
    case SimpleRoute::Kind::kProject:
      break;
  }
  auto how = NegotiateSimpleFormat(request.headers.Get("Accept").value_or(""));
  if (!how) return WithVary(server::TextResponse(406, NotAcceptableBody()));
  const bool json = how->format == SimpleFormat::kJson;
  if (route.kind == SimpleRoute::Kind::kIndex) {
    auto index = GetProjectIndex(deps);
    if (!index.ok()) return WithVary(PageErrorResponse(index.status(), deps));
    return WithVary(
        Rendered(*how, json ? RenderIndexJson(index->list) : RenderIndexHtml(index->list)));
  }
  auto got = GetProjectPage(deps, route.project);
  if (!got.ok()) return WithVary(PageErrorResponse(got.status(), deps));
  ProjectPage page = RewriteForProxy(std::move(got->page), deps.FilesRoot(), route.project);
  return WithVary(Rendered(*how, json ? RenderProjectJson(page) : RenderProjectHtml(page)));
}

}  // namespace ferry::proxy::pypi
