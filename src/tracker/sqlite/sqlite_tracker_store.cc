// Opening, the connection pool and experiments (runs: sqlite_runs.cc; metrics:
// sqlite_metrics.cc).
#include "tracker/sqlite/sqlite_tracker_store.h"

#include <algorithm>

#include "base/strings.h"
#include "tracker/sqlite/schema.h"
#include "tracker/sqlite/sqlite_internal.h"
#include "tracker/store_checks.h"
#include "tracker/store_rules.h"

namespace ferry::tracker {

using sqlite::Connection;
using sqlite::Transaction;

Result<std::shared_ptr<SqliteTrackerStore>> SqliteTrackerStore::Open(
    const std::string& path, const SqliteTrackerOptions& options) {
  FERRY_ASSIGN_OR_RETURN(auto writer, Connection::Open(path, options.busy_timeout_ms));
  // WAL: readers never wait for the writer, and a commit is one append (see the header for
  // synchronous=NORMAL vs FULL).
  Status s = writer->Exec("PRAGMA journal_mode=WAL");
  if (s.ok()) {
    s = writer->Exec(options.durability == SqliteTrackerOptions::Durability::kPowerLoss
                         ? "PRAGMA synchronous=FULL"
                         : "PRAGMA synchronous=NORMAL");
  }
  if (s.ok()) s = writer->Exec("PRAGMA cache_size=-" + std::to_string(options.cache_mib * 1024));
  if (s.ok()) {
    s = writer->Exec("PRAGMA wal_autocheckpoint=" +
                     std::to_string(options.wal_autocheckpoint_pages));
  }
  if (s.ok()) s = sqlite::Migrate(*writer, path);
  if (!s.ok()) return s.WithContext("open tracker database '" + path + "'");
  return std::shared_ptr<SqliteTrackerStore>(
      new SqliteTrackerStore(path, options, std::move(writer)));
}

SqliteTrackerStore::SqliteTrackerStore(std::string path, SqliteTrackerOptions options,
                                       std::unique_ptr<Connection> writer)
    : path_(std::move(path)),
      options_(options),
      writer_(std::move(writer)),
      rng_(std::random_device{}()) {}

Result<std::unique_ptr<Connection>> SqliteTrackerStore::OpenConnection() {
  FERRY_ASSIGN_OR_RETURN(auto c, Connection::Open(path_, options_.busy_timeout_ms));
  FERRY_RETURN_IF_ERROR(c->Exec("PRAGMA cache_size=-" + std::to_string(options_.cache_mib * 1024)));
  return c;
}

Result<SqliteTrackerStore::Reader> SqliteTrackerStore::AcquireReader() {
  {
    MutexLock lock(pool_mu_);
    if (!idle_readers_.empty()) {
      auto c = std::move(idle_readers_.back());
      idle_readers_.pop_back();
      return Reader(this, std::move(c));
    }
  }
  FERRY_ASSIGN_OR_RETURN(auto c, OpenConnection());
  return Reader(this, std::move(c));
}

void SqliteTrackerStore::ReleaseReader(std::unique_ptr<Connection> c) {
  MutexLock lock(pool_mu_);
  if (static_cast<int>(idle_readers_.size()) < options_.max_idle_readers) {
    idle_readers_.push_back(std::move(c));
  }
}

Result<Experiment> SqliteTrackerStore::ReadExperiment(Connection& c, int64_t id) {
  Experiment e;
  {
    FERRY_ASSIGN_OR_RETURN(auto q, c.Prepare("SELECT name, artifact_location, lifecycle_stage, "
                                             "creation_time, last_update_time FROM experiments "
                                             "WHERE experiment_id = ?"));
    q->Bind(1, id);
    FERRY_ASSIGN_OR_RETURN(bool found, q->Step());
    if (!found) return NotFound("no experiment with id '" + std::to_string(id) + "'");
    e.id = std::to_string(id);
    e.name = q->Text(0);
    e.artifact_location = q->Text(1);
    e.stage = static_cast<LifecycleStage>(q->Int(2));
    e.creation_time = q->Int(3);
    e.last_update_time = q->Int(4);
  }
  FERRY_ASSIGN_OR_RETURN(auto t, c.Prepare("SELECT key, value FROM experiment_tags "
                                           "WHERE experiment_id = ? ORDER BY key"));
  t->Bind(1, id);
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(bool row, t->Step());
    if (!row) break;
    e.tags.push_back({t->Text(0), t->Text(1)});
  }
  return e;
}

