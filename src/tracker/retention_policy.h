#pragma once
// Server-side checkpoint retention (issue 14; docs/semantics/mlflow-artifacts.md, "Retention"):
// the policy an experiment sets with tags, and the pure decision of which of a run's checkpoints
// to keep. Applying it (listing, deleting, recording) is tracker/retention's job.
//
// The policy is four experiment tags, settable from any MLflow client
// (experiments/set-experiment-tag):
//   ferry.retention.keep_last = N      keep the N checkpoints with the highest steps
//   ferry.retention.keep_best = K      keep the K best checkpoints by the metric
//   ferry.retention.metric    = M      the metric "best" is measured by (needed when K > 0)
//   ferry.retention.goal      = min|max  (default min: a loss)
// A checkpoint is kept when it is in the union of the last N and the best K, and always when it
// is the newest, is being uploaded, has no step in its name or (with K > 0) has no value of M:
// when unsure, keep. The step of a checkpoint is the trailing integer of its name
// ("checkpoint-500", "step_000500", "epoch-3"); its value of M is the run's latest point of M at
// a step <= the checkpoint's step.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tracker/model.h"

namespace ferry::tracker {

inline constexpr std::string_view kRetentionTagPrefix = "ferry.retention.";
// The run tag where the server records the checkpoints it deleted (comma-separated, oldest
// first, the oldest names dropped beyond kMaxRetentionRecordLength).
inline constexpr std::string_view kRetentionDeletedTag = "ferry.retention.deleted";
inline constexpr size_t kMaxRetentionRecordLength = 4000;
// The largest keep_last / keep_best accepted.
inline constexpr int64_t kMaxRetentionCount = 1000000;

enum class RetentionGoal { kMin, kMax };

struct RetentionPolicy {
  std::optional<int64_t> keep_last;
  std::optional<int64_t> keep_best;
  std::string metric;  // "" = not set
  RetentionGoal goal = RetentionGoal::kMin;

  // True when the policy may delete anything: keep_last or keep_best is set, and keep_best > 0
  // comes with a metric (a half-set policy deletes nothing).
  bool Active() const;
  // "keep the last 2 and the best 1 by eval_loss (min)".
  std::string Describe() const;
};

// Checks one experiment tag: a key under "ferry.retention." must be one of the four settings
// and its value valid for it (an empty value unsets the setting). Other keys: OK.
// InvalidArgument naming the key and what is wrong.
Status ValidateRetentionTag(const Tag& tag);

// The policy in an experiment's tags (invalid or empty settings are ignored: they were refused
// when set). nullopt when no setting is present.
std::optional<RetentionPolicy> RetentionPolicyFromTags(const std::vector<Tag>& tags);

// The trailing integer of a checkpoint's name ("checkpoint-500" -> 500); nullopt when the name
// does not end in a digit or the number does not fit.
std::optional<int64_t> CheckpointStep(std::string_view name);

struct CheckpointState {
  std::string name;        // the directory's name below checkpoints/
  bool uploading = false;  // an upload into it is in progress
};

struct RetentionDecision {
  std::string name;
  bool keep = true;
  std::string reason;  // one phrase: why kept, or why deleted
};

// Decides for each checkpoint (one decision per input, in input order). `history` holds the
// run's points of policy.metric (any order; other keys are ignored). An inactive policy keeps
// everything.
std::vector<RetentionDecision> DecideRetention(const std::vector<CheckpointState>& checkpoints,
                                               const std::vector<MetricPoint>& history,
                                               const RetentionPolicy& policy);

}  // namespace ferry::tracker
