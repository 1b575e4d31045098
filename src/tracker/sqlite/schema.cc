#include "tracker/sqlite/schema.h"

#include <array>

#include "tracker/store_rules.h"

namespace ferry::tracker::sqlite {
namespace {

// Migration i brings version i to version i + 1. Never edit a released step; append one.
constexpr std::array<const char*, kSchemaVersion> kMigrations = {
    // 0 -> 1: the first schema.
    R"sql(
CREATE TABLE experiments (
  experiment_id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  artifact_location TEXT NOT NULL,
  lifecycle_stage INTEGER NOT NULL,
  creation_time INTEGER NOT NULL,
  last_update_time INTEGER NOT NULL);
CREATE TABLE experiment_tags (
  experiment_id INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (experiment_id, key)) WITHOUT ROWID;
CREATE TABLE runs (
  run_pk INTEGER PRIMARY KEY,
  run_uuid TEXT NOT NULL UNIQUE,
  experiment_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  user_id TEXT NOT NULL,
  status INTEGER NOT NULL,
  start_time INTEGER NOT NULL,
  end_time INTEGER,
  artifact_uri TEXT NOT NULL,
  lifecycle_stage INTEGER NOT NULL);
CREATE INDEX runs_by_experiment ON runs (experiment_id);
CREATE TABLE params (
  run_pk INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (run_pk, key)) WITHOUT ROWID;
CREATE TABLE tags (
  run_pk INTEGER NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (run_pk, key)) WITHOUT ROWID;
CREATE TABLE metric_keys (key_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE points (
  run_pk INTEGER NOT NULL, key_id INTEGER NOT NULL, step INTEGER NOT NULL,
  ts INTEGER NOT NULL, value INTEGER NOT NULL,
  PRIMARY KEY (run_pk, key_id, step, ts, value)) WITHOUT ROWID;
CREATE TABLE latest_metrics (
  run_pk INTEGER NOT NULL, key_id INTEGER NOT NULL,
  step INTEGER NOT NULL, ts INTEGER NOT NULL, value INTEGER NOT NULL,
  PRIMARY KEY (run_pk, key_id)) WITHOUT ROWID;
CREATE TABLE summaries (
  run_pk INTEGER NOT NULL, key_id INTEGER NOT NULL, level INTEGER NOT NULL,
  bucket INTEGER NOT NULL, count INTEGER NOT NULL,
  first_step INTEGER NOT NULL, first_ts INTEGER NOT NULL, first_value INTEGER NOT NULL,
  last_step INTEGER NOT NULL, last_ts INTEGER NOT NULL, last_value INTEGER NOT NULL,
  min_step INTEGER NOT NULL, min_ts INTEGER NOT NULL, min_value INTEGER NOT NULL,
  max_step INTEGER NOT NULL, max_ts INTEGER NOT NULL, max_value INTEGER NOT NULL,
  PRIMARY KEY (run_pk, key_id, level, bucket)) WITHOUT ROWID;
)sql",
    // 1 -> 2: documents (tracker/doc_txn.h): MLflow 3's logged models, run inputs and outputs,
    // the Model Registry. Keys compare as bytes.
    R"sql(
CREATE TABLE docs (
  kind TEXT NOT NULL, key TEXT NOT NULL, doc TEXT NOT NULL,
  PRIMARY KEY (kind, key)) WITHOUT ROWID;
)sql",
};

}  // namespace

Status Migrate(Connection& db, const std::string& path) {
  auto context = "open tracker database '" + path + "'";
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db, /*immediate=*/true));
  FERRY_RETURN_IF_ERROR(
      db.Exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"));
  int64_t version = 0;
  bool has_row = false;
  {
    FERRY_ASSIGN_OR_RETURN(auto q, db.Prepare("SELECT version FROM schema_version"));
    FERRY_ASSIGN_OR_RETURN(has_row, q->Step());
    if (has_row) version = q->Int(0);
  }
  if (version > kSchemaVersion) {
    return Status(StatusCode::kFailedPrecondition,
                  context + ": its schema version " + std::to_string(version) +
                      " is newer than this ferry understands (" + std::to_string(kSchemaVersion) +
                      "); use a newer ferry");
  }
  for (int64_t v = version; v < kSchemaVersion; ++v) {
    Status s = db.Exec(kMigrations[static_cast<size_t>(v)]);
    if (!s.ok()) return s.WithContext(context + ": migration to version " + std::to_string(v + 1));
  }
  if (!has_row) {
    FERRY_RETURN_IF_ERROR(db.Exec("INSERT INTO schema_version VALUES (0)"));
  }
  {
    FERRY_ASSIGN_OR_RETURN(auto set, db.Prepare("UPDATE schema_version SET version = ?"));
    FERRY_RETURN_IF_ERROR(set->Bind(1, int64_t{kSchemaVersion}).Run());
  }
  // The "Default" experiment always exists (id 0).
  {
    FERRY_ASSIGN_OR_RETURN(
        auto def,
        db.Prepare("INSERT OR IGNORE INTO experiments VALUES (0, 'Default', '', 0, ?, ?)"));
    FERRY_RETURN_IF_ERROR(def->Bind(1, rules::NowMs()).Bind(2, rules::NowMs()).Run());
  }
  return tx.Commit();
}

}  // namespace ferry::tracker::sqlite
