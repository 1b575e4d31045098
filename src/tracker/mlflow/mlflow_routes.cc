#include "tracker/mlflow/mlflow_routes.h"

#include <chrono>
#include <exception>

#include "tracker/mlflow/handlers.h"
#include "tracker/mlflow/wire.h"

namespace ferry::tracker::mlflow {
namespace {

struct Route {
  const char* method;
  const char* path;  // after the prefix
  Response (*handle)(const Request&, MlflowDeps&);
  // A POST that only reads (a search): read-only tokens may call it (server/router.h, Access).
  bool reads = false;
};

// Every endpoint (docs/semantics/mlflow.md, "Endpoints"). GET endpoints read the query string,
// POST endpoints a JSON body; the searches take both forms.
constexpr Route kRoutes[] = {
    {"POST", "experiments/create", &HandleCreateExperiment},
    {"GET", "experiments/get", &HandleGetExperiment},
    {"GET", "experiments/get-by-name", &HandleGetExperimentByName},
    {"POST", "experiments/search", &HandleSearchExperiments, true},
    {"GET", "experiments/search", &HandleSearchExperiments},
    {"GET", "experiments/list", &HandleListExperiments},
    {"POST", "experiments/update", &HandleUpdateExperiment},
    {"POST", "experiments/delete", &HandleDeleteExperiment},
    {"POST", "experiments/restore", &HandleRestoreExperiment},
    {"POST", "experiments/set-experiment-tag", &HandleSetExperimentTag},
    // npm mlflow 2.0.7's setExperimentTag() forgets the '/' before its action.
    {"POST", "experimentsset-experiment-tag", &HandleSetExperimentTag},
    {"POST", "runs/create", &HandleCreateRun},
    {"POST", "runs/update", &HandleUpdateRun},
    {"GET", "runs/get", &HandleGetRun},
    {"POST", "runs/search", &HandleSearchRuns, true},
    {"GET", "runs/search", &HandleSearchRuns},
    {"POST", "runs/delete", &HandleDeleteRun},
    {"POST", "runs/restore", &HandleRestoreRun},
    {"POST", "runs/log-batch", &HandleLogBatch},
    {"POST", "runs/log-metric", &HandleLogMetric},
    {"POST", "runs/log-parameter", &HandleLogParam},
    {"POST", "runs/set-tag", &HandleSetTag},
    {"POST", "runs/delete-tag", &HandleDeleteTag},
    {"GET", "metrics/get-history", &HandleGetMetricHistory},
    {"GET", "metrics/get-history-bulk-interval", &HandleGetMetricHistoryBulkInterval},
    {"GET", "server-info", &HandleServerInfo},
    // MLflow 3: logged models, a run's inputs and outputs (model_handlers.cc).
    {"POST", "runs/log-inputs", &HandleLogInputs},
    {"POST", "runs/outputs", &HandleLogOutputs},
    {"POST", "logged-models/search", &HandleSearchLoggedModels, true},
    {"POST", "logged-models", &HandleCreateLoggedModel},
    {"GET", "logged-models/{model_id}", &HandleGetLoggedModel},
    {"PATCH", "logged-models/{model_id}", &HandleFinalizeLoggedModel},
    {"DELETE", "logged-models/{model_id}", &HandleDeleteLoggedModel},
    {"PATCH", "logged-models/{model_id}/tags", &HandleSetLoggedModelTags},
    {"DELETE", "logged-models/{model_id}/tags/{tag_key...}", &HandleDeleteLoggedModelTag},
    {"POST", "logged-models/{model_id}/params", &HandleLogLoggedModelParams},
    // The Model Registry (registry_handlers.cc).
    {"POST", "registered-models/create", &HandleCreateRegisteredModel},
    {"POST", "registered-models/rename", &HandleRenameRegisteredModel},
    {"PATCH", "registered-models/update", &HandleUpdateRegisteredModel},
    {"DELETE", "registered-models/delete", &HandleDeleteRegisteredModel},
    {"GET", "registered-models/get", &HandleGetRegisteredModel},
    {"GET", "registered-models/search", &HandleSearchRegisteredModels},
    {"POST", "registered-models/search", &HandleSearchRegisteredModels, true},
    {"POST", "registered-models/get-latest-versions", &HandleGetLatestVersions, true},
    {"GET", "registered-models/get-latest-versions", &HandleGetLatestVersions},
    {"POST", "registered-models/set-tag", &HandleSetRegisteredModelTag},
    {"DELETE", "registered-models/delete-tag", &HandleDeleteRegisteredModelTag},
    {"POST", "registered-models/alias", &HandleSetRegisteredModelAlias},
    {"DELETE", "registered-models/alias", &HandleDeleteRegisteredModelAlias},
    {"GET", "registered-models/alias", &HandleGetModelVersionByAlias},
    {"POST", "model-versions/create", &HandleCreateModelVersion},
    {"PATCH", "model-versions/update", &HandleUpdateModelVersion},
    {"POST", "model-versions/transition-stage", &HandleTransitionModelVersionStage},
    {"DELETE", "model-versions/delete", &HandleDeleteModelVersion},
    {"GET", "model-versions/get", &HandleGetModelVersion},
    {"GET", "model-versions/search", &HandleSearchModelVersions},
    {"POST", "model-versions/search", &HandleSearchModelVersions, true},
    {"GET", "model-versions/get-download-uri", &HandleGetModelVersionDownloadUri},
    {"POST", "model-versions/set-tag", &HandleSetModelVersionTag},
    {"DELETE", "model-versions/delete-tag", &HandleDeleteModelVersionTag},
};

constexpr const char* kPrefixes[] = {"/api/2.0/mlflow/", "/ajax-api/2.0/mlflow/"};

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

server::Handler Bind(Response (*handle)(const Request&, MlflowDeps&),
                     std::shared_ptr<MlflowDeps> deps) {
  return [handle, deps](const Request& r) -> Response {
    // The edge where nothing may escape: a std::exception (allocation failure, a JSON library
    // surprise) becomes MLflow's INTERNAL_ERROR rather than a dropped connection.
    try {
      return handle(r, *deps);
    } catch (const std::exception& e) {
      return wire::Error(500, "INTERNAL_ERROR", std::string("internal error: ") + e.what());
    }
  };
}

}  // namespace

server::RouteRegistrar MlflowRoutes(std::shared_ptr<TrackerStore> store, MlflowOptions options) {
  auto deps = std::make_shared<MlflowDeps>();
  deps->store = std::move(store);
  deps->options = std::move(options);
  deps->now_ms = &NowMs;
  return [deps](server::Router& router) -> Status {
    for (const char* prefix : kPrefixes) {
      for (const Route& route : kRoutes) {
        server::Access access =
            route.reads ? server::Access::kRead : server::DefaultAccess(route.method);
        FERRY_RETURN_IF_ERROR(router.Add(route.method, std::string(prefix) + route.path, access,
                                         Bind(route.handle, deps)));
      }
    }
    // MLflow 3 clients ask /api/3.0/mlflow/server-info.
    for (const char* path : {"/api/3.0/mlflow/server-info", "/ajax-api/3.0/mlflow/server-info"}) {
      FERRY_RETURN_IF_ERROR(router.Add("GET", path, Bind(&HandleServerInfo, deps)));
    }
    // Anything else under MLflow's prefixes is answered as MLflow's server answers an endpoint
    // it does not have (404 ENDPOINT_NOT_FOUND), which clients recognise; a known path in
    // another method stays 405.
    for (const char* prefix : {"/api/2.0/mlflow/", "/ajax-api/2.0/mlflow/", "/api/3.0/mlflow/",
                               "/ajax-api/3.0/mlflow/"}) {
      FERRY_RETURN_IF_ERROR(
          router.AddFallback(std::string(prefix) + "{rest...}", [](const Request& r) {
            return wire::Error(404, "ENDPOINT_NOT_FOUND",
                               "no MLflow endpoint " + r.method + " " + r.path +
                                   " in this server (Ferry serves the ones docs/semantics/"
                                   "mlflow.md lists)");
          }));
    }
    return Status();
  };
}

}  // namespace ferry::tracker::mlflow
