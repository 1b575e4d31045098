// runs/*: create, update, get, search, delete, restore (docs/semantics/mlflow.md, "Runs"). The
// logging endpoints are in log_handlers.cc.
#include "tracker/enum_names.h"
#include "tracker/mlflow/handlers.h"
#include "tracker/mlflow/request_args.h"
#include "tracker/mlflow/run_common.h"
#include "tracker/mlflow/validation.h"
#include "tracker/mlflow/wire.h"
#include "tracker/search.h"

namespace ferry::tracker::mlflow {
namespace {

using nlohmann::json;

Result<json> CreateRun(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto experiment_id, args.String("experiment_id"));
  CreateRunRequest req;
  req.experiment_id = experiment_id.value_or("0");
  if (req.experiment_id.empty()) req.experiment_id = "0";
  FERRY_ASSIGN_OR_RETURN(auto user, args.String("user_id"));
  req.user_id = user.value_or("");
  FERRY_ASSIGN_OR_RETURN(auto name, args.String("run_name"));
  req.run_name = name.value_or("");
  FERRY_ASSIGN_OR_RETURN(auto start, args.Int64("start_time"));
  req.start_time = start.value_or(d.now_ms());
  FERRY_RETURN_IF_ERROR(ValidateTimestamp("start_time", req.start_time));
  FERRY_RETURN_IF_ERROR(ValidateRunText("run name", req.run_name));
  FERRY_RETURN_IF_ERROR(ValidateRunText("user_id", req.user_id));
  FERRY_ASSIGN_OR_RETURN(req.tags, ParseTags(args, "tags"));
  FERRY_RETURN_IF_ERROR(ValidateBatch({}, {}, req.tags));
  auto e = d.store->GetExperiment(req.experiment_id);
  if (!e.ok() && e.status().code() == StatusCode::kNotFound) {
    return NotFound("No Experiment with id=" + req.experiment_id + " exists");
  }
  FERRY_RETURN_IF_ERROR(e.status());
  if (e->stage == LifecycleStage::kDeleted) {
    return InvalidArgument("The experiment " + e->id +
                           " must be in the 'active' state. Current state is deleted.");
  }
  req.artifact_root = ArtifactLocation(*e, d.options);
  FERRY_ASSIGN_OR_RETURN(RunInfo info, d.store->CreateRun(req));
  FERRY_ASSIGN_OR_RETURN(Run run, d.store->GetRun(info.run_id));
  return json{{"run", RunJson(run)}};
}

Result<json> UpdateRun(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RunId());
  RunUpdate u;
  FERRY_ASSIGN_OR_RETURN(auto status, args.String("status"));
  if (status) {
    u.status = ParseRunStatus(*status);
    if (!u.status) {
      return InvalidArgument("Invalid value '" + *status +
                             "' for parameter 'status' supplied: expected RUNNING, SCHEDULED, "
                             "FINISHED, FAILED or KILLED");
    }
  }
  FERRY_ASSIGN_OR_RETURN(u.end_time, args.Int64("end_time"));
  if (u.end_time) FERRY_RETURN_IF_ERROR(ValidateTimestamp("end_time", *u.end_time));
  FERRY_ASSIGN_OR_RETURN(u.run_name, args.String("run_name"));
  if (u.run_name) FERRY_RETURN_IF_ERROR(ValidateRunText("run name", *u.run_name));
  FERRY_ASSIGN_OR_RETURN(RunInfo info, ForRun(id, d.store->UpdateRun(id, u)));
  return json{{"run_info", RunInfoJson(info)}};
}

Result<json> GetRun(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RunId());
  FERRY_ASSIGN_OR_RETURN(Run run, ForRun(id, d.store->GetRun(id)));
  FERRY_ASSIGN_OR_RETURN(auto io, GetRunIo(*d.store, {id}));
  return json{{"run", RunJson(run, &io[id])}};
}

