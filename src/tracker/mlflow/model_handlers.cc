// MLflow 3's logged models and a run's inputs and outputs (docs/semantics/mlflow.md, "Logged
// models" and "Datasets, inputs and outputs"): /logged-models*, runs/log-inputs, runs/outputs.
// The rules are tracker/logged_models.h's and tracker/run_io.h's; this file is the wire.
#include "tracker/logged_models.h"
#include "tracker/mlflow/handlers.h"
#include "tracker/mlflow/request_args.h"
#include "tracker/mlflow/run_common.h"
#include "tracker/mlflow/validation.h"
#include "tracker/mlflow/wire.h"
#include "tracker/run_io.h"
#include "tracker/search.h"

namespace ferry::tracker::mlflow {
namespace {

using nlohmann::json;

// The {model_id} of the route.
Result<std::string> ModelIdParam(const Request& r) {
  auto id = r.Param("model_id");
  if (!id || id->empty()) return InvalidArgument("Missing value for required parameter 'model_id'");
  return std::string(*id);
}

Status ValidatePairs(std::string_view what, const std::vector<Tag>& pairs) {
  for (const auto& p : pairs) FERRY_RETURN_IF_ERROR(ValidateKey(what, p.key));
  return Status();
}

Result<json> CreateModel(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  CreateLoggedModelRequest req;
  FERRY_ASSIGN_OR_RETURN(req.experiment_id, args.RequiredString("experiment_id"));
  FERRY_ASSIGN_OR_RETURN(auto name, args.String("name"));
  FERRY_ASSIGN_OR_RETURN(auto type, args.String("model_type"));
  FERRY_ASSIGN_OR_RETURN(auto source, args.String("source_run_id"));
  req.name = name.value_or("");
  req.model_type = type.value_or("");
  req.source_run_id = source.value_or("");
  FERRY_RETURN_IF_ERROR(ValidateRunText("model name", req.name));
  FERRY_ASSIGN_OR_RETURN(req.params, ParseTags(args, "params"));
  FERRY_ASSIGN_OR_RETURN(req.tags, ParseTags(args, "tags"));
  FERRY_RETURN_IF_ERROR(ValidatePairs("param", req.params));
  FERRY_RETURN_IF_ERROR(ValidatePairs("tag", req.tags));
  auto e = d.store->GetExperiment(req.experiment_id);
  if (!e.ok()) {
    if (e.status().code() == StatusCode::kNotFound) {
      return NotFound("Could not find experiment with ID " + req.experiment_id);
    }
    return e.status();
  }
  req.experiment_artifact_location = ArtifactLocation(*e, d.options);
  req.now_ms = d.now_ms();
  FERRY_ASSIGN_OR_RETURN(LoggedModel m, CreateLoggedModel(*d.store, req));
  return json{{"model", LoggedModelJson(m)}};
}

Result<json> GetModel(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(std::string id, ModelIdParam(r));
  FERRY_ASSIGN_OR_RETURN(LoggedModel m, GetLoggedModel(*d.store, id));
  return json{{"model", LoggedModelJson(m)}};
}

Result<json> FinalizeModel(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(std::string id, ModelIdParam(r));
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string text, args.RequiredString("status"));
  auto status = ParseLoggedModelStatus(text);
  if (!status) {
    return InvalidArgument("Invalid value '" + text +
                           "' for parameter 'status' supplied: expected LOGGED_MODEL_READY or "
                           "LOGGED_MODEL_UPLOAD_FAILED");
  }
  FERRY_ASSIGN_OR_RETURN(LoggedModel m, FinalizeLoggedModel(*d.store, id, *status, d.now_ms()));
  return json{{"model", LoggedModelJson(m)}};
}

Result<json> DeleteModel(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(std::string id, ModelIdParam(r));
  FERRY_RETURN_IF_ERROR(DeleteLoggedModel(*d.store, id));
  return json::object();
}

Result<json> SetModelTags(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(std::string id, ModelIdParam(r));
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto tags, ParseTags(args, "tags"));
  FERRY_RETURN_IF_ERROR(ValidatePairs("tag", tags));
  FERRY_RETURN_IF_ERROR(SetLoggedModelTags(*d.store, id, tags, d.now_ms()));
  return json::object();
}

Result<json> DeleteModelTag(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(std::string id, ModelIdParam(r));
  std::string key(r.Param("tag_key").value_or(""));
  if (key.empty()) return InvalidArgument("Missing value for required parameter 'tag_key'");
  FERRY_RETURN_IF_ERROR(DeleteLoggedModelTag(*d.store, id, key, d.now_ms()));
  return json::object();
}

