#pragma once
// The web UI of `ferry serve` (issue 15; docs/semantics/ui.md): a single-page app with hash
// routing, served from files embedded in the binary.
//   GET /            index.html
//   GET /ui/{path}   an embedded file (JavaScript modules, CSS, uPlot); 404 for anything else
// Answers carry Content-Type, a strong ETag and `Cache-Control: no-cache` (the browser
// revalidates and gets 304 for an unchanged file; a new binary's files are never stale).
// The UI itself only calls the MLflow REST API (/ajax-api/2.0/mlflow/) and the artifact API.

#include <span>

#include "server/http_types.h"
#include "server/router.h"
#include "ui/ui_assets.h"

namespace ferry::ui {

// What the handlers serve from: the embedded files, or others in tests.
struct UiAssets {
  std::span<const Asset> files;  // sorted by path
};

// GET / : index.html.
server::Response HandleIndex(const server::Request& req, UiAssets& assets);
// GET /ui/{path...} : the embedded file `path`; 404 when there is none.
server::Response HandleAsset(const server::Request& req, UiAssets& assets);

// The registrar for serve_command's `modules`, over the embedded files.
server::RouteRegistrar UiRoutes();

}  // namespace ferry::ui
