#pragma once
// The experiment tracker's part of `ferry serve` (docs/semantics/mlflow.md): which TrackerStore
// backs the MLflow API (--tracker-db) and its routes.

#include <memory>
#include <string>

#include "base/status.h"
#include "cli/command.h"
#include "server/router.h"
#include "storage/registry.h"
#include "tracker/artifacts/artifact_routes.h"

namespace ferry::cli {

struct TrackerFlags {
  // A SQLite file path, or postgresql://[user@]host[:port]/dbname (PostgreSQL, shared by
  // several replicas; password from PGPASSWORD or ~/.pgpass); "" =
  // "<--data dir>/tracker/tracker.db" when --data is a local directory (otherwise the tracker is
  // off).
  std::string db;
  // Where new experiments keep their artifacts (MLflow's --default-artifact-root).
  std::string artifact_root = "mlflow-artifacts:/";
};

struct Tracker {
  server::RouteRegistrar routes;  // the MLflow API over the opened store; empty when off
  std::string note;               // said after the listening line when not empty
  // Hears of artifact uploads (checkpoint retention); give it to the artifact routes. May be null.
  std::shared_ptr<tracker::artifacts::UploadObserver> uploads;
};

// Opens the tracker's store and returns the registrar of the MLflow routes. Bad flags are
// usage errors.
// `artifacts_root`: the key under --data's store where /api/2.0/mlflow-artifacts keeps
// artifacts; deleting a run deletes its mlflow-artifacts:/ artifacts there.
Result<Tracker> OpenTracker(Context& ctx, const TrackerFlags& flags, const storage::OpenedUrl& data,
                            const std::string& artifacts_root);

}  // namespace ferry::cli
