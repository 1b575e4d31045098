#pragma once
// The MLflow tracking API's handlers (docs/semantics/mlflow.md): plain functions of a Request
// and the module's dependencies (house style 8), registered by mlflow_routes.cc under
// /api/2.0/mlflow/ and /ajax-api/2.0/mlflow/. Each answers 200 with MLflow's JSON, or an MLflow
// error body (wire.h). Thread-safe as the TrackerStore is.

#include <functional>
#include <memory>
#include <string>

#include "server/http_types.h"
#include "tracker/mlflow/mlflow_routes.h"
#include "tracker/tracker_store.h"

namespace ferry::tracker::mlflow {

struct MlflowDeps {
  std::shared_ptr<TrackerStore> store;
  MlflowOptions options;
  std::function<int64_t()> now_ms;  // the clock (tests pin it)
};

// An experiment's artifact location as answered: the stored one, else
// "<artifact_root>/<experiment id>".
std::string ArtifactLocation(const Experiment& e, const MlflowOptions& options);

using server::Request;
using server::Response;

Response HandleCreateExperiment(const Request& r, MlflowDeps& d);
Response HandleGetExperiment(const Request& r, MlflowDeps& d);
Response HandleGetExperimentByName(const Request& r, MlflowDeps& d);
Response HandleSearchExperiments(const Request& r, MlflowDeps& d);
Response HandleListExperiments(const Request& r, MlflowDeps& d);
Response HandleUpdateExperiment(const Request& r, MlflowDeps& d);
Response HandleDeleteExperiment(const Request& r, MlflowDeps& d);
Response HandleRestoreExperiment(const Request& r, MlflowDeps& d);
Response HandleSetExperimentTag(const Request& r, MlflowDeps& d);

Response HandleCreateRun(const Request& r, MlflowDeps& d);
Response HandleUpdateRun(const Request& r, MlflowDeps& d);
Response HandleGetRun(const Request& r, MlflowDeps& d);
Response HandleSearchRuns(const Request& r, MlflowDeps& d);
Response HandleDeleteRun(const Request& r, MlflowDeps& d);
Response HandleRestoreRun(const Request& r, MlflowDeps& d);
Response HandleLogBatch(const Request& r, MlflowDeps& d);
Response HandleLogMetric(const Request& r, MlflowDeps& d);
Response HandleLogParam(const Request& r, MlflowDeps& d);
Response HandleSetTag(const Request& r, MlflowDeps& d);
Response HandleDeleteTag(const Request& r, MlflowDeps& d);

Response HandleGetMetricHistory(const Request& r, MlflowDeps& d);
Response HandleGetMetricHistoryBulkInterval(const Request& r, MlflowDeps& d);
Response HandleServerInfo(const Request& r, MlflowDeps& d);

Response HandleCreateLoggedModel(const Request& r, MlflowDeps& d);
Response HandleGetLoggedModel(const Request& r, MlflowDeps& d);
Response HandleFinalizeLoggedModel(const Request& r, MlflowDeps& d);
Response HandleDeleteLoggedModel(const Request& r, MlflowDeps& d);
Response HandleSetLoggedModelTags(const Request& r, MlflowDeps& d);
Response HandleDeleteLoggedModelTag(const Request& r, MlflowDeps& d);
Response HandleLogLoggedModelParams(const Request& r, MlflowDeps& d);
Response HandleSearchLoggedModels(const Request& r, MlflowDeps& d);
Response HandleLogInputs(const Request& r, MlflowDeps& d);
Response HandleLogOutputs(const Request& r, MlflowDeps& d);

// The Model Registry (registry_handlers.cc).
Response HandleCreateRegisteredModel(const Request& r, MlflowDeps& d);
Response HandleGetRegisteredModel(const Request& r, MlflowDeps& d);
Response HandleRenameRegisteredModel(const Request& r, MlflowDeps& d);
Response HandleUpdateRegisteredModel(const Request& r, MlflowDeps& d);
Response HandleDeleteRegisteredModel(const Request& r, MlflowDeps& d);
Response HandleSearchRegisteredModels(const Request& r, MlflowDeps& d);
Response HandleGetLatestVersions(const Request& r, MlflowDeps& d);
Response HandleSetRegisteredModelTag(const Request& r, MlflowDeps& d);
Response HandleDeleteRegisteredModelTag(const Request& r, MlflowDeps& d);
Response HandleSetRegisteredModelAlias(const Request& r, MlflowDeps& d);
Response HandleDeleteRegisteredModelAlias(const Request& r, MlflowDeps& d);
Response HandleGetModelVersionByAlias(const Request& r, MlflowDeps& d);
Response HandleCreateModelVersion(const Request& r, MlflowDeps& d);
Response HandleGetModelVersion(const Request& r, MlflowDeps& d);
Response HandleUpdateModelVersion(const Request& r, MlflowDeps& d);
Response HandleTransitionModelVersionStage(const Request& r, MlflowDeps& d);
Response HandleDeleteModelVersion(const Request& r, MlflowDeps& d);
Response HandleSearchModelVersions(const Request& r, MlflowDeps& d);
Response HandleGetModelVersionDownloadUri(const Request& r, MlflowDeps& d);
Response HandleSetModelVersionTag(const Request& r, MlflowDeps& d);
Response HandleDeleteModelVersionTag(const Request& r, MlflowDeps& d);

}  // namespace ferry::tracker::mlflow
