// Runs: create, update, read, delete, params and tags, LogBatch, ScanRuns.
#include <algorithm>
#include <map>

#include "tracker/postgres/pg_internal.h"
#include "tracker/postgres/postgres_tracker_store.h"
#include "tracker/store_checks.h"
#include "tracker/store_rules.h"

namespace ferry::tracker {

using postgres::Connection;
using postgres::P;
using postgres::Rows;

namespace {

Status UpsertTag(Connection& c, int64_t run_pk, const Tag& t) {
  return c
      .Exec("set tag",
            "INSERT INTO tags VALUES ($1, $2, $3) ON CONFLICT (run_pk, key) "
            "DO UPDATE SET value = excluded.value",
            {P(run_pk), t.key, t.value})
      .status();
}

Status SetRunName(Connection& c, int64_t run_pk, const std::string& name) {
  return c.Exec("set run name", "UPDATE runs SET name = $1 WHERE run_pk = $2", {name, P(run_pk)})
      .status();
}

}  // namespace

Result<PostgresTrackerStore::RunRow> PostgresTrackerStore::ReadRunRow(Connection& c,
                                                                      const std::string& run_id,
                                                                      bool for_update) {
  FERRY_ASSIGN_OR_RETURN(
      Rows q, c.Exec("read run",
                     for_update ? "SELECT run_pk, experiment_id, name, user_id, status, "
                                  "start_time, end_time, artifact_uri, lifecycle_stage FROM runs "
                                  "WHERE run_uuid = $1 FOR UPDATE"
                                : "SELECT run_pk, experiment_id, name, user_id, status, "
                                  "start_time, end_time, artifact_uri, lifecycle_stage FROM runs "
                                  "WHERE run_uuid = $1",
                     {run_id}));
  if (q.empty()) return NotFound("no run with id '" + run_id + "'");
  RunRow r;
  r.run_pk = q.Int(0, 0);
  r.info.run_id = run_id;
  r.info.experiment_id = std::to_string(q.Int(0, 1));
  r.info.run_name = q.Text(0, 2);
  r.info.user_id = q.Text(0, 3);
  r.info.status = static_cast<RunStatus>(q.Int(0, 4));
  r.info.start_time = q.Int(0, 5);
  if (!q.IsNull(0, 6)) r.info.end_time = q.Int(0, 6);
  r.info.artifact_uri = q.Text(0, 7);
  r.info.stage = static_cast<LifecycleStage>(q.Int(0, 8));
  return r;
}

Result<Run> PostgresTrackerStore::ReadRun(Connection& c, const RunRow& row) {
  Run run;
  run.info = row.info;
  {
    FERRY_ASSIGN_OR_RETURN(Rows q, c.Exec("read params",
                                          "SELECT key, value FROM params WHERE run_pk = $1 "
                                          "ORDER BY key COLLATE \"C\"",
                                          {P(row.run_pk)}));
    for (int i = 0; i < q.size(); ++i) run.params.push_back({q.Text(i, 0), q.Text(i, 1)});
  }
  {
    FERRY_ASSIGN_OR_RETURN(Rows q, c.Exec("read tags",
                                          "SELECT key, value FROM tags WHERE run_pk = $1 "
                                          "ORDER BY key COLLATE \"C\"",
                                          {P(row.run_pk)}));
    for (int i = 0; i < q.size(); ++i) run.tags.push_back({q.Text(i, 0), q.Text(i, 1)});
  }
  FERRY_ASSIGN_OR_RETURN(Rows q, c.Exec("read latest metrics",
                                        "SELECT k.name, l.step, l.ts, l.value FROM latest_metrics "
                                        "l JOIN metric_keys k ON k.key_id = l.key_id "
                                        "WHERE l.run_pk = $1 ORDER BY k.name COLLATE \"C\"",
                                        {P(row.run_pk)}));
  for (int i = 0; i < q.size(); ++i) {
    run.latest_metrics.push_back(
        {q.Text(i, 0), rules::FromOrderedBits(q.Int(i, 3)), q.Int(i, 2), q.Int(i, 1)});
  }
  return run;
}

Result<PostgresTrackerStore::RunRow> PostgresTrackerStore::WritableRun(Connection& c,
                                                                       const char* op,
                                                                       const std::string& run_id) {
  auto row = ReadRunRow(c, run_id, /*for_update=*/true);
  if (!row.ok()) return row.status().WithContext(op);
  if (row->info.stage != LifecycleStage::kActive) {
    return checks::Deleted(op, "run", run_id);
  }
  return row;
}

Result<RunInfo> PostgresTrackerStore::CreateRun(const CreateRunRequest& req) {
  FERRY_ASSIGN_OR_RETURN(std::string name_tag, checks::CreateRunNameTag(req));
  auto exp_id = postgres::ParseId(req.experiment_id);
  if (!exp_id) return NotFound("CreateRun: no experiment with id '" + req.experiment_id + "'");
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(false));
  Connection& c = *s;
  // FOR SHARE: a concurrent delete of the experiment waits for this run (and then deletes it).
  FERRY_RETURN_IF_ERROR(c.Exec("CreateRun",
                               "SELECT 1 FROM experiments WHERE experiment_id = $1 FOR SHARE",
                               {P(*exp_id)})
                            .status());
  auto e = ReadExperiment(c, *exp_id);
  if (!e.ok()) return e.status().WithContext("CreateRun");
  if (e->stage != LifecycleStage::kActive) {
    return checks::Deleted("CreateRun", "experiment", req.experiment_id);
  }
  RunInfo info;
  info.run_id = NewRunId();
  info.experiment_id = e->id;
  info.run_name = NewRunName(req, name_tag);
  info.user_id = req.user_id;
  info.start_time = req.start_time;
  info.artifact_uri = rules::RunArtifactUri(
      req.artifact_root.empty() ? e->artifact_location : req.artifact_root, info.run_id);
  FERRY_ASSIGN_OR_RETURN(
      Rows q,
      c.Exec("CreateRun",
             "INSERT INTO runs (run_uuid, experiment_id, name, user_id, status, "
             "start_time, artifact_uri, lifecycle_stage) "
             "VALUES ($1, $2, $3, $4, $5, $6, $7, 0) RETURNING run_pk",
             {info.run_id, P(*exp_id), info.run_name, info.user_id,
              P(static_cast<int64_t>(info.status)), P(info.start_time), info.artifact_uri}));
  if (q.empty()) return Internal("CreateRun: INSERT returned no key");
  int64_t run_pk = q.Int(0, 0);
  for (const auto& t : req.tags) FERRY_RETURN_IF_ERROR(UpsertTag(c, run_pk, t));
  FERRY_RETURN_IF_ERROR(UpsertTag(c, run_pk, {std::string(rules::kRunNameTag), info.run_name}));
  FERRY_RETURN_IF_ERROR(s.Commit());
  return info;
}

