#pragma once
// MLflow's limits on what clients log (docs/semantics/mlflow.md, "Limits"), checked before the
// store sees a request. Each failure is kInvalidArgument naming the key and the limit.

#include <cstddef>
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

// `what` is "metric", "param" or "tag". Names: 1..250 bytes of letters, digits, '_', '-', '.',
// ' ', ':', '/', not starting with '/' and without a ".." segment (they become paths).
Status ValidateKey(std::string_view what, std::string_view key);
Status ValidateBatch(const std::vector<MetricPoint>& metrics, const std::vector<Param>& params,
                     const std::vector<Tag>& tags);
Status ValidateExperimentName(std::string_view name);
// Also checks the ferry.retention.* settings (tracker/retention_policy.h).
Status ValidateExperimentTag(const Tag& tag);

}  // namespace ferry::tracker::mlflow
