// Opening, the connection pool and experiments (runs: postgres_runs.cc; metrics:
// postgres_metrics.cc).
#include "tracker/postgres/postgres_tracker_store.h"

#include <algorithm>

#include "base/redact.h"
#include "base/strings.h"
#include "tracker/postgres/pg_internal.h"
#include "tracker/postgres/pg_url.h"
#include "tracker/postgres/schema.h"
#include "tracker/store_checks.h"
#include "tracker/store_rules.h"

namespace ferry::tracker {

using postgres::Connection;
using postgres::P;
using postgres::Rows;

Result<std::shared_ptr<PostgresTrackerStore>> PostgresTrackerStore::Open(
    const std::string& url, const PostgresTrackerOptions& options) {
  std::string password = postgres::PostgresUrlPassword(url);
  if (!password.empty()) RegisterSecret(password);
  std::string display = postgres::RedactPostgresUrl(url);
  if (options.max_connections < 1) {
    return InvalidArgument("open tracker database '" + display + "': max_connections must be >= 1");
  }
  std::shared_ptr<PostgresTrackerStore> store(new PostgresTrackerStore(url, display, options));
  {
    FERRY_ASSIGN_OR_RETURN(auto c, Connection::Open(url, display, options.schema));
    FERRY_RETURN_IF_ERROR(postgres::Migrate(*c, options.schema, display));
    store->Release(std::move(c));
  }
  return store;
}

PostgresTrackerStore::PostgresTrackerStore(std::string url, std::string display,
                                           PostgresTrackerOptions options)
    : url_(std::move(url)),
      display_(std::move(display)),
      options_(std::move(options)),
      rng_(std::random_device{}()) {
  MutexLock lock(pool_mu_);
  open_ = 1;  // the connection Open migrates with, released into the pool
}

PostgresTrackerStore::Session::~Session() {
  if (!c_) return;
  if (in_transaction_ && c_->Healthy()) c_->Exec("ROLLBACK", "ROLLBACK").status().IgnoreError();
  store_->Release(std::move(c_));
}

Status PostgresTrackerStore::Session::Commit() {
  in_transaction_ = false;
  return c_->Exec("COMMIT", "COMMIT").status();
}

Result<PostgresTrackerStore::Session> PostgresTrackerStore::Begin(bool read_only) {
  std::unique_ptr<Connection> c;
  {
    MutexLock lock(pool_mu_);
    pool_cv_.Wait(lock, [&]() REQUIRES(pool_mu_) {
      return !idle_.empty() || open_ < options_.max_connections;
    });
    if (!idle_.empty()) {
      c = std::move(idle_.back());
      idle_.pop_back();
    } else {
      ++open_;
    }
  }
  bool reused = c != nullptr;
  if (!c) {
    auto opened = Connection::Open(url_, display_, options_.schema);
    if (!opened.ok()) {
      {
        MutexLock lock(pool_mu_);
        --open_;
      }
      pool_cv_.NotifyOne();
      return opened.status();
    }
    c = std::move(*opened);
  }
  const char* begin = read_only ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN";
  Status s = c->Exec("BEGIN", begin).status();
  if (!s.ok() && reused && !c->Healthy()) {
    // The server went away since this connection was last used (a restart): reconnect once.
    s = c->Reset();
    if (s.ok()) s = c->Exec("BEGIN", begin).status();
  }
  Session session(this, std::move(c));
  if (!s.ok()) return s;
  session.in_transaction_ = true;
  return session;
}

void PostgresTrackerStore::Release(std::unique_ptr<Connection> c) {
  {
    MutexLock lock(pool_mu_);
    if (c->Healthy()) {
      idle_.push_back(std::move(c));
    } else {
      --open_;  // dropped; a later Begin opens a new one
    }
  }
  pool_cv_.NotifyOne();
}

std::string PostgresTrackerStore::NewRunId() {
  MutexLock lock(rng_mu_);
  return rules::NewRunId(rng_);
}

std::string PostgresTrackerStore::NewRunName(const CreateRunRequest& req,
                                             const std::string& name_tag) {
  MutexLock lock(rng_mu_);
  return checks::ChooseRunName(req, name_tag, rng_);
}

Result<Experiment> PostgresTrackerStore::ReadExperiment(Connection& c, int64_t id) {
  Experiment e;
  {
    FERRY_ASSIGN_OR_RETURN(Rows q,
                           c.Exec("read experiment",
                                  "SELECT name, artifact_location, lifecycle_stage, creation_time, "
                                  "last_update_time FROM experiments WHERE experiment_id = $1",
                                  {P(id)}));
    if (q.empty()) return NotFound("no experiment with id '" + std::to_string(id) + "'");
    e.id = std::to_string(id);
    e.name = q.Text(0, 0);
    e.artifact_location = q.Text(0, 1);
    e.stage = static_cast<LifecycleStage>(q.Int(0, 2));
    e.creation_time = q.Int(0, 3);
    e.last_update_time = q.Int(0, 4);
  }
  FERRY_ASSIGN_OR_RETURN(Rows t, c.Exec("read experiment tags",
                                        "SELECT key, value FROM experiment_tags "
                                        "WHERE experiment_id = $1 ORDER BY key COLLATE \"C\"",
                                        {P(id)}));
  for (int i = 0; i < t.size(); ++i) e.tags.push_back({t.Text(i, 0), t.Text(i, 1)});
  return e;
}

Result<int64_t> PostgresTrackerStore::FindExperimentByName(Connection& c, const std::string& name) {
  FERRY_ASSIGN_OR_RETURN(
      Rows q,
      c.Exec("find experiment", "SELECT experiment_id FROM experiments WHERE name = $1", {name}));
  return q.empty() ? int64_t{-1} : q.Int(0, 0);
}

Result<std::string> PostgresTrackerStore::CreateExperiment(const std::string& name,
                                                           const std::string& artifact_location,
                                                           const std::vector<Tag>& tags) {
  if (name.empty()) return InvalidArgument("CreateExperiment: the name is empty");
  FERRY_RETURN_IF_ERROR(checks::TagKeys("CreateExperiment", tags));
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(false));
  Connection& c = *s;
  // Ids are max + 1, as in SQLite: creators (in every replica) take turns.
  FERRY_RETURN_IF_ERROR(
      c.Exec("CreateExperiment",
             "SELECT pg_advisory_xact_lock(hashtext('ferry.tracker.experiments:' || "
             "current_schema()))")
          .status());
  FERRY_ASSIGN_OR_RETURN(int64_t existing, FindExperimentByName(c, name));
  if (existing >= 0) {
    return Status(StatusCode::kAlreadyExists,
                  "CreateExperiment: an experiment named '" + name + "' already exists");
  }
  int64_t now = rules::NowMs();
  FERRY_ASSIGN_OR_RETURN(
      Rows q, c.Exec("CreateExperiment",
                     "INSERT INTO experiments SELECT COALESCE(MAX(experiment_id), 0) + 1, $1, $2, "
                     "0, $3, $3 FROM experiments RETURNING experiment_id",
                     {name, artifact_location, P(now)}));
  if (q.empty()) return Internal("CreateExperiment: INSERT returned no id");
  int64_t id = q.Int(0, 0);
  for (const auto& t : tags) {
    FERRY_RETURN_IF_ERROR(c.Exec("CreateExperiment",
                                 "INSERT INTO experiment_tags VALUES ($1, $2, $3) ON CONFLICT "
                                 "(experiment_id, key) DO UPDATE SET value = excluded.value",
                                 {P(id), t.key, t.value})
                              .status());
  }
  FERRY_RETURN_IF_ERROR(s.Commit());
  return std::to_string(id);
}

