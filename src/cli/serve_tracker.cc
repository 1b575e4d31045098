#include "cli/serve_tracker.h"

#include <filesystem>
#include <optional>

#include "base/strings.h"
#include "tracker/artifacts/artifact_repo.h"
#include "tracker/mlflow/mlflow_routes.h"
#include "tracker/postgres/pg_url.h"
#include "tracker/postgres/postgres_tracker_store.h"
#include "tracker/retention/checkpoint_retention.h"
#include "tracker/sqlite/sqlite_tracker_store.h"

namespace ferry::cli {

namespace {

// "mlflow-artifacts:/1/<run>/artifacts" -> "1/<run>/artifacts"; nullopt for URIs this server
// does not serve (a user's s3://... artifact location).
std::optional<std::string> ServedArtifactPath(std::string_view uri) {
  constexpr std::string_view kScheme = "mlflow-artifacts:";
  if (!uri.starts_with(kScheme)) return std::nullopt;
  uri.remove_prefix(kScheme.size());
  while (uri.starts_with("/")) uri.remove_prefix(1);
  if (uri.empty()) return std::nullopt;  // never the whole root
  return std::string(uri);
}

// The SQLite store at `db`, its directory created when absent.
Result<std::shared_ptr<tracker::TrackerStore>> OpenSqlite(const std::string& db) {
  std::error_code ec;
  std::filesystem::path parent = std::filesystem::path(db).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) {
    return Status(StatusCode::kPermissionDenied, "serve: cannot create the tracker directory '" +
                                                     parent.string() + "': " + ec.message());
  }
  auto store = tracker::SqliteTrackerStore::Open(db);
  if (!store.ok()) {
    return store.status().WithContext("serve: cannot open the tracker database '" + db + "'");
  }
  return std::shared_ptr<tracker::TrackerStore>(std::move(*store));
}

}  // namespace

Result<Tracker> OpenTracker(Context& /*ctx*/, const TrackerFlags& flags,
                            const storage::OpenedUrl& data, const std::string& artifacts_root) {
  std::string db = flags.db;
  std::shared_ptr<tracker::TrackerStore> store;
  std::string note;
  if (tracker::postgres::IsPostgresUrl(db)) {
    // Replicas share this database; their artifacts are shared only when --data is too.
    auto pg = tracker::PostgresTrackerStore::Open(db);
    if (!pg.ok()) return pg.status().WithContext("serve: cannot open the tracker database");
    note = "tracker database " + (*pg)->display();
    store = std::move(*pg);
  }
  if (!store && db.empty()) {
    if (data.url.scheme != storage::Scheme::kLocal) {
      // The caches work on S3 alone; the tracker needs a database file.
      Tracker off;
      off.note =
          "the tracker (/api/2.0/mlflow) is off: --data is not a local directory; give "
          "--tracker-db PATH or postgresql://... to turn it on";
      return off;
    }
    std::string dir = "/" + data.key;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    db = dir + "/tracker/tracker.db";
  }
  if (!store) {
    FERRY_ASSIGN_OR_RETURN(store, OpenSqlite(db));
  }
  Tracker t;
  t.note = std::move(note);
  tracker::mlflow::MlflowOptions options;
  options.artifact_root = flags.artifact_root;
  options.store_type = "SqlStore";
  auto repo = std::make_shared<tracker::artifacts::ArtifactRepo>(data.store, artifacts_root);
  options.delete_artifacts = [repo](std::string_view uri) -> Status {
    auto path = ServedArtifactPath(uri);
    return path ? repo->DeleteTree(*path) : Status();
  };
  // Checkpoint retention (docs/semantics/mlflow-artifacts.md): after uploads and policy changes.
  auto retention = std::make_shared<tracker::retention::CheckpointRetention>(
      store, repo, tracker::retention::RetentionOptions{&ServedArtifactPath});
  options.retention_changed = [retention](const std::string& experiment_id) {
    return retention->ApplyToExperiment(experiment_id);
  };
  t.uploads = retention;
  t.routes = tracker::mlflow::MlflowRoutes(std::move(store), std::move(options));
  return t;
}

}  // namespace ferry::cli