Result<int64_t> SqliteTrackerStore::FindExperimentByName(Connection& c, const std::string& name) {
  FERRY_ASSIGN_OR_RETURN(auto q, c.Prepare("SELECT experiment_id FROM experiments WHERE name = ?"));
  q->Bind(1, name);
  FERRY_ASSIGN_OR_RETURN(bool found, q->Step());
  return found ? q->Int(0) : int64_t{-1};
}

Result<std::string> SqliteTrackerStore::CreateExperiment(const std::string& name,
                                                         const std::string& artifact_location,
                                                         const std::vector<Tag>& tags) {
  if (name.empty()) return InvalidArgument("CreateExperiment: the name is empty");
  FERRY_RETURN_IF_ERROR(checks::TagKeys("CreateExperiment", tags));
  MutexLock lock(write_mu_);
  Connection& c = *writer_;
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(c, true));
  FERRY_ASSIGN_OR_RETURN(int64_t existing, FindExperimentByName(c, name));
  if (existing >= 0) {
    return Status(StatusCode::kAlreadyExists,
                  "CreateExperiment: an experiment named '" + name + "' already exists");
  }
  int64_t id = 0;
  {
    FERRY_ASSIGN_OR_RETURN(auto q, c.Prepare("INSERT INTO experiments SELECT "
                                             "COALESCE(MAX(experiment_id), 0) + 1, ?, ?, 0, ?, ? "
                                             "FROM experiments RETURNING experiment_id"));
    int64_t now = rules::NowMs();
    q->Bind(1, name).Bind(2, artifact_location).Bind(3, now).Bind(4, now);
    FERRY_ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Internal("CreateExperiment: INSERT returned no id");
    id = q->Int(0);
    FERRY_RETURN_IF_ERROR(q->Run());
  }
  for (const auto& t : tags) {
    FERRY_ASSIGN_OR_RETURN(auto q, c.Prepare("INSERT OR REPLACE INTO experiment_tags "
                                             "VALUES (?, ?, ?)"));
    FERRY_RETURN_IF_ERROR(q->Bind(1, id).Bind(2, t.key).Bind(3, t.value).Run());
  }
  FERRY_RETURN_IF_ERROR(tx.Commit());
  return std::to_string(id);
}

Result<Experiment> SqliteTrackerStore::GetExperiment(const std::string& id) {
  auto n = sqlite::ParseId(id);
  if (!n) return NotFound("GetExperiment: no experiment with id '" + id + "'");
  FERRY_ASSIGN_OR_RETURN(Reader r, AcquireReader());
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(*r, false));
  auto e = ReadExperiment(*r, *n);
  if (!e.ok()) return e.status().WithContext("GetExperiment");
  return e;
}

Result<Experiment> SqliteTrackerStore::GetExperimentByName(const std::string& name) {
  FERRY_ASSIGN_OR_RETURN(Reader r, AcquireReader());
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(*r, false));
  FERRY_ASSIGN_OR_RETURN(int64_t id, FindExperimentByName(*r, name));
  if (id < 0) return NotFound("GetExperimentByName: no experiment named '" + name + "'");
  return ReadExperiment(*r, id);
}

Result<Page<Experiment>> SqliteTrackerStore::SearchExperiments(const ExperimentQuery& q) {
  FERRY_RETURN_IF_ERROR(checks::MaxResults("SearchExperiments", q.max_results));
  FERRY_ASSIGN_OR_RETURN(size_t offset, checks::OffsetToken("SearchExperiments", q.page_token));
  // Experiments are few: read them all and filter with the same rules as every backend.
  std::vector<Experiment> all;
  {
    FERRY_ASSIGN_OR_RETURN(Reader r, AcquireReader());
    FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(*r, false));
    std::vector<int64_t> ids;
    {
      FERRY_ASSIGN_OR_RETURN(auto s, (*r).Prepare("SELECT experiment_id, lifecycle_stage "
                                                  "FROM experiments"));
      for (;;) {
        FERRY_ASSIGN_OR_RETURN(bool row, s->Step());
        if (!row) break;
        if (checks::InView(static_cast<LifecycleStage>(s->Int(1)), q.view)) {
          ids.push_back(s->Int(0));
        }
      }
    }
    for (int64_t id : ids) {
      FERRY_ASSIGN_OR_RETURN(Experiment e, ReadExperiment(*r, id));
      if (checks::ExperimentMatches(e, q)) all.push_back(std::move(e));
    }
  }
  return rules::SortAndPageExperiments(std::move(all), offset, q.max_results);
}

