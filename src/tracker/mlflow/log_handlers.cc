// runs/log-batch, log-metric, log-parameter, set-tag, delete-tag (docs/semantics/mlflow.md,
// "Logging"). Everything goes through TrackerStore::LogBatch: one transaction per request, and
// a retried request stores no duplicate metric points.
#include "tracker/mlflow/handlers.h"
#include "tracker/mlflow/request_args.h"
#include "tracker/mlflow/run_common.h"
#include "tracker/mlflow/validation.h"
#include "tracker/mlflow/wire.h"

namespace ferry::tracker::mlflow {
namespace {

using nlohmann::json;

Result<json> Log(MlflowDeps& d, const std::string& run_id, std::vector<MetricPoint> metrics,
                 std::vector<Param> params, std::vector<Tag> tags) {
  FERRY_RETURN_IF_ERROR(ValidateBatch(metrics, params, tags));
  FERRY_RETURN_IF_ERROR(ForRun(run_id, d.store->LogBatch(run_id, metrics, params, tags)));
  return json::object();
}

Result<json> LogBatch(const Request& r, MlflowDeps& d) {
  if (r.body.size() > kMaxBatchRequestBytes) {
    return InvalidArgument("Batched logging API requests must be at most " +
                           std::to_string(kMaxBatchRequestBytes) + " bytes; got " +
                           std::to_string(r.body.size()));
  }
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RunId());
  FERRY_ASSIGN_OR_RETURN(auto metrics, ParseMetrics(args, "metrics"));
  FERRY_ASSIGN_OR_RETURN(auto params, ParseTags(args, "params"));
  FERRY_ASSIGN_OR_RETURN(auto tags, ParseTags(args, "tags"));
  return Log(d, id, std::move(metrics), std::move(params), std::move(tags));
}

Result<json> LogMetric(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RunId());
  FERRY_ASSIGN_OR_RETURN(std::string key, args.RequiredString("key"));
  FERRY_ASSIGN_OR_RETURN(auto value, args.Double("value"));
  if (!value) return InvalidArgument("Missing value for required parameter 'value'");
  FERRY_ASSIGN_OR_RETURN(auto timestamp, args.Int64("timestamp"));
  if (!timestamp) return InvalidArgument("Missing value for required parameter 'timestamp'");
  FERRY_ASSIGN_OR_RETURN(auto step, args.Int64("step"));
  return Log(d, id, {{key, *value, *timestamp, step.value_or(0)}}, {}, {});
}

Result<json> LogParam(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RunId());
  FERRY_ASSIGN_OR_RETURN(std::string key, args.RequiredString("key"));
  FERRY_ASSIGN_OR_RETURN(auto value, args.String("value"));
  if (!value) return InvalidArgument("Missing value for required parameter 'value'");
  return Log(d, id, {}, {{key, *value}}, {});
}

Result<json> SetTag(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RunId());
  FERRY_ASSIGN_OR_RETURN(std::string key, args.RequiredString("key"));
  FERRY_ASSIGN_OR_RETURN(auto value, args.String("value"));
  return Log(d, id, {}, {}, {{key, value.value_or("")}});
}

Result<json> DeleteTag(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RunId());
  FERRY_ASSIGN_OR_RETURN(std::string key, args.RequiredString("key"));
  FERRY_RETURN_IF_ERROR(ForRun(id, d.store->DeleteTag(id, key)));
  return json::object();
}

}  // namespace

Response HandleLogBatch(const Request& r, MlflowDeps& d) { return Respond(LogBatch(r, d)); }
Response HandleLogMetric(const Request& r, MlflowDeps& d) { return Respond(LogMetric(r, d)); }
Response HandleLogParam(const Request& r, MlflowDeps& d) { return Respond(LogParam(r, d)); }
Response HandleSetTag(const Request& r, MlflowDeps& d) { return Respond(SetTag(r, d)); }
Response HandleDeleteTag(const Request& r, MlflowDeps& d) { return Respond(DeleteTag(r, d)); }

}  // namespace ferry::tracker::mlflow
