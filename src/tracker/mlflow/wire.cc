#include "tracker/mlflow/wire.h"

#include <cmath>

#include "tracker/enum_names.h"
#include "tracker/mlflow/request_args.h"

namespace ferry::tracker::mlflow {

using nlohmann::json;

json Int64Json(int64_t v) { return std::to_string(v); }

json DoubleJson(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

json TagsJson(const std::vector<Tag>& tags) {
  json out = json::array();
  for (const auto& t : tags) out.push_back({{"key", t.key}, {"value", t.value}});
  return out;
}

json ExperimentJson(const Experiment& e) {
  return {{"experiment_id", e.id},
          {"name", e.name},
          {"artifact_location", e.artifact_location},
          {"lifecycle_stage", LifecycleStageName(e.stage)},
          {"creation_time", Int64Json(e.creation_time)},
          {"last_update_time", Int64Json(e.last_update_time)},
          {"tags", TagsJson(e.tags)}};
}

json RunInfoJson(const RunInfo& i) {
  json out = {{"run_id", i.run_id},
              {"run_uuid", i.run_id},
              {"experiment_id", i.experiment_id},
              {"run_name", i.run_name},
              {"user_id", i.user_id},
              {"status", RunStatusName(i.status)},
              {"start_time", Int64Json(i.start_time)},
              {"artifact_uri", i.artifact_uri},
              {"lifecycle_stage", LifecycleStageName(i.stage)}};
  if (i.end_time) out["end_time"] = Int64Json(*i.end_time);
  return out;
}

json MetricJson(const MetricPoint& m) {
  return {{"key", m.key},
          {"value", DoubleJson(m.value)},
          {"timestamp", Int64Json(m.timestamp_ms)},
          {"step", Int64Json(m.step)}};
}

json RunJson(const Run& run) {
  json metrics = json::array();
  for (const auto& m : run.latest_metrics) metrics.push_back(MetricJson(m));
  return {{"info", RunInfoJson(run.info)},
          {"data",
           {{"metrics", metrics}, {"params", TagsJson(run.params)}, {"tags", TagsJson(run.tags)}}},
          {"inputs", json::object()}};
}

json SampledPointJson(const SampledPoint& p) {
  return {{"key", p.key},
          {"value", DoubleJson(p.value)},
          {"timestamp", Int64Json(p.timestamp_ms)},
          {"step", Int64Json(p.step)},
          {"run_id", p.run_id}};
}

server::Response OkJson(const json& body) {
  return server::JsonResponse(200, body.dump(-1, ' ', false, json::error_handler_t::replace));
}

server::Response Respond(const Result<json>& result) {
  if (!result.ok()) return MlflowError(result.status());
  return OkJson(*result);
}

server::Response MlflowError(int http_status, std::string_view error_code, std::string message) {
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  json body = {{"error_code", error_code}, {"message", message}};
  return server::JsonResponse(http_status,
                              body.dump(-1, ' ', false, json::error_handler_t::replace));
}

server::Response MlflowError(const Status& status) {
  const std::string& m = status.message();
  switch (status.code()) {
    case StatusCode::kNotFound:
      return MlflowError(404, "RESOURCE_DOES_NOT_EXIST", m);
    case StatusCode::kAlreadyExists:
      return MlflowError(400, "RESOURCE_ALREADY_EXISTS", m);
    case StatusCode::kInvalidArgument:
      if (std::string_view(m).starts_with(kMalformedBody))
        return MlflowError(400, "BAD_REQUEST", m);
      return MlflowError(400, "INVALID_PARAMETER_VALUE", m);
    case StatusCode::kFailedPrecondition:  // a deleted run or experiment, as MLflow answers it
      return MlflowError(400, "INVALID_PARAMETER_VALUE", m);
    case StatusCode::kUnavailable:
    case StatusCode::kDeadlineExceeded:
      return MlflowError(503, "TEMPORARILY_UNAVAILABLE", m);
    case StatusCode::kResourceExhausted:
      return MlflowError(429, "REQUEST_LIMIT_EXCEEDED", m);
    case StatusCode::kUnimplemented:
      return MlflowError(501, "NOT_IMPLEMENTED", m);
    default:
      return MlflowError(500, "INTERNAL_ERROR", m);
  }
}

}  // namespace ferry::tracker::mlflow
