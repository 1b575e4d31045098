#include "tracker/postgres/schema.h"

#include <array>

#include "tracker/store_rules.h"

namespace ferry::tracker::postgres {
namespace {

// Migration i brings version i to version i + 1. Never edit a released step; append one.
constexpr std::array<const char*, kSchemaVersion> kMigrations = {
    // 0 -> 1: the first schema.
    R"sql(
CREATE TABLE experiments (
  experiment_id BIGINT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  artifact_location TEXT NOT NULL,
  lifecycle_stage INTEGER NOT NULL,
  creation_time BIGINT NOT NULL,
  last_update_time BIGINT NOT NULL);
CREATE TABLE experiment_tags (
  experiment_id BIGINT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (experiment_id, key));
CREATE TABLE runs (
  run_pk BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_uuid TEXT NOT NULL UNIQUE,
  experiment_id BIGINT NOT NULL,
  name TEXT NOT NULL,
  user_id TEXT NOT NULL,
  status INTEGER NOT NULL,
  start_time BIGINT NOT NULL,
  end_time BIGINT,
  artifact_uri TEXT NOT NULL,
  lifecycle_stage INTEGER NOT NULL);
CREATE INDEX runs_by_experiment ON runs (experiment_id);
CREATE TABLE params (
  run_pk BIGINT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (run_pk, key));
CREATE TABLE tags (
  run_pk BIGINT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (run_pk, key));
CREATE TABLE metric_keys (
  key_id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE points (
  run_pk BIGINT NOT NULL, key_id BIGINT NOT NULL, step BIGINT NOT NULL,
  ts BIGINT NOT NULL, value BIGINT NOT NULL,
  PRIMARY KEY (run_pk, key_id, step, ts, value));
CREATE TABLE latest_metrics (
  run_pk BIGINT NOT NULL, key_id BIGINT NOT NULL,
  step BIGINT NOT NULL, ts BIGINT NOT NULL, value BIGINT NOT NULL,
  PRIMARY KEY (run_pk, key_id));
CREATE TABLE summaries (
  run_pk BIGINT NOT NULL, key_id BIGINT NOT NULL, level INTEGER NOT NULL,
  bucket BIGINT NOT NULL, count BIGINT NOT NULL,
  first_step BIGINT NOT NULL, first_ts BIGINT NOT NULL, first_value BIGINT NOT NULL,
  last_step BIGINT NOT NULL, last_ts BIGINT NOT NULL, last_value BIGINT NOT NULL,
  min_step BIGINT NOT NULL, min_ts BIGINT NOT NULL, min_value BIGINT NOT NULL,
  max_step BIGINT NOT NULL, max_ts BIGINT NOT NULL, max_value BIGINT NOT NULL,
  PRIMARY KEY (run_pk, key_id, level, bucket));
)sql",
    // 1 -> 2: documents (tracker/doc_txn.h): MLflow 3's logged models, run inputs and outputs,
    // the Model Registry. Keys compare as bytes.
    R"sql(
CREATE TABLE docs (
  kind TEXT NOT NULL, key TEXT COLLATE "C" NOT NULL, doc TEXT NOT NULL,
  PRIMARY KEY (kind, key));
)sql",
};

}  // namespace

Status Migrate(Connection& db, const std::string& schema, const std::string& display) {
  auto context = "open tracker database '" + display + "'";
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(db, /*read_only=*/false));
  // Replicas starting at once: one migrates, the others wait here and then find it done.
  FERRY_RETURN_IF_ERROR(db.Exec("lock the schema for migration",
                                "SELECT pg_advisory_xact_lock(hashtext('ferry.tracker:' || $1))",
                                {schema.empty() ? "public" : schema})
                            .status());
  if (!schema.empty()) {
    // Identifiers cannot be parameters: the name travels as a setting, format('%I') quotes it.
    FERRY_RETURN_IF_ERROR(
        db.Exec("create schema", "SELECT set_config('ferry.schema', $1, true)", {schema}).status());
    FERRY_RETURN_IF_ERROR(db.ExecScript("create schema",
                                        "DO $$ BEGIN EXECUTE format('CREATE SCHEMA IF NOT EXISTS "
                                        "%I', current_setting('ferry.schema')); END $$"));
  }
  FERRY_RETURN_IF_ERROR(
      db.ExecScript("create schema_version",
                    "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"));
  int64_t version = 0;
  bool has_row = false;
  {
    FERRY_ASSIGN_OR_RETURN(Rows r,
                           db.Exec("read schema_version", "SELECT version FROM schema_version"));
    has_row = !r.empty();
    if (has_row) version = r.Int(0, 0);
  }
  if (version > kSchemaVersion) {
    return Status(StatusCode::kFailedPrecondition,
                  context + ": its schema version " + std::to_string(version) +
                      " is newer than this ferry understands (" + std::to_string(kSchemaVersion) +
                      "); use a newer ferry");
  }
  for (int64_t v = version; v < kSchemaVersion; ++v) {
    Status s = db.ExecScript("migrate", kMigrations[static_cast<size_t>(v)]);
    if (!s.ok()) return s.WithContext(context + ": migration to version " + std::to_string(v + 1));
  }
  if (!has_row) {
    FERRY_RETURN_IF_ERROR(
        db.Exec("write schema_version", "INSERT INTO schema_version VALUES (0)").status());
  }
  FERRY_RETURN_IF_ERROR(db.Exec("write schema_version", "UPDATE schema_version SET version = $1",
                                {P(int64_t{kSchemaVersion})})
                            .status());
  // The "Default" experiment always exists (id 0).
  int64_t now = rules::NowMs();
  FERRY_RETURN_IF_ERROR(db.Exec("create the Default experiment",
                                "INSERT INTO experiments VALUES (0, 'Default', '', 0, $1, $1) "
                                "ON CONFLICT DO NOTHING",
                                {P(now)})
                            .status());
  return tx.Commit();
}

}  // namespace ferry::tracker::postgres
