// metrics/get-history, metrics/get-history-bulk-interval and server-info
// (docs/semantics/mlflow.md, "Metric history").
#include "tracker/mlflow/handlers.h"
#include "tracker/mlflow/request_args.h"
#include "tracker/mlflow/run_common.h"
#include "tracker/mlflow/wire.h"

namespace ferry::tracker::mlflow {
namespace {

using nlohmann::json;

// get-history: the most points one page holds (MLflow's GET_METRIC_HISTORY_MAX_RESULTS).
constexpr int64_t kMaxHistoryResults = 25000;
// get-history-bulk-interval: runs per request and points per run (MLflow's
// MAX_RUNS_GET_METRIC_HISTORY_BULK and MAX_RESULTS_PER_RUN, also its default).
constexpr size_t kMaxBulkRuns = 100;
constexpr int64_t kMaxBulkResults = 2500;
constexpr int64_t kDefaultBulkResults = kMaxBulkResults;

Result<json> GetHistory(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RunId());
  FERRY_ASSIGN_OR_RETURN(std::string key, args.RequiredString("metric_key"));
  FERRY_ASSIGN_OR_RETURN(auto max_results, args.Int64("max_results"));
  if (max_results && (*max_results < 1 || *max_results > kMaxHistoryResults)) {
    return InvalidArgument("Invalid value " + std::to_string(*max_results) +
                           " for parameter 'max_results' supplied: it must be between 1 and " +
                           std::to_string(kMaxHistoryResults));
  }
  FERRY_ASSIGN_OR_RETURN(auto token, args.String("page_token"));
  FERRY_ASSIGN_OR_RETURN(
      auto page, ForRun(id, d.store->GetMetricHistory(
                                id, key, static_cast<int>(max_results.value_or(kMaxHistoryResults)),
                                token.value_or(""))));
  json metrics = json::array();
  for (const auto& m : page.items) metrics.push_back(MetricJson(m));
  json out = json::object();
  SetRepeated(out, "metrics", std::move(metrics));
  if (!page.next_page_token.empty()) out["next_page_token"] = page.next_page_token;
  return out;
}

Result<json> GetHistoryBulkInterval(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto run_ids, args.StringList("run_ids"));
  if (run_ids.empty()) return InvalidArgument("Missing value for required parameter 'run_ids'");
  if (run_ids.size() > kMaxBulkRuns) {
    return InvalidArgument("GetMetricHistoryBulkInterval request must specify at most " +
                           std::to_string(kMaxBulkRuns) + " run_ids; got " +
                           std::to_string(run_ids.size()));
  }
  FERRY_ASSIGN_OR_RETURN(std::string key, args.RequiredString("metric_key"));
  FERRY_ASSIGN_OR_RETURN(auto start_step, args.Int64("start_step"));
  FERRY_ASSIGN_OR_RETURN(auto end_step, args.Int64("end_step"));
  if (start_step.has_value() != end_step.has_value()) {
    return InvalidArgument("If either start_step or end_step is specified, both must be");
  }
  if (start_step && *start_step > *end_step) {
    return InvalidArgument("end_step must be greater than or equal to start_step; got start_step=" +
                           std::to_string(*start_step) + ", end_step=" + std::to_string(*end_step));
  }
  FERRY_ASSIGN_OR_RETURN(auto max_results, args.Int64("max_results"));
  if (max_results && (*max_results < 1 || *max_results > kMaxBulkResults)) {
    return InvalidArgument("Invalid value " + std::to_string(*max_results) +
                           " for parameter 'max_results' supplied: it must be between 1 and " +
                           std::to_string(kMaxBulkResults));
  }
  FERRY_ASSIGN_OR_RETURN(auto points,
                         d.store->GetMetricHistoryBulkInterval(
                             run_ids, key, start_step, end_step,
                             static_cast<int>(max_results.value_or(kDefaultBulkResults))));
  json metrics = json::array();
  for (const auto& p : points) metrics.push_back(SampledPointJson(p));
  json out = json::object();
  SetRepeated(out, "metrics", std::move(metrics));
  return out;
}

}  // namespace

Response HandleGetMetricHistory(const Request& r, MlflowDeps& d) {
  return Respond(GetHistory(r, d));
}
Response HandleGetMetricHistoryBulkInterval(const Request& r, MlflowDeps& d) {
  return Respond(GetHistoryBulkInterval(r, d));
}
Response HandleServerInfo(const Request&, MlflowDeps& d) {
  return OkJson({{"store_type", d.options.store_type}});
}

}  // namespace ferry::tracker::mlflow
