#include "cli/serve_tracker.h"

#include <filesystem>

#include "base/strings.h"
#include "tracker/memory/memory_tracker_store.h"
#include "tracker/mlflow/mlflow_routes.h"

namespace ferry::cli {

Result<Tracker> OpenTracker(Context& ctx, const TrackerFlags& flags,
                            const storage::OpenedUrl& data) {
  std::string db = flags.db;
  if (StartsWith(db, "postgresql://") || StartsWith(db, "postgres://")) {
    return Usage(ctx, Status(StatusCode::kUnimplemented,
                             "serve: --tracker-db postgresql://... is not supported yet (give "
                             "a SQLite file path)"));
  }
  if (db.empty()) {
    if (data.url.scheme != storage::Scheme::kLocal) {
      return Usage(ctx, InvalidArgument("serve: --tracker-db PATH is required when --data is not "
                                        "a local directory"));
    }
    std::string dir = "/" + data.key;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    db = dir + "/tracker/tracker.db";
  }
  std::error_code ec;
  std::filesystem::path parent = std::filesystem::path(db).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (ec) {
    return Status(StatusCode::kPermissionDenied, "serve: cannot create the tracker directory '" +
                                                     parent.string() + "': " + ec.message());
  }
  // The SQLite backend (tracker/sqlite) is not in this build yet: the tracker keeps its data in
  // memory, and says so loudly, since a restart loses every experiment and run.
  Tracker t;
  t.warning =
      "ferry serve: WARNING: the MLflow tracker keeps experiments, runs and metrics IN MEMORY "
      "ONLY (no SQLite backend in this build); they are lost when the server stops (tracker db " +
      db + " not used)";
  tracker::mlflow::MlflowOptions options;
  options.artifact_root = flags.artifact_root;
  options.store_type = "MemoryStore";
  t.routes = tracker::mlflow::MlflowRoutes(tracker::MakeMemoryTrackerStore(), std::move(options));
  return t;
}

}  // namespace ferry::cli
