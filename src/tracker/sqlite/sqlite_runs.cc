// Runs: create, update, read, delete, params and tags, LogBatch, ScanRuns.
#include <algorithm>
#include <map>

#include "tracker/sqlite/sqlite_internal.h"
#include "tracker/sqlite/sqlite_tracker_store.h"
#include "tracker/store_checks.h"
#include "tracker/store_rules.h"

namespace ferry::tracker {

using sqlite::Connection;
using sqlite::Transaction;

namespace {

Status UpsertTag(Connection& c, int64_t run_pk, const Tag& t) {
  FERRY_ASSIGN_OR_RETURN(auto q, c.Prepare("INSERT OR REPLACE INTO tags VALUES (?, ?, ?)"));
  return q->Bind(1, run_pk).Bind(2, t.key).Bind(3, t.value).Run();
}

Status SetRunName(Connection& c, int64_t run_pk, const std::string& name) {
  FERRY_ASSIGN_OR_RETURN(auto q, c.Prepare("UPDATE runs SET name = ? WHERE run_pk = ?"));
  return q->Bind(1, name).Bind(2, run_pk).Run();
}

}  // namespace

Result<SqliteTrackerStore::RunRow> SqliteTrackerStore::ReadRunRow(Connection& c,
                                                                  const std::string& run_id) {
  FERRY_ASSIGN_OR_RETURN(
      auto q, c.Prepare("SELECT run_pk, experiment_id, name, user_id, status, start_time, "
                        "end_time, artifact_uri, lifecycle_stage FROM runs WHERE run_uuid = ?"));
  q->Bind(1, run_id);
  FERRY_ASSIGN_OR_RETURN(bool found, q->Step());
  if (!found) return NotFound("no run with id '" + run_id + "'");
  RunRow r;
  r.run_pk = q->Int(0);
  r.info.run_id = run_id;
  r.info.experiment_id = std::to_string(q->Int(1));
  r.info.run_name = q->Text(2);
  r.info.user_id = q->Text(3);
  r.info.status = static_cast<RunStatus>(q->Int(4));
  r.info.start_time = q->Int(5);
  if (!q->IsNull(6)) r.info.end_time = q->Int(6);
  r.info.artifact_uri = q->Text(7);
  r.info.stage = static_cast<LifecycleStage>(q->Int(8));
  return r;
}

Result<Run> SqliteTrackerStore::ReadRun(Connection& c, const RunRow& row) {
  Run run;
  run.info = row.info;
  {
    FERRY_ASSIGN_OR_RETURN(auto q, c.Prepare("SELECT key, value FROM params WHERE run_pk = ? "
                                             "ORDER BY key"));
    q->Bind(1, row.run_pk);
    for (;;) {
      FERRY_ASSIGN_OR_RETURN(bool r, q->Step());
      if (!r) break;
      run.params.push_back({q->Text(0), q->Text(1)});
    }
  }
  {
    FERRY_ASSIGN_OR_RETURN(auto q, c.Prepare("SELECT key, value FROM tags WHERE run_pk = ? "
                                             "ORDER BY key"));
    q->Bind(1, row.run_pk);
    for (;;) {
      FERRY_ASSIGN_OR_RETURN(bool r, q->Step());
      if (!r) break;
      run.tags.push_back({q->Text(0), q->Text(1)});
    }
  }
  FERRY_ASSIGN_OR_RETURN(auto q,
                         c.Prepare("SELECT k.name, l.step, l.ts, l.value FROM latest_metrics l "
                                   "JOIN metric_keys k ON k.key_id = l.key_id WHERE l.run_pk = ? "
                                   "ORDER BY k.name"));
  q->Bind(1, row.run_pk);
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(bool r, q->Step());
    if (!r) break;
    run.latest_metrics.push_back(
        {q->Text(0), rules::FromOrderedBits(q->Int(3)), q->Int(2), q->Int(1)});
  }
  return run;
}

Result<SqliteTrackerStore::RunRow> SqliteTrackerStore::WritableRun(const char* op,
                                                                   const std::string& run_id) {
  auto row = ReadRunRow(*writer_, run_id);
  if (!row.ok()) return row.status().WithContext(op);
  if (row->info.stage != LifecycleStage::kActive) {
    return checks::Deleted(op, "run", run_id);
  }
  return row;
}

