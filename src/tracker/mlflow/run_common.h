#pragma once
// What the run and logging handlers share: tags/params/metrics from request JSON and the
// wording of "no such run".

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tracker/mlflow/request_args.h"
#include "tracker/model.h"

namespace ferry::tracker::mlflow {

// A list of {"key", "value"} objects (absent: empty).
Result<std::vector<Tag>> ParseTags(const RequestArgs& args, std::string_view field);
// A list of {"key", "value", "timestamp", "step"} objects; value and timestamp are required,
// step defaults to 0.
Result<std::vector<MetricPoint>> ParseMetrics(const RequestArgs& args, std::string_view field);

// kNotFound becomes "Run with id=<id> not found"; anything else passes.
Status ForRun(const std::string& run_id, Status status);
template <typename T>
Result<T> ForRun(const std::string& run_id, Result<T> result) {
  if (result.ok()) return result;
  return ForRun(run_id, std::move(result).status());
}

}  // namespace ferry::tracker::mlflow
