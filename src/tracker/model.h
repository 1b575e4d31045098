#pragma once
// The tracker's data model (issue 14): experiments, runs, params, tags and metric points, as
// MLflow's tracking API defines them (docs/semantics/mlflow.md). Plain values; times are
// milliseconds since the epoch; ids are strings (MLflow sends int64 as strings).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ferry::tracker {

enum class LifecycleStage { kActive, kDeleted };
// MLflow's RunStatus numbers (service.proto): RUNNING=1, SCHEDULED=2, FINISHED=3, FAILED=4,
// KILLED=5.
enum class RunStatus { kRunning = 1, kScheduled = 2, kFinished = 3, kFailed = 4, kKilled = 5 };
// Which runs/experiments a search sees (MLflow's ViewType: ACTIVE_ONLY=1, DELETED_ONLY=2, ALL=3).
enum class ViewType { kActiveOnly = 1, kDeletedOnly = 2, kAll = 3 };

struct Tag {
  std::string key, value;
  friend bool operator==(const Tag&, const Tag&) = default;
};
using Param = Tag;

struct MetricPoint {
  std::string key;
  double value = 0;  // NaN and +-inf are allowed (MLflow stores them)
  int64_t timestamp_ms = 0;
  int64_t step = 0;
  friend bool operator==(const MetricPoint&, const MetricPoint&) = default;
};

struct Experiment {
  std::string id;
  std::string name;
  std::string artifact_location;
  LifecycleStage stage = LifecycleStage::kActive;
  int64_t creation_time = 0;
  int64_t last_update_time = 0;
  std::vector<Tag> tags;
};

struct RunInfo {
  std::string run_id;  // 32 lower-case hex digits, as MLflow makes them
  std::string experiment_id;
  std::string run_name;
  std::string user_id;
  RunStatus status = RunStatus::kRunning;
  int64_t start_time = 0;
  std::optional<int64_t> end_time;
  std::string artifact_uri;
  LifecycleStage stage = LifecycleStage::kActive;
};

struct Run {
  RunInfo info;
  std::vector<MetricPoint> latest_metrics;  // per key: the point with the highest step, then
                                            // timestamp, then value (MLflow's "latest")
  std::vector<Param> params;
  std::vector<Tag> tags;
};

// A page of results and the token for the next one ("" at the end).
template <typename T>
struct Page {
  std::vector<T> items;
  std::string next_page_token;
};

// One point of a downsampled history (get-history-bulk-interval): the points of a step bucket
// reduced so spikes survive.
struct SampledPoint {
  std::string run_id;
  std::string key;
  int64_t step = 0;  // the step of the point kept
  double value = 0;
  int64_t timestamp_ms = 0;
};

}  // namespace ferry::tracker
