#pragma once
// MLflow's limits on what clients log (docs/semantics/mlflow.md, "Limits"), checked before the
// store sees a request. Each failure is kInvalidArgument naming the key and the limit.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tracker/model.h"

namespace ferry::tracker::mlflow {

// MLflow's own numbers (mlflow/utils/validation.py).
inline constexpr size_t kMaxKeyLength = 250;
inline constexpr size_t kMaxParamValueLength = 6000;
inline constexpr size_t kMaxTagValueLength = 8000;
inline constexpr size_t kMaxExperimentTagValueLength = 5000;
inline constexpr size_t kMaxExperimentNameLength = 500;
inline constexpr size_t kMaxBatchMetrics = 1000;
inline constexpr size_t kMaxBatchParams = 100;
inline constexpr size_t kMaxBatchTags = 100;
inline constexpr size_t kMaxBatchEntities = 1000;
inline constexpr size_t kMaxBatchRequestBytes = 1000000;  // MAX_BATCH_LOG_REQUEST_SIZE
// A run's name and user are stored as the tags mlflow.runName and mlflow.user: a tag's limit.
inline constexpr size_t kMaxRunNameLength = kMaxTagValueLength;
// Timestamps are milliseconds since 1970, up to the last of year 9999 (what the UI and every
// client can show as a date); negative or larger values are refused.
inline constexpr int64_t kMaxTimestampMs = 253402300799999;

// `what` is "metric", "param" or "tag". Names: 1..250 bytes of letters, digits, '_', '-', '.',
// ' ', ':', '/', not starting with '/' and without a ".." segment (they become paths).
Status ValidateKey(std::string_view what, std::string_view key);
Status ValidateBatch(const std::vector<MetricPoint>& metrics, const std::vector<Param>& params,
                     const std::vector<Tag>& tags);
Status ValidateExperimentName(std::string_view name);
// `what`: "run name", "user". At most kMaxRunNameLength bytes.
Status ValidateRunText(std::string_view what, std::string_view text);
// `what` names the field ("timestamp", "start_time", "metrics[3].timestamp").
Status ValidateTimestamp(std::string_view what, int64_t ms);
// Also checks the ferry.retention.* settings (tracker/retention_policy.h).
Status ValidateExperimentTag(const Tag& tag);

}  // namespace ferry::tracker::mlflow
