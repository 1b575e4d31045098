#include "tracker/retention/checkpoint_retention.h"

#include <algorithm>

#include "base/log.h"
#include "base/strings.h"

namespace ferry::tracker::retention {
namespace {

// Points of one metric per history page (the REST layer's own maximum).
constexpr int kHistoryPage = 25000;

// "<...>/<run id>/artifacts" -> the run id; nullopt for another shape.
std::optional<std::string> RunIdOfRoot(std::string_view root) {
  constexpr std::string_view kArtifacts = "/artifacts";
  if (!root.ends_with(kArtifacts)) return std::nullopt;
  root.remove_suffix(kArtifacts.size());
  size_t slash = root.rfind('/');
  std::string_view id = slash == std::string_view::npos ? root : root.substr(slash + 1);
  if (id.empty()) return std::nullopt;
  return std::string(id);
}

// Hugging Face Trainer's checkpoint directories ("checkpoint-500").
constexpr std::string_view kHfCheckpointPrefix = "checkpoint-";

// "a/b/c" -> "a/b"; "c" -> "".
std::string_view Parent(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash);
}
std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

Result<std::vector<MetricPoint>> History(TrackerStore& store, const std::string& run_id,
                                         const std::string& key) {
  std::vector<MetricPoint> out;
  std::string token;
  do {
    FERRY_ASSIGN_OR_RETURN(auto page, store.GetMetricHistory(run_id, key, kHistoryPage, token));
    for (auto& p : page.items) out.push_back(std::move(p));
    token = std::move(page.next_page_token);
  } while (!token.empty());
  return out;
}

}  // namespace

std::vector<std::string> CheckpointDirsOf(std::string_view path) {
  std::vector<std::string> out;
  auto add = [&](std::string dir) {
    if (std::find(out.begin(), out.end(), dir) == out.end()) out.push_back(std::move(dir));
  };
  std::vector<std::string_view> parts = Split(path, '/');
  std::string prefix;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    // "checkpoints/<name>/<more>"
    if (parts[i] == kCheckpointsDir && i + 2 < parts.size() && !parts[i + 1].empty()) {
      add(prefix + std::string(parts[i]) + "/" + std::string(parts[i + 1]));
    }
    // "checkpoint-<...>/<more>"
    if (parts[i].starts_with(kHfCheckpointPrefix)) add(prefix + std::string(parts[i]));
    prefix += std::string(parts[i]) + "/";
  }
  return out;
}

std::vector<std::string> RootsOf(std::string_view dir) {
  std::vector<std::string> out;
  std::string_view parent = Parent(dir);
  if (BaseName(parent) == kCheckpointsDir && !Parent(parent).empty()) {
    out.emplace_back(Parent(parent));
  }
  if (BaseName(dir).starts_with(kHfCheckpointPrefix) && !parent.empty()) out.emplace_back(parent);
  return out;
}

CheckpointRetention::CheckpointRetention(std::shared_ptr<TrackerStore> store,
                                         std::shared_ptr<artifacts::ArtifactRepo> repo,
                                         RetentionOptions options)
    : store_(std::move(store)), repo_(std::move(repo)), options_(std::move(options)) {}

void CheckpointRetention::Started(std::string_view path) {
  std::vector<std::string> dirs = CheckpointDirsOf(path);
  if (dirs.empty()) return;  // not a checkpoint: never waits for a retention pass
  MutexLock lock(mu_);
  for (std::string& dir : dirs) ++uploading_[std::move(dir)];
}

void CheckpointRetention::Finished(std::string_view path, bool published) {
  std::vector<std::string> dirs = CheckpointDirsOf(path);
  if (dirs.empty()) return;
  {
    MutexLock lock(mu_);
    for (const std::string& dir : dirs) {
      auto it = uploading_.find(dir);
      if (it != uploading_.end() && --it->second <= 0) uploading_.erase(it);
    }
  }
  if (!published) return;
  std::vector<std::string> runs;
  for (const std::string& dir : dirs) {
    for (const std::string& root : RootsOf(dir)) {
      auto id = RunIdOfRoot(root);
      if (id && std::find(runs.begin(), runs.end(), *id) == runs.end()) runs.push_back(*id);
    }
  }
  for (const std::string& run_id : runs) {
    Status st = ApplyToRun(run_id);
    if (!st.ok()) {
      Log(LogLevel::kWarn, "retention: run {}: applying the policy after an upload failed: {}",
          run_id, st.message());
    }
  }
}