Result<json> LogModelParams(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(std::string id, ModelIdParam(r));
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto params, ParseTags(args, "params"));
  FERRY_RETURN_IF_ERROR(ValidatePairs("param", params));
  FERRY_RETURN_IF_ERROR(LogLoggedModelParams(*d.store, id, params, d.now_ms()));
  return json::object();
}

Result<json> SearchModels(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  LoggedModelQuery q;
  FERRY_ASSIGN_OR_RETURN(q.experiment_ids, args.StringList("experiment_ids"));
  if (q.experiment_ids.empty()) {
    return InvalidArgument("Missing value for required parameter 'experiment_ids'");
  }
  FERRY_ASSIGN_OR_RETURN(auto filter, args.String("filter"));
  q.filter = filter.value_or("");
  FERRY_ASSIGN_OR_RETURN(auto max, args.Int64("max_results"));
  if (max) {
    if (*max < 1 || *max > kMaxSearchResults) {
      return InvalidArgument("Invalid value " + std::to_string(*max) +
                             " for parameter 'max_results' supplied: expected 1.." +
                             std::to_string(kMaxSearchResults));
    }
    q.max_results = static_cast<int>(*max);
  }
  FERRY_ASSIGN_OR_RETURN(auto token, args.String("page_token"));
  q.page_token = token.value_or("");
  FERRY_ASSIGN_OR_RETURN(auto order, args.ObjectList("order_by"));
  for (size_t i = 0; i < order.size(); ++i) {
    std::string where = "order_by[" + std::to_string(i) + "]";
    FERRY_ASSIGN_OR_RETURN(auto field, ObjectString(order[i].get(), "field_name", where));
    if (!field || field->empty()) {
      return InvalidArgument("Missing value for required parameter '" + where + ".field_name'");
    }
    const json& asc = order[i].get().value("ascending", json(true));
    if (!asc.is_boolean()) {
      return InvalidArgument("Invalid value for parameter '" + where +
                             ".ascending' supplied: expected a boolean");
    }
    q.order_by.push_back(*field + (asc.get<bool>() ? " ASC" : " DESC"));
  }
  FERRY_ASSIGN_OR_RETURN(auto page, SearchLoggedModels(*d.store, q));
  json models = json::array();
  for (const auto& m : page.items) models.push_back(LoggedModelJson(m));
  json out = json::object();
  SetRepeated(out, "models", std::move(models));
  if (!page.next_page_token.empty()) out["next_page_token"] = page.next_page_token;
  return out;
}

// The body's list `field` as JSON (null when absent); a list of objects or kInvalidArgument.
Result<json> ListField(const RequestArgs& args, std::string_view field) {
  FERRY_ASSIGN_OR_RETURN(auto items, args.ObjectList(field));
  if (!args.body().is_object() || !args.body().contains(field)) return json();
  json out = json::array();
  for (const auto& item : items) out.push_back(item.get());
  return out;
}

Result<json> LogInputs(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RunId());
  FERRY_ASSIGN_OR_RETURN(json datasets, ListField(args, "datasets"));
  FERRY_ASSIGN_OR_RETURN(json models, ListField(args, "models"));
  FERRY_RETURN_IF_ERROR(LogRunInputs(*d.store, id, datasets, models));
  return json::object();
}

Result<json> LogOutputs(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string id, args.RunId());
  FERRY_ASSIGN_OR_RETURN(json models, ListField(args, "models"));
  FERRY_RETURN_IF_ERROR(LogRunOutputs(*d.store, id, models));
  return json::object();
}

}  // namespace

Response HandleCreateLoggedModel(const Request& r, MlflowDeps& d) {
  return Respond(CreateModel(r, d));
}
Response HandleGetLoggedModel(const Request& r, MlflowDeps& d) { return Respond(GetModel(r, d)); }
Response HandleFinalizeLoggedModel(const Request& r, MlflowDeps& d) {
  return Respond(FinalizeModel(r, d));
}
Response HandleDeleteLoggedModel(const Request& r, MlflowDeps& d) {
  return Respond(DeleteModel(r, d));
}
Response HandleSetLoggedModelTags(const Request& r, MlflowDeps& d) {
  return Respond(SetModelTags(r, d));
}
Response HandleDeleteLoggedModelTag(const Request& r, MlflowDeps& d) {
  return Respond(DeleteModelTag(r, d));
}
Response HandleLogLoggedModelParams(const Request& r, MlflowDeps& d) {
  return Respond(LogModelParams(r, d));
}
Response HandleSearchLoggedModels(const Request& r, MlflowDeps& d) {
  return Respond(SearchModels(r, d));
}
Response HandleLogInputs(const Request& r, MlflowDeps& d) { return Respond(LogInputs(r, d)); }
Response HandleLogOutputs(const Request& r, MlflowDeps& d) { return Respond(LogOutputs(r, d)); }

}  // namespace ferry::tracker::mlflow
