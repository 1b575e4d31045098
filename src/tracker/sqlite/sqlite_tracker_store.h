#pragma once
// SqliteTrackerStore: the TrackerStore (tracker/tracker_store.h) in one SQLite file, the
// default backend of `ferry serve`.
//
// Concurrency: SQLite allows one writer at a time, so writes go through one connection under a
// mutex (threads queue in-process instead of spinning on SQLITE_BUSY) and each LogBatch is one
// transaction, however many points it carries. Reads use a small pool of connections; with WAL
// they never wait for the writer. Another process on the same file is tolerated (busy_timeout),
// not optimised for.
//
// Durability: WAL mode. With Durability::kProcessCrash (the default) synchronous=NORMAL: a
// commit is in the WAL file (the OS page cache) when LogBatch returns, so it survives kill -9
// of the server, which is the promise tracker_store.h makes; it does not survive a power loss
// or kernel crash (the last commits before the checkpoint may vanish, the file stays
// consistent). Durability::kPowerLoss sets synchronous=FULL (an fsync per commit): a few ms per
// batch on real disks, needed only where the machine may lose power without the run client
// retrying. The schema is versioned (schema.h).

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "tracker/sqlite/sqlite_db.h"
#include "tracker/tracker_store.h"

namespace ferry::tracker {

namespace metrics {
class MetricBatch;
}

struct SqliteTrackerOptions {
  enum class Durability { kProcessCrash, kPowerLoss };
  Durability durability = Durability::kProcessCrash;
  // How long a statement waits for another process's lock before kUnavailable.
  int busy_timeout_ms = 5000;
  // Idle read connections kept open (more are opened while more threads read at once).
  int max_idle_readers = 8;
  // SQLite page cache per connection (the writer's holds the summaries being updated).
  int cache_mib = 64;
  // WAL pages (4 KiB) after which a commit checkpoints into the database file. Each checkpoint
  // fsyncs; SQLite's default of 1000 (4 MiB) made ingest wait on the disk most of the time.
  int wal_autocheckpoint_pages = 16384;
};

class SqliteTrackerStore final : public TrackerStore {
 public:
  // Opens or creates the database at `path` (schema created or migrated; a newer schema is
  // kFailedPrecondition).
  static Result<std::shared_ptr<SqliteTrackerStore>> Open(const std::string& path,
                                                          const SqliteTrackerOptions& options = {});

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

 private:
  // A pooled read connection, handed back when dropped.
  class Reader final {
   public:
    Reader(SqliteTrackerStore* store, std::unique_ptr<sqlite::Connection> c)
        : store_(store), c_(std::move(c)) {}
    Reader(Reader&&) = default;
    Reader& operator=(Reader&&) = delete;
    ~Reader() {
      if (c_) store_->ReleaseReader(std::move(c_));
    }
    sqlite::Connection& operator*() const { return *c_; }

   private:
    SqliteTrackerStore* store_;
    std::unique_ptr<sqlite::Connection> c_;
  };
  struct RunRow {
    int64_t run_pk = 0;
    RunInfo info;
  };

  SqliteTrackerStore(std::string path, SqliteTrackerOptions options,
                     std::unique_ptr<sqlite::Connection> writer);
  Result<std::unique_ptr<sqlite::Connection>> OpenConnection();
  Result<Reader> AcquireReader();
  void ReleaseReader(std::unique_ptr<sqlite::Connection> c) EXCLUDES(pool_mu_);

  // Helpers that run on a connection inside a caller's transaction.
  static Result<Experiment> ReadExperiment(sqlite::Connection& c, int64_t id);
  static Result<int64_t> FindExperimentByName(sqlite::Connection& c, const std::string& name);
  static Result<RunRow> ReadRunRow(sqlite::Connection& c, const std::string& run_id);
  static Result<Run> ReadRun(sqlite::Connection& c, const RunRow& row);
  // The run `run_id` for writing: kNotFound / kFailedPrecondition as tracker_store.h says.
  Result<RunRow> WritableRun(const char* op, const std::string& run_id) REQUIRES(write_mu_);
  Status LogBatchLocked(const std::string& run_id, const std::vector<MetricPoint>& metrics,
                        const std::vector<Param>& params, const std::vector<Tag>& tags)
      REQUIRES(write_mu_);
  // LogBatch's metrics in tracker/metric_batch.h's phases: the points, their summaries, the
  // latest values.
  Status WriteMetrics(int64_t run_pk, const std::vector<MetricPoint>& metrics) REQUIRES(write_mu_);
  Status InsertPoints(int64_t run_pk, const std::vector<MetricPoint>& metrics,
                      metrics::MetricBatch& batch) REQUIRES(write_mu_);
  Status WriteSummaries(int64_t run_pk, metrics::MetricBatch& batch) REQUIRES(write_mu_);
  Status WriteLatest(int64_t run_pk, metrics::MetricBatch& batch) REQUIRES(write_mu_);
  Result<int64_t> KeyId(const std::string& key) REQUIRES(write_mu_);
  Status SampleRun(sqlite::Connection& c, const std::string& run_id, const std::string& key,
                   std::optional<int64_t> start_step, std::optional<int64_t> end_step,
                   int max_results, std::vector<SampledPoint>& out);

  const std::string path_;
  const SqliteTrackerOptions options_;
  Mutex write_mu_;
  std::unique_ptr<sqlite::Connection> writer_ GUARDED_BY(write_mu_);
  std::map<std::string, int64_t> key_ids_ GUARDED_BY(write_mu_);  // metric_keys, cached
  std::mt19937_64 rng_ GUARDED_BY(write_mu_);
  Mutex pool_mu_;
  std::vector<std::unique_ptr<sqlite::Connection>> idle_readers_ GUARDED_BY(pool_mu_);
};

}  // namespace ferry::tracker
