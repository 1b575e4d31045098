#pragma once
// TrackerStore: where the tracker keeps experiments, runs and metrics (house style 2: one small
// interface, several backends). SqliteTrackerStore (tracker/sqlite, WAL) is the default;
// PostgreSQL (tracker/postgres, libpq) lets several `ferry serve` replicas share one database;
// MemoryTrackerStore (tracker/memory) is the reference the conformance suite
// (tracker/testing/tracker_store_conformance.h) compares the others with.
//
// Semantics follow MLflow's tracking API (docs/semantics/mlflow.md):
//  - experiment names are unique among all experiments (deleted ones included); the experiment
//    "Default" with id "0" always exists;
//  - params are immutable: logging a param again with the same value is accepted, another value
//    is kInvalidArgument ("INVALID_PARAMETER_VALUE" on the wire);
//  - metric points are appended; a point identical in (key, value, timestamp, step) to one
//    already stored for the run is not stored again, so a retried batch never duplicates points;
//  - logging to or updating a deleted run, or one whose id does not exist: kNotFound for an
//    unknown id, kFailedPrecondition for a deleted run;
//  - every write acknowledged (OK returned) is durable: it survives kill -9 of the server.
// Details every backend follows (the conformance suite, tracker/testing, checks each):
//  - GetExperimentByName and GetRun also return deleted experiments and runs; reads of a
//    deleted run's metrics work;
//  - deleting (restoring) an experiment deletes (restores) all its runs, as MLflow does;
//    renaming, tagging or creating runs in a deleted experiment is kFailedPrecondition;
//  - empty names and keys, max_results < 1 and malformed page tokens are kInvalidArgument;
//  - lists come in a fixed order: SearchExperiments by creation_time descending, then id
//    (numerically); ScanRuns by start_time descending, then run_id; params, tags and
//    latest_metrics by key; page tokens are opaque;
//  - the run name and the tag "mlflow.runName" are kept equal (tracker/store_rules.h);
//  - metric values equal under rules::ValueEqual (NaN == NaN, -0 == 0) are the same value.
// Errors are Status values: kNotFound (RESOURCE_DOES_NOT_EXIST), kAlreadyExists
// (RESOURCE_ALREADY_EXISTS), kInvalidArgument (INVALID_PARAMETER_VALUE), kUnavailable (the
// database is busy or unreachable; retryable), kInternal.
// Thread-safety: every method may be called from many threads at once.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "tracker/doc_txn.h"
#include "tracker/model.h"

namespace ferry::tracker {

struct ExperimentQuery {
  ViewType view = ViewType::kActiveOnly;
  // Optional conditions MLflow's experiments/search allows: name LIKE pattern ('%' and '_'),
  // exact tag values.
  std::optional<std::string> name_like;
  std::vector<Tag> tags_equal;
  int max_results = 1000;
  std::string page_token;
};

struct CreateRunRequest {
  std::string experiment_id;
  std::string run_name;  // "" = the store makes one up, as MLflow does
  std::string user_id;
  int64_t start_time = 0;
  std::vector<Tag> tags;
  // Where the run's artifacts go: the store appends "<run_id>/artifacts" to this base.
  std::string artifact_root;
};

struct RunUpdate {
  std::optional<RunStatus> status;
  std::optional<int64_t> end_time;
  std::optional<std::string> run_name;
};

// The runs a search considers, before filtering (filters and order live in tracker/search.h,
// evaluated over Run values, so every backend filters the same way).
struct RunScan {
  std::vector<std::string> experiment_ids;
  ViewType view = ViewType::kActiveOnly;
};

class TrackerStore {
 public:
  virtual ~TrackerStore() = default;

  virtual Result<std::string> CreateExperiment(const std::string& name,
                                               const std::string& artifact_location,
                                               const std::vector<Tag>& tags) = 0;
  virtual Result<Experiment> GetExperiment(const std::string& id) = 0;
  virtual Result<Experiment> GetExperimentByName(const std::string& name) = 0;
  virtual Result<Page<Experiment>> SearchExperiments(const ExperimentQuery& query) = 0;
  virtual Status RenameExperiment(const std::string& id, const std::string& new_name) = 0;
  virtual Status SetExperimentStage(const std::string& id, LifecycleStage stage) = 0;
  virtual Status SetExperimentTag(const std::string& id, const Tag& tag) = 0;

  virtual Result<RunInfo> CreateRun(const CreateRunRequest& request) = 0;
  virtual Result<RunInfo> UpdateRun(const std::string& run_id, const RunUpdate& update) = 0;
  virtual Result<Run> GetRun(const std::string& run_id) = 0;
  // Deleting marks the run deleted (restore undoes it); its artifacts are the caller's to
  // delete (the REST layer does, through the artifact store).
  virtual Status SetRunStage(const std::string& run_id, LifecycleStage stage) = 0;
  // Metrics, params and tags of one run in one transaction (log-batch, log-metric, log-param,
  // set-tag all come here). Params are checked before anything is written.
  virtual Status LogBatch(const std::string& run_id, const std::vector<MetricPoint>& metrics,
                          const std::vector<Param>& params, const std::vector<Tag>& tags) = 0;
  virtual Status DeleteTag(const std::string& run_id, const std::string& key) = 0;

  // Every run matching `scan` with its data (the search's input).
  virtual Result<std::vector<Run>> ScanRuns(const RunScan& scan) = 0;

  // The points of one metric of one run in (step, timestamp) order, `max_results` at a time.
  virtual Result<Page<MetricPoint>> GetMetricHistory(const std::string& run_id,
                                                     const std::string& key, int max_results,
                                                     const std::string& page_token) = 0;
  // A downsampled history of `key` for each run in [start_step, end_step] (nullopt = the run's
  // first/last step): about max_results points per run, chosen from precomputed per-bucket
  // summaries so the answer costs O(max_results) per run whatever the number of points; the
  // first and last point and each bucket's minimum and maximum are kept (spikes survive).
  // The exact rule, shared by every backend, is in tracker/metric_sampling.h. Points come run by
  // run in `run_ids` order, each run's in (step, timestamp) order; an unknown run is kNotFound.
  virtual Result<std::vector<SampledPoint>> GetMetricHistoryBulkInterval(
      const std::vector<std::string>& run_ids, const std::string& key,
      std::optional<int64_t> start_step, std::optional<int64_t> end_step, int max_results) = 0;

  // Runs `body` in one transaction over the store's documents (tracker/doc_txn.h: MLflow 3's
  // logged models, run inputs and outputs, the Model Registry); commits when it returns OK,
  // rolls back otherwise and returns its error. kRead bodies may not Put or Delete.
  virtual Status Transact(TxnMode mode, const DocBody& body) = 0;
};

}  // namespace ferry::tracker