Result<Experiment> PostgresTrackerStore::GetExperiment(const std::string& id) {
  auto n = postgres::ParseId(id);
  if (!n) return NotFound("GetExperiment: no experiment with id '" + id + "'");
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(true));
  auto e = ReadExperiment(*s, *n);
  if (!e.ok()) return e.status().WithContext("GetExperiment");
  return e;
}

Result<Experiment> PostgresTrackerStore::GetExperimentByName(const std::string& name) {
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(true));
  FERRY_ASSIGN_OR_RETURN(int64_t id, FindExperimentByName(*s, name));
  if (id < 0) return NotFound("GetExperimentByName: no experiment named '" + name + "'");
  return ReadExperiment(*s, id);
}

Result<Page<Experiment>> PostgresTrackerStore::SearchExperiments(const ExperimentQuery& q) {
  FERRY_RETURN_IF_ERROR(checks::MaxResults("SearchExperiments", q.max_results));
  FERRY_ASSIGN_OR_RETURN(size_t offset, checks::OffsetToken("SearchExperiments", q.page_token));
  // Experiments are few: read them all and filter with the same rules as every backend.
  std::vector<Experiment> all;
  {
    FERRY_ASSIGN_OR_RETURN(Session s, Begin(true));
    FERRY_ASSIGN_OR_RETURN(
        Rows ids,
        (*s).Exec("SearchExperiments", "SELECT experiment_id, lifecycle_stage FROM experiments"));
    for (int i = 0; i < ids.size(); ++i) {
      if (!checks::InView(static_cast<LifecycleStage>(ids.Int(i, 1)), q.view)) continue;
      FERRY_ASSIGN_OR_RETURN(Experiment e, ReadExperiment(*s, ids.Int(i, 0)));
      if (checks::ExperimentMatches(e, q)) all.push_back(std::move(e));
    }
  }
  return rules::SortAndPageExperiments(std::move(all), offset, q.max_results);
}