Result<RunInfo> PostgresTrackerStore::UpdateRun(const std::string& run_id, const RunUpdate& u) {
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(false));
  Connection& c = *s;
  FERRY_ASSIGN_OR_RETURN(RunRow row, WritableRun(c, "UpdateRun", run_id));
  if (u.status) row.info.status = *u.status;
  if (u.end_time) row.info.end_time = *u.end_time;
  if (u.run_name && !u.run_name->empty()) {
    row.info.run_name = *u.run_name;
    FERRY_RETURN_IF_ERROR(UpsertTag(c, row.run_pk, {std::string(rules::kRunNameTag), *u.run_name}));
  }
  postgres::Param end;
  if (row.info.end_time) end = P(*row.info.end_time);
  FERRY_RETURN_IF_ERROR(
      c.Exec("UpdateRun", "UPDATE runs SET status = $1, end_time = $2, name = $3 WHERE run_pk = $4",
             {P(static_cast<int64_t>(row.info.status)), end, row.info.run_name, P(row.run_pk)})
          .status());
  FERRY_RETURN_IF_ERROR(s.Commit());
  return row.info;
}

Result<Run> PostgresTrackerStore::GetRun(const std::string& run_id) {
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(true));
  auto row = ReadRunRow(*s, run_id);
  if (!row.ok()) return row.status().WithContext("GetRun");
  return ReadRun(*s, *row);
}