Status SqliteTrackerStore::RenameExperiment(const std::string& id, const std::string& new_name) {
  if (new_name.empty()) return InvalidArgument("RenameExperiment: the new name is empty");
  auto n = sqlite::ParseId(id);
  if (!n) return NotFound("RenameExperiment: no experiment with id '" + id + "'");
  MutexLock lock(write_mu_);
  Connection& c = *writer_;
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(c, true));
  auto e = ReadExperiment(c, *n);
  if (!e.ok()) return e.status().WithContext("RenameExperiment");
  if (e->stage != LifecycleStage::kActive) {
    return checks::Deleted("RenameExperiment", "experiment", id);
  }
  FERRY_ASSIGN_OR_RETURN(int64_t other, FindExperimentByName(c, new_name));
  if (other >= 0 && other != *n) {
    return Status(StatusCode::kAlreadyExists,
                  "RenameExperiment: an experiment named '" + new_name + "' already exists");
  }
  FERRY_ASSIGN_OR_RETURN(auto u, c.Prepare("UPDATE experiments SET name = ?, "
                                           "last_update_time = ? WHERE experiment_id = ?"));
  FERRY_RETURN_IF_ERROR(u->Bind(1, new_name).Bind(2, rules::NowMs()).Bind(3, *n).Run());
  return tx.Commit();
}

Status SqliteTrackerStore::SetExperimentStage(const std::string& id, LifecycleStage stage) {
  auto n = sqlite::ParseId(id);
  if (!n) return NotFound("SetExperimentStage: no experiment with id '" + id + "'");
  MutexLock lock(write_mu_);
  Connection& c = *writer_;
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(c, true));
  {
    FERRY_ASSIGN_OR_RETURN(auto u, c.Prepare("UPDATE experiments SET lifecycle_stage = ?, "
                                             "last_update_time = ? WHERE experiment_id = ?"));
    FERRY_RETURN_IF_ERROR(
        u->Bind(1, static_cast<int64_t>(stage)).Bind(2, rules::NowMs()).Bind(3, *n).Run());
  }
  if (c.Changes() == 0) return NotFound("SetExperimentStage: no experiment with id '" + id + "'");
  // As MLflow does: the experiment's runs follow it.
  FERRY_ASSIGN_OR_RETURN(auto r,
                         c.Prepare("UPDATE runs SET lifecycle_stage = ? WHERE experiment_id = ?"));
  FERRY_RETURN_IF_ERROR(r->Bind(1, static_cast<int64_t>(stage)).Bind(2, *n).Run());
  return tx.Commit();
}

Status SqliteTrackerStore::SetExperimentTag(const std::string& id, const Tag& tag) {
  FERRY_RETURN_IF_ERROR(checks::TagKeys("SetExperimentTag", {tag}));
  auto n = sqlite::ParseId(id);
  if (!n) return NotFound("SetExperimentTag: no experiment with id '" + id + "'");
  MutexLock lock(write_mu_);
  Connection& c = *writer_;
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(c, true));
  auto e = ReadExperiment(c, *n);
  if (!e.ok()) return e.status().WithContext("SetExperimentTag");
  if (e->stage != LifecycleStage::kActive) {
    return checks::Deleted("SetExperimentTag", "experiment", id);
  }
  FERRY_ASSIGN_OR_RETURN(auto q,
                         c.Prepare("INSERT OR REPLACE INTO experiment_tags VALUES (?, ?, ?)"));
  FERRY_RETURN_IF_ERROR(q->Bind(1, *n).Bind(2, tag.key).Bind(3, tag.value).Run());
  return tx.Commit();
}

}  // namespace ferry::tracker
