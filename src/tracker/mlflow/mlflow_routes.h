#pragma once
// The MLflow tracking REST API inside `ferry serve` (docs/semantics/mlflow.md): experiments,
// runs, metrics and server-info under /api/2.0/mlflow/ and /ajax-api/2.0/mlflow/ (the UI's
// prefix), over a TrackerStore. Artifacts are served by tracker/artifacts.

#include <functional>
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
  // Deletes the artifacts under a run's artifact URI when the run is deleted (runs/delete),
  // so deleting a run frees its checkpoints (MLflow leaves them: mlflow#602). Null: artifacts
  // are kept. A URI the server does not serve is left alone (OK).
  std::function<Status(std::string_view artifact_uri)> delete_artifacts;
  // Called after a ferry.retention.* tag of the experiment was set (set-experiment-tag), before
  // the answer: applies the checkpoint retention policy (tracker/retention). Its error is
  // logged; the tag stays set. Null: nothing is applied.
  std::function<Status(const std::string& experiment_id)> retention_changed;
};

// Adds every MLflow route; the handlers share `store` (which must be thread-safe).
server::RouteRegistrar MlflowRoutes(std::shared_ptr<TrackerStore> store, MlflowOptions options);

}  // namespace ferry::tracker::mlflow