Status PostgresTrackerStore::SetRunStage(const std::string& run_id, LifecycleStage stage) {
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(false));
  FERRY_ASSIGN_OR_RETURN(
      Rows u, (*s).Exec("SetRunStage", "UPDATE runs SET lifecycle_stage = $1 WHERE run_uuid = $2",
                        {P(static_cast<int64_t>(stage)), run_id}));
  if (u.Changes() == 0) return NotFound("SetRunStage: no run with id '" + run_id + "'");
  return s.Commit();
}

Status PostgresTrackerStore::LogBatch(const std::string& run_id,
                                      const std::vector<MetricPoint>& metrics,
                                      const std::vector<Param>& params,
                                      const std::vector<Tag>& tags) {
  FERRY_RETURN_IF_ERROR(checks::BatchKeys(metrics, params, tags));
  std::map<std::string, int64_t> key_ids;
  if (!metrics.empty()) {
    auto ids = KeyIds(metrics);
    if (!ids.ok()) return ids.status().WithContext("LogBatch");
    key_ids = std::move(*ids);
  }
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(false));
  Connection& c = *s;
  // The run's row stays locked until commit: batches to one run take turns, in every replica.
  FERRY_ASSIGN_OR_RETURN(RunRow row, WritableRun(c, "LogBatch", run_id));
  // Params first: a conflicting one refuses the whole batch.
  FERRY_ASSIGN_OR_RETURN(
      auto batch,
      checks::NewParams(run_id, params,
                        [&](const std::string& key) -> Result<std::optional<std::string>> {
                          FERRY_ASSIGN_OR_RETURN(Rows q, c.Exec("LogBatch",
                                                                "SELECT value FROM params WHERE "
                                                                "run_pk = $1 AND key = $2",
                                                                {P(row.run_pk), key}));
                          if (q.empty()) return std::optional<std::string>();
                          return std::optional<std::string>(q.Text(0, 0));
                        }));
  for (const auto& [key, value] : batch) {
    FERRY_RETURN_IF_ERROR(c.Exec("LogBatch",
                                 "INSERT INTO params VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                                 {P(row.run_pk), key, value})
                              .status());
  }
  for (const auto& t : tags) {
    FERRY_RETURN_IF_ERROR(UpsertTag(c, row.run_pk, t));
    if (t.key == rules::kRunNameTag) FERRY_RETURN_IF_ERROR(SetRunName(c, row.run_pk, t.value));
  }
  FERRY_RETURN_IF_ERROR(WriteMetrics(c, row.run_pk, key_ids, metrics));
  return s.Commit();
}

Status PostgresTrackerStore::DeleteTag(const std::string& run_id, const std::string& key) {
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(false));
  Connection& c = *s;
  FERRY_ASSIGN_OR_RETURN(RunRow row, WritableRun(c, "DeleteTag", run_id));
  FERRY_ASSIGN_OR_RETURN(
      Rows d,
      c.Exec("DeleteTag", "DELETE FROM tags WHERE run_pk = $1 AND key = $2", {P(row.run_pk), key}));
  if (d.Changes() == 0) {
    return NotFound("DeleteTag: run '" + run_id + "' has no tag '" + key + "'");
  }
  return s.Commit();
}

Result<std::vector<Run>> PostgresTrackerStore::ScanRuns(const RunScan& scan) {
  std::vector<int64_t> experiments;
  for (const auto& id : scan.experiment_ids) {
    if (auto n = postgres::ParseId(id)) experiments.push_back(*n);
  }
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(true));
  FERRY_ASSIGN_OR_RETURN(Rows q, (*s).Exec("ScanRuns",
                                           "SELECT DISTINCT run_uuid, lifecycle_stage FROM runs "
                                           "WHERE experiment_id = ANY($1::bigint[])",
                                           {postgres::IntArray(experiments)}));
  std::vector<Run> out;
  for (int i = 0; i < q.size(); ++i) {
    if (!checks::InView(static_cast<LifecycleStage>(q.Int(i, 1)), scan.view)) continue;
    FERRY_ASSIGN_OR_RETURN(RunRow row, ReadRunRow(*s, q.Text(i, 0)));
    FERRY_ASSIGN_OR_RETURN(Run run, ReadRun(*s, row));
    out.push_back(std::move(run));
  }
  checks::SortRuns(out);
  return out;
}

}  // namespace ferry::tracker
