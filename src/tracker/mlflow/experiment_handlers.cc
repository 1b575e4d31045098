// experiments/*: create, get, get-by-name, search, list, update, delete, restore,
// set-experiment-tag (docs/semantics/mlflow.md, "Experiments").
#include "base/log.h"
#include "base/strings.h"
#include "tracker/enum_names.h"
#include "tracker/mlflow/experiment_search.h"
#include "tracker/mlflow/handlers.h"
#include "tracker/mlflow/request_args.h"
#include "tracker/mlflow/validation.h"
#include "tracker/mlflow/wire.h"
#include "tracker/retention_policy.h"
#include "tracker/search.h"

namespace ferry::tracker::mlflow {
namespace {

using nlohmann::json;

json Answer(Experiment e, const MlflowOptions& o) {
  e.artifact_location = ArtifactLocation(e, o);
  return ExperimentJson(e);
}

Result<json> CreateExperiment(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto name, args.String("name"));
  if (!name) return InvalidArgument("Missing value for required parameter 'name'");
  FERRY_RETURN_IF_ERROR(ValidateExperimentName(*name));
  FERRY_ASSIGN_OR_RETURN(auto location, args.String("artifact_location"));
  FERRY_ASSIGN_OR_RETURN(auto tag_objects, args.ObjectList("tags"));
  std::vector<Tag> tags;
  for (size_t i = 0; i < tag_objects.size(); ++i) {
    std::string where = "tags[" + std::to_string(i) + "]";
    FERRY_ASSIGN_OR_RETURN(auto key, ObjectString(tag_objects[i], "key", where));
    FERRY_ASSIGN_OR_RETURN(auto value, ObjectString(tag_objects[i], "value", where));
    Tag t{key.value_or(""), value.value_or("")};
    FERRY_RETURN_IF_ERROR(ValidateExperimentTag(t));
    tags.push_back(std::move(t));
  }
  auto id = d.store->CreateExperiment(*name, location.value_or(""), tags);
  if (!id.ok() && id.status().code() == StatusCode::kAlreadyExists) {
    return Status(StatusCode::kAlreadyExists, "Experiment '" + *name + "' already exists.");
  }
  FERRY_RETURN_IF_ERROR(id.status());
  return json{{"experiment_id", *id}};
}

Result<json> GetExperiment(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RequiredString("experiment_id"));
  auto e = d.store->GetExperiment(id);
  if (!e.ok() && e.status().code() == StatusCode::kNotFound) {
    return NotFound("No Experiment with id=" + id + " exists");
  }
  FERRY_RETURN_IF_ERROR(e.status());
  return json{{"experiment", Answer(*e, d.options)}};
}

Result<json> GetExperimentByName(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string name, args.RequiredString("experiment_name"));
  auto e = d.store->GetExperimentByName(name);
  if (!e.ok() && e.status().code() == StatusCode::kNotFound) {
    return NotFound("Could not find experiment with name '" + name + "'");
  }
  FERRY_RETURN_IF_ERROR(e.status());
  return json{{"experiment", Answer(*e, d.options)}};
}

Result<ViewType> ViewOf(const RequestArgs& args, std::string_view field) {
  FERRY_ASSIGN_OR_RETURN(auto text, args.String(field));
  if (!text) return ViewType::kActiveOnly;
  auto v = ParseViewType(*text);
  if (!v) {
    return InvalidArgument("Invalid value '" + *text + "' for parameter '" + std::string(field) +
                           "' supplied: expected ACTIVE_ONLY, DELETED_ONLY or ALL");
  }
  return *v;
}

Result<json> SearchExperimentsJson(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  ExperimentSearch s;
  FERRY_ASSIGN_OR_RETURN(s.view, ViewOf(args, "view_type"));
  FERRY_ASSIGN_OR_RETURN(auto filter, args.String("filter"));
  s.filter = filter.value_or("");
  FERRY_ASSIGN_OR_RETURN(s.order_by, args.StringList("order_by"));
  FERRY_ASSIGN_OR_RETURN(auto max_results, args.Int64("max_results"));
  if (max_results && (*max_results < 1 || *max_results > kMaxSearchResults)) {
    return InvalidArgument("Invalid value " + std::to_string(*max_results) +
                           " for parameter 'max_results' supplied: it must be between 1 and " +
                           std::to_string(kMaxSearchResults));
  }
  s.max_results = static_cast<int>(max_results.value_or(1000));
  FERRY_ASSIGN_OR_RETURN(auto token, args.String("page_token"));
  s.page_token = token.value_or("");
  FERRY_ASSIGN_OR_RETURN(auto page, SearchExperiments(*d.store, s));
  json list = json::array();
  for (auto& e : page.items) list.push_back(Answer(std::move(e), d.options));
  json out = json::object();
  SetRepeated(out, "experiments", std::move(list));
  if (!page.next_page_token.empty()) out["next_page_token"] = page.next_page_token;
  return out;
}

