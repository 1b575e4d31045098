#include "job/track/run_tracker.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "base/log.h"
#include "base/redact.h"
#include "base/strings.h"
#include "job/job_records.h"
#include "job/track/track_records.h"
#include "storage/url.h"
#include "sysmetrics/sampler.h"

namespace ferry::job::track {

namespace {

using tracker::client::MetricPoint;
using Clock = std::chrono::steady_clock;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string HostName() {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  return host;
}

// Backoff between failed calls: 1 s doubling to 60 s.
std::chrono::seconds Backoff(int failures) {
  return std::chrono::seconds(std::min(60, 1 << std::min(failures - 1, 6)));
}

}  // namespace

Status CheckTrackUrl(const std::string& url) {
  if (!StartsWith(url, "http://") && !StartsWith(url, "https://")) {
    return InvalidArgument("--track '" + storage::RedactUrl(url) +
                           "' must be the tracking server's http:// or https:// URL");
  }
  return Status();
}

RunTracker::RunTracker(TrackOptions options, storage::StoreRegistry& registry,
                       const Environment& env)
    : options_(std::move(options)), registry_(registry), env_(env) {
  std::string path = options_.output_log_path;
  if (path.empty()) {
    path = (std::filesystem::temp_directory_path() /
            ("ferry-output-" + std::to_string(::getpid()) + ".log"))
               .string();
  }
  auto log = OutputLog::Create(path, options_.output_log_limit);
  if (log.ok()) {
    log_ = std::move(*log);
  } else {
    Log(LogLevel::kWarn, "--track: {}; the command's output is not kept", log.status().message());
  }
}

RunTracker::~RunTracker() {
  {
    MutexLock lock(mu_);
    if (!stop_) end_deadline_ = Clock::now() + kFinalFlush;  // Ended was not called
    stop_ = true;
  }
  wake_.NotifyAll();
  if (worker_.joinable()) worker_.join();
}

Status RunTracker::OpenRun(const RunPlan& plan) {
  const std::string token = env_.GetOr("MLFLOW_TRACKING_TOKEN", "");
  if (!token.empty()) RegisterSecret(token);
  FERRY_ASSIGN_OR_RETURN(
      client_, tracker::client::MlflowClient::Create({.url = options_.url, .token = token}));
  client_->SetDeadline(Clock::now() + kStartBudget);
  attempt_ = plan.id.attempt;
  auto tags =
      RunTags(plan, HostName(), env_.GetOr("USER", ""), std::filesystem::current_path().string());
  // When this attempt began (the UI marks attempts on the charts' axes).
  tags.emplace_back(AttemptStartedTag(attempt_), std::to_string(NowMs()));
  // A later attempt of this job and rank continues the run its first attempt created.
  std::optional<storage::OpenedUrl> records;
  std::string record_key;
  if (!plan.outputs.empty()) {
    const Output& first = plan.outputs.front();
    if (auto r = registry_.Open(first.tmpl); r.ok()) {
      records = std::move(*r);
      record_key = first.records_key + TrackingRecordName(plan.id.rank);
      if (auto text = records->store->ReadAll(record_key); text.ok()) {
        auto rec = ParseTrackingRecord(*text);
        if (rec && rec->url == client_->url()) {
          auto run = client_->GetRun(rec->run_id);
          if (run.ok()) {
            run_ = *run;
            experiment_ = rec->experiment;
            FERRY_RETURN_IF_ERROR(client_->UpdateRun(run_.run_id, "RUNNING", 0));
            for (const auto& [k, v] : tags) {
              if (k == "ferry.attempt" || k == "ferry.host" || k == AttemptStartedTag(attempt_)) {
                FERRY_RETURN_IF_ERROR(client_->SetTag(run_.run_id, k, v));
              }
            }
            Log(LogLevel::kInfo, "--track: attempt {} continues tracking run {} at {}",
                plan.id.attempt, run_.run_id, client_->url());
            return Status();
          }
          if (run.status().code() != StatusCode::kNotFound) return run.status();
          Log(LogLevel::kWarn,
              "--track: run {} recorded by an earlier attempt is gone; starting "
              "a new one",
              rec->run_id);
        }
      }
    }
  }
  experiment_ = !options_.experiment.empty() ? options_.experiment
                                             : env_.GetOr("MLFLOW_EXPERIMENT_NAME", "Default");
  std::string name = options_.run_name;
  if (name.empty()) {
    name =
        plan.id.job + (plan.id.rank == "0" || plan.id.rank.empty() ? "" : "-rank" + plan.id.rank);
  }
  FERRY_ASSIGN_OR_RETURN(std::string exp_id, client_->GetOrCreateExperiment(experiment_));
  FERRY_ASSIGN_OR_RETURN(run_, client_->CreateRun(exp_id, name, NowMs(), tags));
  if (run_.start_time_ms == 0) run_.start_time_ms = NowMs();
  Log(LogLevel::kInfo, "--track: run {} in experiment '{}' at {}", run_.run_id, experiment_,
      client_->url());
  if (records) {
    Status written = records->store
                         ->WriteAll(record_key, TrackingRecordJson({.url = client_->url(),
                                                                    .run_id = run_.run_id,
                                                                    .experiment_id = exp_id,
                                                                    .experiment = experiment_}))
                         .status();
    if (!written.ok()) {
      Log(LogLevel::kWarn,
          "--track: cannot record the run id in the job's records ({}); a "
          "later attempt will start a new tracking run",
          written.message());
    }
  }
  return Status();
}

std::vector<std::pair<std::string, std::string>> RunTracker::BeforeStart(const RunPlan& plan) {
  if (!plan.outputs.empty()) disk_path_ = plan.outputs.front().dir;
  // The command's stdout is a pipe through the tee: Python would buffer it in blocks, and the
  // terminal and the log would see prints late.
  std::vector<std::pair<std::string, std::string>> unbuffered;
  if (log_ && !env_.Get("PYTHONUNBUFFERED")) unbuffered.emplace_back("PYTHONUNBUFFERED", "1");
  Status opened = OpenRun(plan);
  if (client_) client_->SetDeadline(std::nullopt);
  if (!opened.ok()) {
    Log(LogLevel::kWarn, "--track: {}; the command runs without tracking", opened.message());
    return unbuffered;
  }
  active_ = true;
  worker_ = std::thread([this] { Work(); });
  std::vector<std::pair<std::string, std::string>> env = {
      {"MLFLOW_TRACKING_URI", client_->url()},
      {"MLFLOW_RUN_ID", run_.run_id},
      {"MLFLOW_EXPERIMENT_NAME", experiment_},
      {"MLFLOW_EXPERIMENT_ID", run_.experiment_id}};
  env.insert(env.end(), unbuffered.begin(), unbuffered.end());
  return env;
}

void RunTracker::AfterSync(const RunPlan& plan, SyncKind /*kind*/, const SyncRound& /*round*/) {
  if (!active_) return;
  std::vector<CheckpointSet> sets;
  for (const auto& out : plan.outputs) {
    auto dst = registry_.Open(storage::DirectoryPrefix(out.url));
    if (!dst.ok()) continue;
    const std::string key = dst->key + "_ferry/" + ManifestName(plan.id.rank);
    auto text = dst->store->ReadAll(key);
    if (!text.ok()) continue;  // no complete set there yet
    const std::string manifest_url = dst->store->UrlFor(key);
    auto parsed = ParseManifest(*text, manifest_url);
    if (!parsed.ok()) continue;
    sets.push_back({.destination = storage::DirectoryPrefix(out.url),
                    .manifest_url = manifest_url,
                    .manifest = std::move(*parsed)});
  }
  {
    MutexLock lock(mu_);
    if (!sets.empty()) {
      checkpoints_json_ = CheckpointsJson(sets, plan.id);
      checkpoints_tag_ = sets.front().destination;
    }
    log_due_ = true;
  }
  wake_.NotifyAll();
}

void RunTracker::Ended(const ChildState& child, int exit_code) {
  if (!active_) return;
  const auto deadline = Clock::now() + kFinalFlush;
  client_->SetDeadline(deadline);
  {
    MutexLock lock(mu_);
    stop_ = true;
    end_deadline_ = deadline;
    // A command that never started (a stop signal while the run was being created): KILLED
    // when ferry was stopped, else FAILED.
    final_status_ =
        child.pid < 0 ? (exit_code >= 128 ? "KILLED" : "FAILED") : FinalStatus(child, exit_code);
    exit_code_ = child.exit_code >= 0 ? child.exit_code : exit_code;
    log_due_ = true;
  }
  wake_.NotifyAll();
  bool done;
  {
    // A call to a hung server started before the end would outlast the deadline: aborted then.
    MutexLock lock(mu_);
    done = wake_.WaitFor(lock, std::max(deadline - Clock::now(), Clock::duration(0)),
                         [this]() REQUIRES(mu_) { return worker_done_; });
  }
  if (!done) client_->CancelAll();
  if (worker_.joinable()) worker_.join();
}

void RunTracker::NoteFailure(const Status& s) {
  ++failures_;
  retry_at_ = Clock::now() + Backoff(failures_);
  if (!warned_) {
    warned_ = true;
    Log(LogLevel::kWarn, "--track: {}; retrying in the background (the job goes on)", s.message());
  } else {
    Log(LogLevel::kDebug, "--track: {}", s.message());
  }
}

void RunTracker::Refused(const Status& s, const char* what) {
  // Not retried: the same request would be refused again (an artifact_uri the server does not
  // serve, a point it rejects). Said once per kind.
  if (refused_.insert(what).second) {
    Log(LogLevel::kWarn, "--track: {} not recorded: {}", what, s.message());
  }
}

void RunTracker::NoteSuccess() {
  if (failures_ > 0 && warned_) {
    Log(LogLevel::kInfo, "--track: the tracking server answers again");
    warned_ = false;
  }
  failures_ = 0;
}

bool RunTracker::Flush(bool final_pass) {
  // Metric points, oldest first, at most one call's worth per pass unless it is the last.
  while (true) {
    std::vector<MetricPoint> batch;
    {
      MutexLock lock(mu_);
      const size_t n = std::min(queue_.size(), tracker::client::kMaxMetricsPerBatch);
      batch.assign(queue_.begin(), queue_.begin() + static_cast<long>(n));
    }
    if (batch.empty()) break;
    size_t sent = 0;
    Status s = client_->LogMetrics(run_.run_id, batch, &sent);
    // A batch the server refuses for good (not retryable) is dropped with one warning.
    if (!s.ok() && !IsRetryable(s)) {
      Refused(s, "metric points");
      sent = batch.size();
    }
    {
      MutexLock lock(mu_);
      queue_.erase(queue_.begin(),
                   queue_.begin() + static_cast<long>(std::min(sent, queue_.size())));
    }
    if (!s.ok() && IsRetryable(s)) {
      NoteFailure(s);
      return false;
    }
    NoteSuccess();
    if (!final_pass) break;
  }
  std::string checkpoints, tag;
  bool log_due;
  {
    MutexLock lock(mu_);
    checkpoints.swap(checkpoints_json_);
    tag = checkpoints_tag_;
    log_due = log_due_;
    log_due_ = false;
  }
  if (!checkpoints.empty()) {
    Status s = client_->UploadArtifact(run_.artifact_uri, "ferry/checkpoints.json", checkpoints);
    if (s.ok()) s = client_->SetTag(run_.run_id, "ferry.checkpoints", tag);
    if (!s.ok() && !IsRetryable(s)) {
      Refused(s, "ferry/checkpoints.json");
    } else if (!s.ok()) {
      MutexLock lock(mu_);
      if (checkpoints_json_.empty()) checkpoints_json_ = std::move(checkpoints);  // not newer
      log_due_ = log_due_ || log_due;
      NoteFailure(s);
      return false;
    } else {
      NoteSuccess();
    }
  }
  if (log_due && log_ && log_->size() != log_uploaded_size_) {
    const uint64_t size = log_->size();
    auto text = log_->Contents();
    Status s = text.status();
    if (s.ok()) s = client_->UploadArtifact(run_.artifact_uri, OutputLogArtifact(attempt_), *text);
    if (!s.ok() && !IsRetryable(s)) {
      Refused(s, "the output log");
    } else if (!s.ok()) {
      MutexLock lock(mu_);
      log_due_ = true;
      NoteFailure(s);
      return false;
    } else {
      NoteSuccess();
    }
    log_uploaded_size_ = size;
  }
  return true;
}

int64_t RunTracker::NextStep(int64_t now_ms) {
  // Seconds since the run started (a later attempt continues the axis), never repeated: the
  // last sample may come within a second of the one before.
  last_step_ = std::max(last_step_ + 1, std::max<int64_t>(0, (now_ms - run_.start_time_ms) / 1000));
  return last_step_;
}

void RunTracker::Work() {
  std::unique_ptr<sysmetrics::SystemSampler> sampler;
  const auto interval = options_.system_metrics_interval;
  if (interval.count() > 0) {
    sampler = std::make_unique<sysmetrics::SystemSampler>(
        sysmetrics::SamplerOptions{.disk_path = disk_path_});
    Log(LogLevel::kInfo, "--track: system metrics every {} s; {}", interval.count(),
        sampler->gpu_note());
  }
  auto next_sample = Clock::now() + (interval.count() > 0 ? interval : std::chrono::hours(24));
  while (true) {
    bool stopping;
    {
      MutexLock lock(mu_);
      auto wake_at = std::min(next_sample, std::max(retry_at_, Clock::now()));
      wake_.WaitFor(
          lock, std::max(wake_at - Clock::now(), Clock::duration(0)), [this]() REQUIRES(mu_) {
            // Uploads wait out the backoff of a failed call.
            return stop_ || ((log_due_ || !checkpoints_json_.empty()) && Clock::now() >= retry_at_);
          });
      stopping = stop_;
    }
    if (stopping) break;
    if (sampler && Clock::now() >= next_sample) {
      next_sample += interval;
      const int64_t now = NowMs();
      const int64_t step = NextStep(now);
      auto metrics = sampler->Sample();
      MutexLock lock(mu_);
      for (auto& m : metrics) queue_.push_back({std::move(m.name), m.value, now, step});
      if (queue_.size() > kMaxQueuedPoints) {
        const size_t drop = queue_.size() - kMaxQueuedPoints;
        queue_.erase(queue_.begin(), queue_.begin() + static_cast<long>(drop));
        if (dropped_ == 0) {
          Log(LogLevel::kWarn,
              "--track: more than {} metric points wait for the tracking server; "
              "dropping the oldest",
              kMaxQueuedPoints);
        }
        dropped_ += drop;
      }
    }
    if (Clock::now() >= retry_at_) Flush(false);
  }
  // The end: a last sample, everything left, then the run's status, within kFinalFlush of the
  // command's end (Ended).
  Clock::time_point deadline;
  {
    MutexLock lock(mu_);
    deadline = end_deadline_;
  }
  if (sampler) {
    const int64_t now = NowMs();
    const int64_t step = NextStep(now);
    MutexLock lock(mu_);
    for (auto& m : sampler->Sample()) queue_.push_back({std::move(m.name), m.value, now, step});
  }
  std::string status;
  int exit_code;
  {
    MutexLock lock(mu_);
    status = final_status_;
    exit_code = exit_code_;
  }
  bool flushed = false, ended = false;
  while (Clock::now() < deadline) {
    if (!flushed) flushed = Flush(true);
    if (flushed && !ended) {
      Status s = client_->SetTag(run_.run_id, "ferry.exit_code", std::to_string(exit_code));
      if (s.ok() && !status.empty()) s = client_->UpdateRun(run_.run_id, status, NowMs());
      if (s.ok() || !IsRetryable(s)) {
        if (!s.ok()) Refused(s, "the run's end");
        ended = s.ok();
        break;
      }
      NoteFailure(s);
    }
    std::this_thread::sleep_for(std::min<Clock::duration>(
        std::chrono::seconds(1), std::max<Clock::duration>(deadline - Clock::now(), {})));
  }
  if (!ended && refused_.count("the run's end") == 0) {
    Log(LogLevel::kWarn, "--track: could not record the end of run {} within {} s", run_.run_id,
        kFinalFlush.count());
  }
  MutexLock lock(mu_);
  worker_done_ = true;
  wake_.NotifyAll();
}

}  // namespace ferry::job::track
