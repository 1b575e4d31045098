#pragma once
// Applies an experiment's checkpoint retention policy (tracker/retention_policy.h) to its runs'
// artifacts, in the server, so every client (MLflow, HF Trainer's MLflow callback, ferry.track)
// gets it without new code. Docs: docs/semantics/mlflow-artifacts.md, "Retention".
//
// A checkpoint is a directory in one of two places of a run's artifacts (each place is decided
// on its own; files are ignored):
//  - directly below "checkpoints/" (any name: "checkpoints/step_000500/");
//  - directly below the run's artifact root when its name starts with "checkpoint-": where
//    Hugging Face Trainer's MLflowCallback (HF_MLFLOW_LOG_ARTIFACTS=1) logs "checkpoint-500/".
// When it runs (events only; there is no periodic sweep):
//  - an upload into a checkpoint was published (a PUT, or a multipart upload completed): the
//    run's checkpoints are decided again (Finished());
//  - a ferry.retention.* tag of an experiment was set: each active run of the experiment
//    (ApplyToExperiment()).
// What the policy deletes is removed with ArtifactRepo::Delete, logged (one line per checkpoint:
// run, checkpoint, reason) and recorded in the run's tag ferry.retention.deleted (paths relative
// to the run's artifact root: "checkpoints/step_100", "checkpoint-500").
// A checkpoint with an upload in progress (a PUT being read, a multipart upload created and not
// completed or aborted) is never deleted. Decisions and deletions hold one mutex, and an upload
// starts only between them, so a deletion never races an upload it could have seen.
// Thread-safety: all methods may be called concurrently.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/mutex.h"
#include "base/status.h"
#include "tracker/artifacts/artifact_repo.h"
#include "tracker/artifacts/artifact_routes.h"
#include "tracker/retention_policy.h"
#include "tracker/tracker_store.h"

namespace ferry::tracker::retention {

// The directory below a run's artifact root that holds its checkpoints.
inline constexpr std::string_view kCheckpointsDir = "checkpoints";

struct RetentionOptions {
  // The artifact path (below the repository's root) where a run's artifact URI is served, or
  // nullopt for a URI this server does not serve (its checkpoints are left alone).
  std::function<std::optional<std::string>(std::string_view artifact_uri)> served_path;
};

class CheckpointRetention final : public artifacts::UploadObserver {
 public:
  CheckpointRetention(std::shared_ptr<TrackerStore> store,
                      std::shared_ptr<artifacts::ArtifactRepo> repo, RetentionOptions options);

  // artifacts::UploadObserver: marks the checkpoint of `path` (if any) as being uploaded.
  void Started(std::string_view path) override;
  // Unmarks it and, when published, applies the run's policy (errors are logged).
  void Finished(std::string_view path, bool published) override;

  // Applies the experiment's policy to each of its active runs; OK when it has none.
  Status ApplyToExperiment(const std::string& experiment_id);
  // Applies the policy of the run's experiment to the run; OK when there is none.
  Status ApplyToRun(const std::string& run_id);

 private:
  Status ApplyLocked(const Run& run, const RetentionPolicy& policy) REQUIRES(mu_);
  // One place of `root` ("checkpoints" or "" for the root's "checkpoint-*" directories).
  Status ApplyInLocked(const Run& run, const RetentionPolicy& policy, const std::string& root,
                       std::string_view place, std::vector<std::string>* deleted) REQUIRES(mu_);
  Status RecordLocked(const Run& run, const std::vector<std::string>& deleted) REQUIRES(mu_);

  std::shared_ptr<TrackerStore> store_;
  std::shared_ptr<artifacts::ArtifactRepo> repo_;
  RetentionOptions options_;
  Mutex mu_;
  // Checkpoint directory path -> uploads into it in progress.
  std::map<std::string, int, std::less<>> uploading_ GUARDED_BY(mu_);
};

// The checkpoint directories `path` could be in: "<...>/checkpoints/<name>" and
// "<...>/checkpoint-<...>" for such segments with more of the path below them. Pure (tested).
std::vector<std::string> CheckpointDirsOf(std::string_view path);
// The run artifact roots a checkpoint directory could belong to ("<...>/<run id>/artifacts"
// followed by "/checkpoints/<name>" or "/checkpoint-<...>"). Pure (tested).
std::vector<std::string> RootsOf(std::string_view checkpoint_dir);

}  // namespace ferry::tracker::retention
