#include "ui/ui_routes.h"

#include <memory>
#include <string>

#include "server/browser_policy.h"

namespace ferry::ui {

namespace {

server::Response Serve(const server::Request& req, const Asset* asset) {
  if (!asset) return server::ErrorResponse(404, "no such UI file: " + req.path);
  server::Response r;
  r.headers.Set("ETag", std::string(asset->etag));
  r.headers.Set("Cache-Control", "no-cache");
  r.headers.Set("X-Content-Type-Options", "nosniff");
  // The one place that runs script on this origin: this server's own embedded files only.
  r.headers.Set("Content-Security-Policy", std::string(server::kUiContentSecurityPolicy));
  auto inm = req.headers.Get("If-None-Match");
  if (inm && (*inm == asset->etag || *inm == "*")) {
    r.status = 304;
    return r;
  }
  r.headers.Set("Content-Type", std::string(ContentTypeFor(asset->path)));
  r.body.assign(asset->data);
  return r;
}

}  // namespace

server::Response HandleIndex(const server::Request& req, UiAssets& assets) {
  return Serve(req, FindAsset(assets.files, "index.html"));
}

server::Response HandleAsset(const server::Request& req, UiAssets& assets) {
  auto path = req.Param("path");
  return Serve(req, path ? FindAsset(assets.files, *path) : nullptr);
}

server::RouteRegistrar UiRoutes() {
  auto assets = std::make_shared<UiAssets>(UiAssets{EmbeddedAssets()});
  return [assets](server::Router& router) -> Status {
    // Public: the embedded files hold no data, and a browser loads them before it can sign in.
    using server::Access;
    FERRY_RETURN_IF_ERROR(router.Add("GET", "/", Access::kPublic, &HandleIndex, *assets));
    return router.Add("GET", "/ui/{path...}", Access::kPublic, &HandleAsset, *assets);
  };
}

}  // namespace ferry::ui
