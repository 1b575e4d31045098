#pragma once
// The MLflow tracking REST API inside `ferry serve` (docs/semantics/mlflow.md): experiments,
// runs, metrics and server-info under /api/2.0/mlflow/ and /ajax-api/2.0/mlflow/ (the UI's
// prefix), over a TrackerStore. Artifacts are served by tracker/artifacts.

#include <memory>
#include <string>

#include "server/router.h"
#include "tracker/tracker_store.h"

namespace ferry::tracker::mlflow {

struct MlflowOptions {
  // Where experiments created without an artifact_location keep their artifacts:
  // "<artifact_root>/<experiment id>", and runs "<...>/<run id>/artifacts". The default is the
  // proxied artifact scheme clients resolve against /api/2.0/mlflow-artifacts/.
  std::string artifact_root = "mlflow-artifacts:/";
  // What /api/3.0/mlflow/server-info reports as the store ("SqlStore", "MemoryStore").
  std::string store_type = "SqlStore";
};

// Adds every MLflow route; the handlers share `store` (which must be thread-safe).
server::RouteRegistrar MlflowRoutes(std::shared_ptr<TrackerStore> store, MlflowOptions options);

}  // namespace ferry::tracker::mlflow
