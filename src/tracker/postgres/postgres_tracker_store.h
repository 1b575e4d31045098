#pragma once
// PostgresTrackerStore: the TrackerStore (tracker/tracker_store.h) in a PostgreSQL database
// (libpq), so several `ferry serve` replicas can share one tracker. Same tables and rules as
// tracker/sqlite (schema.h); the conformance suite (tracker/testing) runs on both.
//
// Concurrency, within one process and across replicas:
//  - a bounded pool of connections, one per concurrent caller (callers past the bound wait);
//  - every operation is one transaction; reads use a REPEATABLE READ snapshot;
//  - experiment ids (max + 1) are taken under a transaction-scoped advisory lock, names are
//    UNIQUE; run ids are random (32 hex digits), run_uuid is UNIQUE;
//  - LogBatch locks its run's row (SELECT ... FOR UPDATE), so writes to one run serialise
//    across replicas while different runs proceed in parallel; points are inserted with
//    ON CONFLICT DO NOTHING RETURNING, so only the points this batch really added update the
//    summaries and latest values (a retried or concurrent duplicate batch adds nothing);
//  - metric names are added in their own statement before the batch (ON CONFLICT DO NOTHING),
//    so concurrent batches never deadlock on them.
// Errors: connection loss, a server shutting down or starting, too many connections, deadlocks
// are kUnavailable (retryable; the REST layer answers 503). A lost connection is reconnected
// when it is next handed out. Messages show the URL without its password.
// Durability: an acknowledged write is committed in PostgreSQL (its own synchronous_commit
// and fsync settings decide what survives a crash of the database host).

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "tracker/postgres/pg_db.h"
#include "tracker/tracker_store.h"

namespace ferry::tracker {

namespace metrics {
class MetricBatch;
}

struct PostgresTrackerOptions {
  // Connections this store opens at most (callers past it wait for one). Each `ferry serve`
  // replica holds up to this many of the server's max_connections (PostgreSQL's default: 100).
  int max_connections = 16;
  // The schema the tables live in ("" = the database's default search_path, normally public).
  // Created when absent. Lets tests (and several trackers) share one database.
  std::string schema;
};

class PostgresTrackerStore final : public TrackerStore {
 public:
  // Connects to `url` (postgresql://[user[:password]@]host[:port]/dbname[?params], anything
  // libpq accepts; a password is better left to PGPASSWORD or ~/.pgpass) and creates or
  // migrates the schema. Unreachable database: kUnavailable; a newer schema:
  // kFailedPrecondition.
  static Result<std::shared_ptr<PostgresTrackerStore>> Open(
      const std::string& url, const PostgresTrackerOptions& options = {});

  Result<std::string> CreateExperiment(const std::string& name,
                                       const std::string& artifact_location,
                                       const std::vector<Tag>& tags) override;
  Result<Experiment> GetExperiment(const std::string& id) override;
  Result<Experiment> GetExperimentByName(const std::string& name) override;
  Result<Page<Experiment>> SearchExperiments(const ExperimentQuery& query) override;
  Status RenameExperiment(const std::string& id, const std::string& new_name) override;
  Status SetExperimentStage(const std::string& id, LifecycleStage stage) override;
  Status SetExperimentTag(const std::string& id, const Tag& tag) override;

  Result<RunInfo> CreateRun(const CreateRunRequest& request) override;
  Result<RunInfo> UpdateRun(const std::string& run_id, const RunUpdate& update) override;
  Result<Run> GetRun(const std::string& run_id) override;
  Status SetRunStage(const std::string& run_id, LifecycleStage stage) override;
  Status LogBatch(const std::string& run_id, const std::vector<MetricPoint>& metrics,
                  const std::vector<Param>& params, const std::vector<Tag>& tags) override;
  Status DeleteTag(const std::string& run_id, const std::string& key) override;
  Result<std::vector<Run>> ScanRuns(const RunScan& scan) override;

  Result<Page<MetricPoint>> GetMetricHistory(const std::string& run_id, const std::string& key,
                                             int max_results,
                                             const std::string& page_token) override;
  Result<std::vector<SampledPoint>> GetMetricHistoryBulkInterval(
      const std::vector<std::string>& run_ids, const std::string& key,
      std::optional<int64_t> start_step, std::optional<int64_t> end_step, int max_results) override;
  Status Transact(TxnMode mode, const DocBody& body) override;