Result<RunInfo> SqliteTrackerStore::CreateRun(const CreateRunRequest& req) {
  FERRY_ASSIGN_OR_RETURN(std::string name_tag, checks::CreateRunNameTag(req));
  auto exp_id = sqlite::ParseId(req.experiment_id);
  if (!exp_id) return NotFound("CreateRun: no experiment with id '" + req.experiment_id + "'");
  MutexLock lock(write_mu_);
  Connection& c = *writer_;
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(c, true));
  auto e = ReadExperiment(c, *exp_id);
  if (!e.ok()) return e.status().WithContext("CreateRun");
  if (e->stage != LifecycleStage::kActive) {
    return checks::Deleted("CreateRun", "experiment", req.experiment_id);
  }
  RunInfo info;
  info.run_id = rules::NewRunId(rng_);
  info.experiment_id = e->id;
  info.run_name = checks::ChooseRunName(req, name_tag, rng_);
  info.user_id = req.user_id;
  info.start_time = req.start_time;
  info.artifact_uri = rules::RunArtifactUri(
      req.artifact_root.empty() ? e->artifact_location : req.artifact_root, info.run_id);
  int64_t run_pk = 0;
  {
    FERRY_ASSIGN_OR_RETURN(
        auto q, c.Prepare("INSERT INTO runs (run_uuid, experiment_id, name, user_id, status, "
                          "start_time, artifact_uri, lifecycle_stage) "
                          "VALUES (?, ?, ?, ?, ?, ?, ?, 0) RETURNING run_pk"));
    q->Bind(1, info.run_id).Bind(2, *exp_id).Bind(3, info.run_name).Bind(4, info.user_id);
    q->Bind(5, static_cast<int64_t>(info.status)).Bind(6, info.start_time);
    q->Bind(7, info.artifact_uri);
    FERRY_ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Internal("CreateRun: INSERT returned no key");
    run_pk = q->Int(0);
    FERRY_RETURN_IF_ERROR(q->Run());
  }
  for (const auto& t : req.tags) FERRY_RETURN_IF_ERROR(UpsertTag(c, run_pk, t));
  FERRY_RETURN_IF_ERROR(UpsertTag(c, run_pk, {std::string(rules::kRunNameTag), info.run_name}));
  FERRY_RETURN_IF_ERROR(tx.Commit());
  return info;
}

Result<RunInfo> SqliteTrackerStore::UpdateRun(const std::string& run_id, const RunUpdate& u) {
  MutexLock lock(write_mu_);
  Connection& c = *writer_;
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(c, true));
  FERRY_ASSIGN_OR_RETURN(RunRow row, WritableRun("UpdateRun", run_id));
  if (u.status) row.info.status = *u.status;
  if (u.end_time) row.info.end_time = *u.end_time;
  if (u.run_name && !u.run_name->empty()) {
    row.info.run_name = *u.run_name;
    FERRY_RETURN_IF_ERROR(UpsertTag(c, row.run_pk, {std::string(rules::kRunNameTag), *u.run_name}));
  }
  {
    FERRY_ASSIGN_OR_RETURN(
        auto q, c.Prepare("UPDATE runs SET status = ?, end_time = ?, name = ? WHERE run_pk = ?"));
    q->Bind(1, static_cast<int64_t>(row.info.status));
    if (row.info.end_time) {
      q->Bind(2, *row.info.end_time);
    } else {
      q->BindNull(2);
    }
    FERRY_RETURN_IF_ERROR(q->Bind(3, row.info.run_name).Bind(4, row.run_pk).Run());
  }
  FERRY_RETURN_IF_ERROR(tx.Commit());
  return row.info;
}

Result<Run> SqliteTrackerStore::GetRun(const std::string& run_id) {
  FERRY_ASSIGN_OR_RETURN(Reader r, AcquireReader());
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(*r, false));
  auto row = ReadRunRow(*r, run_id);
  if (!row.ok()) return row.status().WithContext("GetRun");
  return ReadRun(*r, *row);
}

Status SqliteTrackerStore::SetRunStage(const std::string& run_id, LifecycleStage stage) {
  MutexLock lock(write_mu_);
  Connection& c = *writer_;
  FERRY_ASSIGN_OR_RETURN(auto q,
                         c.Prepare("UPDATE runs SET lifecycle_stage = ? WHERE run_uuid = ?"));
  FERRY_RETURN_IF_ERROR(q->Bind(1, static_cast<int64_t>(stage)).Bind(2, run_id).Run());
  if (c.Changes() == 0) return NotFound("SetRunStage: no run with id '" + run_id + "'");
  return Status();
}