Status CheckpointRetention::ApplyToRun(const std::string& run_id) {
  auto run = store_->GetRun(run_id);
  if (!run.ok()) {
    // An upload below something that only looks like a run's artifacts: not ours to manage.
    return run.status().code() == StatusCode::kNotFound ? Status() : run.status();
  }
  if (run->info.stage != LifecycleStage::kActive) return Status();
  FERRY_ASSIGN_OR_RETURN(Experiment e, store_->GetExperiment(run->info.experiment_id));
  auto policy = RetentionPolicyFromTags(e.tags);
  if (!policy || !policy->Active()) return Status();
  MutexLock lock(mu_);
  return ApplyLocked(*run, *policy);
}

Status CheckpointRetention::ApplyToExperiment(const std::string& experiment_id) {
  FERRY_ASSIGN_OR_RETURN(Experiment e, store_->GetExperiment(experiment_id));
  auto policy = RetentionPolicyFromTags(e.tags);
  if (!policy || !policy->Active()) return Status();
  RunScan scan;
  scan.experiment_ids = {experiment_id};
  FERRY_ASSIGN_OR_RETURN(auto runs, store_->ScanRuns(scan));
  Status first;
  for (const Run& run : runs) {
    MutexLock lock(mu_);
    Status st = ApplyLocked(run, *policy);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

Status CheckpointRetention::ApplyLocked(const Run& run, const RetentionPolicy& policy) {
  if (!options_.served_path) return Status();
  auto root = options_.served_path(run.info.artifact_uri);
  if (!root) return Status();  // artifacts kept elsewhere (a user's s3://...)
  std::vector<std::string> deleted;
  Status first = ApplyInLocked(run, policy, *root, kCheckpointsDir, &deleted);
  Status hf = ApplyInLocked(run, policy, *root, "", &deleted);
  if (first.ok()) first = hf;
  if (!deleted.empty()) {
    Status st = RecordLocked(run, deleted);
    if (first.ok()) first = st;
  }
  return first;
}

Status CheckpointRetention::ApplyInLocked(const Run& run, const RetentionPolicy& policy,
                                          const std::string& root, std::string_view place,
                                          std::vector<std::string>* deleted) {
  const std::string dir = place.empty() ? root : root + "/" + std::string(place);
  const std::string shown = place.empty() ? "" : std::string(place) + "/";  // below the root
  FERRY_ASSIGN_OR_RETURN(auto entries, repo_->List(dir));
  std::vector<CheckpointState> checkpoints;
  for (const auto& entry : entries) {
    if (!entry.is_dir || (place.empty() && !entry.path.starts_with(kHfCheckpointPrefix))) {
      continue;
    }
    checkpoints.push_back({entry.path, uploading_.contains(dir + "/" + entry.path)});
  }
  if (checkpoints.size() < 2) return Status();  // the newest is always kept
  std::vector<MetricPoint> history;
  if (policy.keep_best.value_or(0) > 0) {
    FERRY_ASSIGN_OR_RETURN(history, History(*store_, run.info.run_id, policy.metric));
  }
  Status first;
  for (const RetentionDecision& d : DecideRetention(checkpoints, history, policy)) {
    if (d.keep) continue;
    Status st = repo_->Delete(dir + "/" + d.name);
    if (!st.ok()) {
      Log(LogLevel::kWarn, "retention: run {}: deleting checkpoint '{}{}' failed: {}",
          run.info.run_id, shown, d.name, st.message());
      if (first.ok()) first = st;
      continue;
    }
    Log(LogLevel::kWarn, "retention: run {}: deleted checkpoint '{}{}' ({}; policy: {})",
        run.info.run_id, shown, d.name, d.reason, policy.Describe());
    deleted->push_back(shown + d.name);
  }
  return first;
}

Status CheckpointRetention::RecordLocked(const Run& run, const std::vector<std::string>& deleted) {
  // The tag as stored now (the run value may be older: another apply may have recorded since).
  auto fresh = store_->GetRun(run.info.run_id);
  FERRY_RETURN_IF_ERROR(fresh.status());
  std::string record;
  for (const Tag& t : fresh->tags) {
    if (t.key == kRetentionDeletedTag) record = t.value;
  }
  for (const std::string& name : deleted) record += (record.empty() ? "" : ",") + name;
  if (record.size() > kMaxRetentionRecordLength) {
    // Drop the oldest names: whole entries, so the tag stays a list of names.
    size_t cut = record.find(',', record.size() - kMaxRetentionRecordLength);
    record = cut == std::string::npos ? std::string() : record.substr(cut + 1);
  }
  return store_->LogBatch(run.info.run_id, {}, {},
                          {Tag{std::string(kRetentionDeletedTag), record}});
}

}  // namespace ferry::tracker::retention