  // The URL as messages show it (no password).
  const std::string& display() const { return display_; }

 private:
  // A pooled connection inside one transaction; rolls back unless committed, then goes back to
  // the pool (or is dropped when its server connection was lost).
  class Session final {
   public:
    Session(PostgresTrackerStore* store, std::unique_ptr<postgres::Connection> c)
        : store_(store), c_(std::move(c)) {}
    Session(Session&&) = default;
    Session& operator=(Session&&) = delete;
    ~Session();
    postgres::Connection& operator*() const { return *c_; }
    Status Commit();

   private:
    friend class PostgresTrackerStore;
    PostgresTrackerStore* store_;
    std::unique_ptr<postgres::Connection> c_;
    bool in_transaction_ = false;
  };
  struct RunRow {
    int64_t run_pk = 0;
    RunInfo info;
  };

  PostgresTrackerStore(std::string url, std::string display, PostgresTrackerOptions options);
  // A connection in a new transaction (see pg_db.h for read_only). A pooled connection whose
  // server went away is reconnected once before giving up with kUnavailable.
  Result<Session> Begin(bool read_only) EXCLUDES(pool_mu_);
  void Release(std::unique_ptr<postgres::Connection> c) EXCLUDES(pool_mu_);

  static Result<Experiment> ReadExperiment(postgres::Connection& c, int64_t id);
  static Result<int64_t> FindExperimentByName(postgres::Connection& c, const std::string& name);
  // for_update: lock the run's row until the transaction ends (writers to one run serialise).
  static Result<RunRow> ReadRunRow(postgres::Connection& c, const std::string& run_id,
                                   bool for_update = false);
  static Result<Run> ReadRun(postgres::Connection& c, const RunRow& row);
  // The run `run_id` for writing, locked: kNotFound / kFailedPrecondition as tracker_store.h
  // says.
  static Result<RunRow> WritableRun(postgres::Connection& c, const char* op,
                                    const std::string& run_id);
  // The ids of metric names `keys`, adding the missing ones (committed on their own).
  Result<std::map<std::string, int64_t>> KeyIds(const std::vector<MetricPoint>& metrics)
      EXCLUDES(keys_mu_);
  // LogBatch's metrics in tracker/metric_batch.h's phases: the points, their summaries, the
  // latest values.
  static Status WriteMetrics(postgres::Connection& c, int64_t run_pk,
                             const std::map<std::string, int64_t>& key_ids,
                             const std::vector<MetricPoint>& metrics);
  static Status InsertPoints(postgres::Connection& c, int64_t run_pk,
                             const std::map<std::string, int64_t>& key_ids,
                             const std::vector<MetricPoint>& metrics, metrics::MetricBatch& batch);
  static Status WriteSummaries(postgres::Connection& c, int64_t run_pk,
                               metrics::MetricBatch& batch);
  static Status WriteLatest(postgres::Connection& c, int64_t run_pk, metrics::MetricBatch& batch);
  Status SampleRun(postgres::Connection& c, const std::string& run_id, const std::string& key,
                   std::optional<int64_t> start_step, std::optional<int64_t> end_step,
                   int max_results, std::vector<SampledPoint>& out);
  std::string NewRunId() EXCLUDES(rng_mu_);
  // checks::ChooseRunName with this store's generator.
  std::string NewRunName(const CreateRunRequest& req, const std::string& name_tag)
      EXCLUDES(rng_mu_);

  const std::string url_;
  const std::string display_;
  const PostgresTrackerOptions options_;
  Mutex pool_mu_;
  CondVar pool_cv_;
  std::vector<std::unique_ptr<postgres::Connection>> idle_ GUARDED_BY(pool_mu_);
  int open_ GUARDED_BY(pool_mu_) = 0;  // connections handed out or idle
  Mutex keys_mu_;
  std::map<std::string, int64_t> key_ids_ GUARDED_BY(keys_mu_);  // metric_keys, cached
  Mutex rng_mu_;
  std::mt19937_64 rng_ GUARDED_BY(rng_mu_);
};

}  // namespace ferry::tracker