Result<json> ListExperiments(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  ExperimentSearch s;
  FERRY_ASSIGN_OR_RETURN(s.view, ViewOf(args, "view_type"));
  s.max_results = kMaxSearchResults;
  FERRY_ASSIGN_OR_RETURN(auto page, SearchExperiments(*d.store, s));
  json list = json::array();
  for (auto& e : page.items) list.push_back(Answer(std::move(e), d.options));
  json out = json::object();
  SetRepeated(out, "experiments", std::move(list));
  return out;
}

// A store call that takes an experiment id: its kNotFound as MLflow words it.
Status ForExperiment(const std::string& id, Status st) {
  if (st.code() == StatusCode::kNotFound)
    return NotFound("No Experiment with id=" + id + " exists");
  return st;
}

Result<json> UpdateExperiment(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RequiredString("experiment_id"));
  FERRY_ASSIGN_OR_RETURN(auto new_name, args.String("new_name"));
  if (!new_name) return json::object();  // MLflow: nothing to update
  FERRY_RETURN_IF_ERROR(ValidateExperimentName(*new_name));
  FERRY_RETURN_IF_ERROR(ForExperiment(id, d.store->RenameExperiment(id, *new_name)));
  return json::object();
}

Result<json> SetStage(const Request& r, MlflowDeps& d, LifecycleStage stage) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RequiredString("experiment_id"));
  FERRY_RETURN_IF_ERROR(ForExperiment(id, d.store->SetExperimentStage(id, stage)));
  return json::object();
}

Result<json> SetExperimentTag(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RequiredString("experiment_id"));
  FERRY_ASSIGN_OR_RETURN(std::string key, args.RequiredString("key"));
  FERRY_ASSIGN_OR_RETURN(auto value, args.String("value"));
  Tag tag{key, value.value_or("")};
  FERRY_RETURN_IF_ERROR(ValidateExperimentTag(tag));
  FERRY_RETURN_IF_ERROR(ForExperiment(id, d.store->SetExperimentTag(id, tag)));
  if (StartsWith(tag.key, kRetentionTagPrefix) && d.options.retention_changed) {
    Status st = d.options.retention_changed(id);
    if (!st.ok()) {
      Log(LogLevel::kWarn, "retention: experiment {}: applying the policy failed: {}", id,
          st.message());
    }
  }
  return json::object();
}

}  // namespace

std::string ArtifactLocation(const Experiment& e, const MlflowOptions& options) {
  if (!e.artifact_location.empty()) return e.artifact_location;
  std::string root = options.artifact_root;
  while (!root.empty() && root.back() == '/') root.pop_back();
  // "mlflow-artifacts:" + "/" + id keeps MLflow's "mlflow-artifacts:/<id>" shape.
  return root + "/" + e.id;
}

Response HandleCreateExperiment(const Request& r, MlflowDeps& d) {
  return Respond(CreateExperiment(r, d));
}
Response HandleGetExperiment(const Request& r, MlflowDeps& d) {
  return Respond(GetExperiment(r, d));
}
Response HandleGetExperimentByName(const Request& r, MlflowDeps& d) {
  return Respond(GetExperimentByName(r, d));
}
Response HandleSearchExperiments(const Request& r, MlflowDeps& d) {
  return Respond(SearchExperimentsJson(r, d));
}
Response HandleListExperiments(const Request& r, MlflowDeps& d) {
  return Respond(ListExperiments(r, d));
}
Response HandleUpdateExperiment(const Request& r, MlflowDeps& d) {
  return Respond(UpdateExperiment(r, d));
}
Response HandleDeleteExperiment(const Request& r, MlflowDeps& d) {
  return Respond(SetStage(r, d, LifecycleStage::kDeleted));
}
Response HandleRestoreExperiment(const Request& r, MlflowDeps& d) {
  return Respond(SetStage(r, d, LifecycleStage::kActive));
}
Response HandleSetExperimentTag(const Request& r, MlflowDeps& d) {
  return Respond(SetExperimentTag(r, d));
}

}  // namespace ferry::tracker::mlflow
