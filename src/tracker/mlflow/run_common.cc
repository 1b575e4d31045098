#include "tracker/mlflow/run_common.h"

namespace ferry::tracker::mlflow {

Result<std::vector<Tag>> ParseTags(const RequestArgs& args, std::string_view field) {
  FERRY_ASSIGN_OR_RETURN(auto objects, args.ObjectList(field));
  std::vector<Tag> tags;
  tags.reserve(objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    std::string where = std::string(field) + "[" + std::to_string(i) + "]";
    FERRY_ASSIGN_OR_RETURN(auto key, ObjectString(objects[i], "key", where));
    FERRY_ASSIGN_OR_RETURN(auto value, ObjectString(objects[i], "value", where));
    if (!key) return InvalidArgument("Missing value for required parameter '" + where + ".key'");
    tags.push_back({std::move(*key), value.value_or("")});
  }
  return tags;
}

Result<std::vector<MetricPoint>> ParseMetrics(const RequestArgs& args, std::string_view field) {
  FERRY_ASSIGN_OR_RETURN(auto objects, args.ObjectList(field));
  std::vector<MetricPoint> metrics;
  metrics.reserve(objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    std::string where = std::string(field) + "[" + std::to_string(i) + "]";
    auto missing = [&](const char* name) {
      return InvalidArgument("Missing value for required parameter '" + where + "." + name + "'");
    };
    FERRY_ASSIGN_OR_RETURN(auto key, ObjectString(objects[i], "key", where));
    FERRY_ASSIGN_OR_RETURN(auto value, ObjectDouble(objects[i], "value", where));
    FERRY_ASSIGN_OR_RETURN(auto timestamp, ObjectInt64(objects[i], "timestamp", where));
    FERRY_ASSIGN_OR_RETURN(auto step, ObjectInt64(objects[i], "step", where));
    if (!key) return missing("key");
    if (!value) return missing("value");
    if (!timestamp) return missing("timestamp");
    metrics.push_back({std::move(*key), *value, *timestamp, step.value_or(0)});
  }
  return metrics;
}

Status ForRun(const std::string& run_id, Status status) {
  if (status.code() == StatusCode::kNotFound) {
    return NotFound("Run with id=" + run_id + " not found");
  }
  return status;
}

}  // namespace ferry::tracker::mlflow