Status SqliteTrackerStore::LogBatch(const std::string& run_id,
                                    const std::vector<MetricPoint>& metrics,
                                    const std::vector<Param>& params,
                                    const std::vector<Tag>& tags) {
  FERRY_RETURN_IF_ERROR(checks::BatchKeys(metrics, params, tags));
  MutexLock lock(write_mu_);
  Status s = LogBatchLocked(run_id, metrics, params, tags);
  if (!s.ok()) key_ids_.clear();  // a rolled-back transaction may have added metric keys
  return s;
}

Status SqliteTrackerStore::LogBatchLocked(const std::string& run_id,
                                          const std::vector<MetricPoint>& metrics,
                                          const std::vector<Param>& params,
                                          const std::vector<Tag>& tags) {
  Connection& c = *writer_;
  {
    FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(c, true));
    FERRY_ASSIGN_OR_RETURN(RunRow row, WritableRun("LogBatch", run_id));
    // Params first: a conflicting one refuses the whole batch.
    FERRY_ASSIGN_OR_RETURN(
        auto batch,
        checks::NewParams(run_id, params,
                          [&](const std::string& key) -> Result<std::optional<std::string>> {
                            FERRY_ASSIGN_OR_RETURN(
                                auto q, c.Prepare("SELECT value FROM params WHERE run_pk = ? AND "
                                                  "key = ?"));
                            q->Bind(1, row.run_pk).Bind(2, key);
                            FERRY_ASSIGN_OR_RETURN(bool found, q->Step());
                            if (!found) return std::optional<std::string>();
                            return std::optional<std::string>(q->Text(0));
                          }));
    for (const auto& [key, value] : batch) {
      FERRY_ASSIGN_OR_RETURN(auto q, c.Prepare("INSERT OR IGNORE INTO params VALUES (?, ?, ?)"));
      FERRY_RETURN_IF_ERROR(q->Bind(1, row.run_pk).Bind(2, key).Bind(3, value).Run());
    }
    for (const auto& t : tags) {
      FERRY_RETURN_IF_ERROR(UpsertTag(c, row.run_pk, t));
      if (t.key == rules::kRunNameTag) FERRY_RETURN_IF_ERROR(SetRunName(c, row.run_pk, t.value));
    }
    FERRY_RETURN_IF_ERROR(WriteMetrics(row.run_pk, metrics));
    return tx.Commit();
  }
}

Status SqliteTrackerStore::DeleteTag(const std::string& run_id, const std::string& key) {
  MutexLock lock(write_mu_);
  Connection& c = *writer_;
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(c, true));
  FERRY_ASSIGN_OR_RETURN(RunRow row, WritableRun("DeleteTag", run_id));
  {
    FERRY_ASSIGN_OR_RETURN(auto q, c.Prepare("DELETE FROM tags WHERE run_pk = ? AND key = ?"));
    FERRY_RETURN_IF_ERROR(q->Bind(1, row.run_pk).Bind(2, key).Run());
  }
  if (c.Changes() == 0) {
    return NotFound("DeleteTag: run '" + run_id + "' has no tag '" + key + "'");
  }
  return tx.Commit();
}

Result<std::vector<Run>> SqliteTrackerStore::ScanRuns(const RunScan& scan) {
  FERRY_ASSIGN_OR_RETURN(Reader r, AcquireReader());
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(*r, false));
  std::vector<std::string> run_ids;
  for (const auto& id : scan.experiment_ids) {
    auto n = sqlite::ParseId(id);
    if (!n) continue;
    FERRY_ASSIGN_OR_RETURN(auto q, (*r).Prepare("SELECT run_uuid, lifecycle_stage FROM runs "
                                                "WHERE experiment_id = ?"));
    q->Bind(1, *n);
    for (;;) {
      FERRY_ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) break;
      if (checks::InView(static_cast<LifecycleStage>(q->Int(1)), scan.view)) {
        run_ids.push_back(q->Text(0));
      }
    }
  }
  std::sort(run_ids.begin(), run_ids.end());
  run_ids.erase(std::unique(run_ids.begin(), run_ids.end()), run_ids.end());
  std::vector<Run> out;
  for (const auto& id : run_ids) {
    FERRY_ASSIGN_OR_RETURN(RunRow row, ReadRunRow(*r, id));
    FERRY_ASSIGN_OR_RETURN(Run run, ReadRun(*r, row));
    out.push_back(std::move(run));
  }
  checks::SortRuns(out);
  return out;
}

}  // namespace ferry::tracker