Result<json> SearchRunsJson(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  RunScan scan;
  FERRY_ASSIGN_OR_RETURN(scan.experiment_ids, args.StringList("experiment_ids"));
  FERRY_ASSIGN_OR_RETURN(auto view, args.String("run_view_type"));
  if (view) {
    auto v = ParseViewType(*view);
    if (!v) {
      return InvalidArgument("Invalid value '" + *view +
                             "' for parameter 'run_view_type' supplied: expected ACTIVE_ONLY, "
                             "DELETED_ONLY or ALL");
    }
    scan.view = *v;
  }
  RunSearchRequest search;
  FERRY_ASSIGN_OR_RETURN(auto filter, args.String("filter"));
  search.filter = filter.value_or("");
  FERRY_ASSIGN_OR_RETURN(search.order_by, args.StringList("order_by"));
  FERRY_ASSIGN_OR_RETURN(auto max_results, args.Int64("max_results"));
  if (max_results && (*max_results < 1 || *max_results > kMaxSearchResults)) {
    return InvalidArgument("Invalid value " + std::to_string(*max_results) +
                           " for parameter 'max_results' supplied: it must be between 1 and " +
                           std::to_string(kMaxSearchResults));
  }
  search.max_results = static_cast<int>(max_results.value_or(1000));
  FERRY_ASSIGN_OR_RETURN(auto token, args.String("page_token"));
  search.page_token = token.value_or("");
  // Parse before scanning: a bad filter costs no store read.
  FERRY_RETURN_IF_ERROR(ParseFilter(search.filter).status());
  FERRY_RETURN_IF_ERROR(ParseOrderBy(search.order_by).status());
  FERRY_RETURN_IF_ERROR(DecodePageToken(search.page_token).status());
  json runs = json::array();
  if (!scan.experiment_ids.empty()) {
    FERRY_ASSIGN_OR_RETURN(auto candidates, d.store->ScanRuns(scan));
    FERRY_ASSIGN_OR_RETURN(auto page, SearchRuns(std::move(candidates), search));
    std::vector<std::string> ids;
    for (const auto& run : page.items) ids.push_back(run.info.run_id);
    FERRY_ASSIGN_OR_RETURN(auto io, GetRunIo(*d.store, ids));
    for (const auto& run : page.items) runs.push_back(RunJson(run, &io[run.info.run_id]));
    json out = json::object();
    SetRepeated(out, "runs", std::move(runs));
    if (!page.next_page_token.empty()) out["next_page_token"] = page.next_page_token;
    return out;
  }
  return json::object();
}

Result<json> SetStage(const Request& r, MlflowDeps& d, LifecycleStage stage) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RunId());
  FERRY_RETURN_IF_ERROR(ForRun(id, d.store->SetRunStage(id, stage)));
  if (stage == LifecycleStage::kDeleted && d.options.delete_artifacts) {
    // A failure is the answer (500): the run stays deleted and a retried delete tries again.
    FERRY_ASSIGN_OR_RETURN(Run run, ForRun(id, d.store->GetRun(id)));
    Status s = d.options.delete_artifacts(run.info.artifact_uri);
    if (!s.ok()) return s.WithContext("run " + id + " is deleted but its artifacts are not");
  }
  return json::object();
}

}  // namespace

Response HandleCreateRun(const Request& r, MlflowDeps& d) { return Respond(CreateRun(r, d)); }
Response HandleUpdateRun(const Request& r, MlflowDeps& d) { return Respond(UpdateRun(r, d)); }
Response HandleGetRun(const Request& r, MlflowDeps& d) { return Respond(GetRun(r, d)); }
Response HandleSearchRuns(const Request& r, MlflowDeps& d) { return Respond(SearchRunsJson(r, d)); }
Response HandleDeleteRun(const Request& r, MlflowDeps& d) {
  return Respond(SetStage(r, d, LifecycleStage::kDeleted));
}
Response HandleRestoreRun(const Request& r, MlflowDeps& d) {
  return Respond(SetStage(r, d, LifecycleStage::kActive));
}

}  // namespace ferry::tracker::mlflow
