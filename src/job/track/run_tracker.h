#pragma once
// `ferry run --track URL`: the job as a run of an MLflow tracking server (`ferry serve`, or
// MLflow's own). A RunHooks (job/run_hooks.h) that, just before the command starts, creates the
// run (or, on a later attempt of the same job, re-attaches to the run it recorded beside the
// job's `latest` pointers), tags it, and gives the command MLFLOW_TRACKING_URI, MLFLOW_RUN_ID and
// MLFLOW_EXPERIMENT_NAME; then, on a thread of its own, samples system metrics every interval
// (sysmetrics/sampler.h) and logs them, uploads the command's output log (tee'd, output_log.h)
// and the checkpoints manifest `ferry/checkpoints.json` after every sync (files referenced by
// URL, never uploaded twice), and at the end sets the run's status, end time and
// `ferry.exit_code`. Contract: docs/semantics/run.md, "--track".
//
// The tracker never fails or holds up the job: a server unreachable at the start is one warning
// and no tracking; later failures are one warning, metric points wait in a bounded queue (the
// oldest dropped past kMaxQueuedPoints) and are resent with backoff; the end waits at most
// kFinalFlush for the last uploads.
//
// Thread-safety: the RunHooks calls come from the lifecycle's threads (BeforeStart, Ended: the
// main one; AfterSync: the sync task; the sink: the tee), each guarded here.

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "base/environment.h"
#include "base/mutex.h"
#include "job/run_hooks.h"
#include "job/track/output_log.h"
#include "storage/registry.h"
#include "tracker/client/mlflow_client.h"

namespace ferry::job::track {

struct TrackOptions {
  std::string url;         // --track: http(s)://host:port of the tracking server
  std::string experiment;  // empty: MLFLOW_EXPERIMENT_NAME, else "Default"
  std::string run_name;    // empty: the job's id ({job}), with "-rank<R>" for ranks other than 0
  // Between system-metric samples; 0 = none.
  std::chrono::seconds system_metrics_interval{10};
  uint64_t output_log_limit = 64ull << 20;
  std::string output_log_path;  // empty: $TMPDIR/ferry-output-<pid>.log
};

// Metric points kept while the server does not take them (~20 h of 10 s samples).
inline constexpr size_t kMaxQueuedPoints = 100000;
// How long the start may wait for the server (creating or re-attaching the run): a server that
// does not answer within it is the "runs without tracking" warning, never a later start.
inline constexpr std::chrono::seconds kStartBudget{5};
// How long the end of the run waits for the last uploads and the final status, counted from the
// command's end: calls still in flight then are aborted (within about a second).
inline constexpr std::chrono::seconds kFinalFlush{20};

// Errors: a URL that is not http(s)://.
Status CheckTrackUrl(const std::string& url);

class RunTracker final : public RunHooks {
 public:
  // `registry` and `env` must outlive the tracker. The bearer token comes from
  // MLFLOW_TRACKING_TOKEN and is never logged.
  RunTracker(TrackOptions options, storage::StoreRegistry& registry, const Environment& env);
  ~RunTracker() override;

  std::vector<std::pair<std::string, std::string>> BeforeStart(const RunPlan& plan) override;
  OutputSink* output_sink() override { return log_.get(); }
  void AfterSync(const RunPlan& plan, SyncKind kind, const SyncRound& round) override;
  void Ended(const ChildState& child, int exit_code) override;

 private:
  // Creates the run, or re-attaches to the one recorded for this job and rank. Errors: the
  // server cannot be reached or refused.
  Status OpenRun(const RunPlan& plan);
  void Work();
  // One pass of the worker: metrics, checkpoints, log. Returns false when a call failed.
  bool Flush(bool final_pass);
  void NoteFailure(const Status& s);
  void NoteSuccess();
  // A call the server refused for good: dropped, one warning per `what`.
  void Refused(const Status& s, const char* what);
  // The step of a system-metric sample taken at `now_ms`.
  int64_t NextStep(int64_t now_ms);

  TrackOptions options_;
  storage::StoreRegistry& registry_;
  const Environment& env_;
  std::unique_ptr<tracker::client::MlflowClient> client_;
  std::unique_ptr<OutputLog> log_;
  tracker::client::RunInfo run_;
  std::string experiment_;
  std::string attempt_;
  std::string disk_path_ = "/";
  bool active_ = false;  // a run was created or attached (set before the worker starts)

  Mutex mu_;
  CondVar wake_;
  std::vector<tracker::client::MetricPoint> queue_ GUARDED_BY(mu_);
  size_t dropped_ GUARDED_BY(mu_) = 0;
  std::string checkpoints_json_ GUARDED_BY(mu_);  // to upload; empty = nothing new
  std::string checkpoints_tag_ GUARDED_BY(mu_);
  bool log_due_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
  std::chrono::steady_clock::time_point end_deadline_ GUARDED_BY(mu_){};  // set with stop_
  bool worker_done_ GUARDED_BY(mu_) = false;
  std::string final_status_ GUARDED_BY(mu_);
  int exit_code_ GUARDED_BY(mu_) = 0;
  // Only the worker touches these.
  uint64_t log_uploaded_size_ = static_cast<uint64_t>(-1);
  bool warned_ = false;
  std::set<std::string> refused_;
  int64_t last_step_ = -1;
  int failures_ = 0;
  std::chrono::steady_clock::time_point retry_at_{};
  std::thread worker_;
};

}  // namespace ferry::job::track