Status PostgresTrackerStore::RenameExperiment(const std::string& id, const std::string& new_name) {
  if (new_name.empty()) return InvalidArgument("RenameExperiment: the new name is empty");
  auto n = postgres::ParseId(id);
  if (!n) return NotFound("RenameExperiment: no experiment with id '" + id + "'");
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(false));
  Connection& c = *s;
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
  FERRY_RETURN_IF_ERROR(c.Exec("RenameExperiment",
                               "UPDATE experiments SET name = $1, last_update_time = $2 "
                               "WHERE experiment_id = $3",
                               {new_name, P(rules::NowMs()), P(*n)})
                            .status());
  return s.Commit();
}

Status PostgresTrackerStore::SetExperimentStage(const std::string& id, LifecycleStage stage) {
  auto n = postgres::ParseId(id);
  if (!n) return NotFound("SetExperimentStage: no experiment with id '" + id + "'");
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(false));
  Connection& c = *s;
  FERRY_ASSIGN_OR_RETURN(Rows u,
                         c.Exec("SetExperimentStage",
                                "UPDATE experiments SET lifecycle_stage = $1, "
                                "last_update_time = $2 WHERE experiment_id = $3",
                                {P(static_cast<int64_t>(stage)), P(rules::NowMs()), P(*n)}));
  if (u.Changes() == 0) return NotFound("SetExperimentStage: no experiment with id '" + id + "'");
  // As MLflow does: the experiment's runs follow it.
  FERRY_RETURN_IF_ERROR(c.Exec("SetExperimentStage",
                               "UPDATE runs SET lifecycle_stage = $1 WHERE experiment_id = $2",
                               {P(static_cast<int64_t>(stage)), P(*n)})
                            .status());
  return s.Commit();
}

Status PostgresTrackerStore::SetExperimentTag(const std::string& id, const Tag& tag) {
  FERRY_RETURN_IF_ERROR(checks::TagKeys("SetExperimentTag", {tag}));
  auto n = postgres::ParseId(id);
  if (!n) return NotFound("SetExperimentTag: no experiment with id '" + id + "'");
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(false));
  Connection& c = *s;
  auto e = ReadExperiment(c, *n);
  if (!e.ok()) return e.status().WithContext("SetExperimentTag");
  if (e->stage != LifecycleStage::kActive) {
    return checks::Deleted("SetExperimentTag", "experiment", id);
  }
  FERRY_RETURN_IF_ERROR(c.Exec("SetExperimentTag",
                               "INSERT INTO experiment_tags VALUES ($1, $2, $3) ON CONFLICT "
                               "(experiment_id, key) DO UPDATE SET value = excluded.value",
                               {P(*n), tag.key, tag.value})
                            .status());
  return s.Commit();
}

}  // namespace ferry::tracker
