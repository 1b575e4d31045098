// The Model Registry's REST API (MLflow's model_registry.proto; docs/semantics/mlflow.md,
// "Model Registry"): registered-models/* and model-versions/*. The rules are
// tracker/registry.h's; this file is the wire.
#include "tracker/mlflow/handlers.h"
#include "tracker/mlflow/request_args.h"
#include "tracker/mlflow/run_common.h"
#include "tracker/mlflow/validation.h"
#include "tracker/mlflow/wire.h"
#include "tracker/registry.h"

namespace ferry::tracker::mlflow {
namespace {
namespace registry {  // (unity builds: these names are also model_handlers.cc's)

using nlohmann::json;

Result<std::string> Name(const RequestArgs& args) { return args.RequiredString("name"); }

Result<bool> Bool(const RequestArgs& args, std::string_view field) {
  const json& body = args.body();
  if (body.is_object() && body.contains(field) && body[field].is_boolean()) {
    return body[field].get<bool>();
  }
  FERRY_ASSIGN_OR_RETURN(auto text, args.String(field));
  if (!text) return false;
  if (*text == "true" || *text == "True" || *text == "1") return true;
  if (*text == "false" || *text == "False" || *text == "0") return false;
  return InvalidArgument("Invalid value '" + *text + "' for parameter '" + std::string(field) +
                         "' supplied: expected a boolean");
}

Result<RegistrySearch> Search(const RequestArgs& args, int default_max) {
  RegistrySearch q;
  q.max_results = default_max;
  FERRY_ASSIGN_OR_RETURN(auto filter, args.String("filter"));
  q.filter = filter.value_or("");
  FERRY_ASSIGN_OR_RETURN(auto max, args.Int64("max_results"));
  if (max) {
    if (*max < 1 || *max > 200000) {
      return InvalidArgument("Invalid value " + std::to_string(*max) +
                             " for parameter 'max_results' supplied");
    }
    q.max_results = static_cast<int>(*max);
  }
  FERRY_ASSIGN_OR_RETURN(q.order_by, args.StringList("order_by"));
  FERRY_ASSIGN_OR_RETURN(auto token, args.String("page_token"));
  q.page_token = token.value_or("");
  return q;
}

Result<json> CreateModel(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string name, Name(args));
  FERRY_ASSIGN_OR_RETURN(auto tags, ParseTags(args, "tags"));
  FERRY_ASSIGN_OR_RETURN(auto description, args.String("description"));
  FERRY_ASSIGN_OR_RETURN(
      auto m, CreateRegisteredModel(*d.store, name, tags, description.value_or(""), d.now_ms()));
  return json{{"registered_model", RegisteredModelJson(m)}};
}

Result<json> GetModel(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string name, Name(args));
  FERRY_ASSIGN_OR_RETURN(auto m, GetRegisteredModel(*d.store, name));
  return json{{"registered_model", RegisteredModelJson(m)}};
}

Result<json> RenameModel(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string name, Name(args));
  FERRY_ASSIGN_OR_RETURN(std::string new_name, args.RequiredString("new_name"));
  FERRY_ASSIGN_OR_RETURN(auto m, RenameRegisteredModel(*d.store, name, new_name, d.now_ms()));
  return json{{"registered_model", RegisteredModelJson(m)}};
}

Result<json> UpdateModel(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string name, Name(args));
  FERRY_ASSIGN_OR_RETURN(auto description, args.String("description"));
  FERRY_ASSIGN_OR_RETURN(
      auto m, UpdateRegisteredModel(*d.store, name, description.value_or(""), d.now_ms()));
  return json{{"registered_model", RegisteredModelJson(m)}};
}

Result<json> DeleteModel(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string name, Name(args));
  FERRY_RETURN_IF_ERROR(DeleteRegisteredModel(*d.store, name));
  return json::object();
}

Result<json> SearchModels(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto q, Search(args, 100));
  FERRY_ASSIGN_OR_RETURN(auto page, SearchRegisteredModels(*d.store, q));
  json models = json::array();
  for (const auto& m : page.items) models.push_back(RegisteredModelJson(m));
  json out = json::object();
  SetRepeated(out, "registered_models", std::move(models));
  if (!page.next_page_token.empty()) out["next_page_token"] = page.next_page_token;
  return out;
}

Result<json> LatestVersions(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string name, Name(args));
  FERRY_ASSIGN_OR_RETURN(auto stages, args.StringList("stages"));
  FERRY_ASSIGN_OR_RETURN(auto versions, GetLatestVersions(*d.store, name, stages));
  json out = json::array();
  for (const auto& v : versions) out.push_back(ModelVersionJson(v));
  json answer = json::object();
  SetRepeated(answer, "model_versions", std::move(out));
  return answer;
}

Result<json> SetModelTag(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string name, Name(args));
  FERRY_ASSIGN_OR_RETURN(std::string key, args.RequiredString("key"));
  FERRY_ASSIGN_OR_RETURN(auto value, args.String("value"));
  FERRY_RETURN_IF_ERROR(ValidateKey("tag", key));
  FERRY_RETURN_IF_ERROR(
      SetRegisteredModelTag(*d.store, name, {key, value.value_or("")}, d.now_ms()));
  return json::object();
}

Result<json> DeleteModelTag(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string name, Name(args));
  FERRY_ASSIGN_OR_RETURN(std::string key, args.RequiredString("key"));
  FERRY_RETURN_IF_ERROR(DeleteRegisteredModelTag(*d.store, name, key, d.now_ms()));
  return json::object();
}

Result<json> SetAlias(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string name, Name(args));
  FERRY_ASSIGN_OR_RETURN(std::string alias, args.RequiredString("alias"));
  FERRY_ASSIGN_OR_RETURN(std::string version, args.RequiredString("version"));
  FERRY_RETURN_IF_ERROR(SetRegisteredModelAlias(*d.store, name, alias, version, d.now_ms()));
  return json::object();
}

Result<json> DeleteAlias(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string name, Name(args));
  FERRY_ASSIGN_OR_RETURN(std::string alias, args.RequiredString("alias"));
  FERRY_RETURN_IF_ERROR(DeleteRegisteredModelAlias(*d.store, name, alias, d.now_ms()));
  return json::object();
}

Result<json> GetByAlias(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(std::string name, Name(args));
  FERRY_ASSIGN_OR_RETURN(std::string alias, args.RequiredString("alias"));
  FERRY_ASSIGN_OR_RETURN(auto v, GetModelVersionByAlias(*d.store, name, alias));
  return json{{"model_version", ModelVersionJson(v)}};
}

Result<json> CreateVersion(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  CreateVersionRequest req;
  FERRY_ASSIGN_OR_RETURN(req.name, Name(args));
  FERRY_ASSIGN_OR_RETURN(req.source, args.RequiredString("source"));
  FERRY_ASSIGN_OR_RETURN(auto run_id, args.String("run_id"));
  FERRY_ASSIGN_OR_RETURN(auto run_link, args.String("run_link"));
  FERRY_ASSIGN_OR_RETURN(auto description, args.String("description"));
  FERRY_ASSIGN_OR_RETURN(auto model_id, args.String("model_id"));
  FERRY_ASSIGN_OR_RETURN(req.tags, ParseTags(args, "tags"));
  req.run_id = run_id.value_or("");
  req.run_link = run_link.value_or("");
  req.description = description.value_or("");
  req.model_id = model_id.value_or("");
  req.now_ms = d.now_ms();
  FERRY_ASSIGN_OR_RETURN(auto v, CreateModelVersion(*d.store, req));
  return json{{"model_version", ModelVersionJson(v)}};
}

Result<std::pair<std::string, std::string>> NameVersion(const RequestArgs& args) {
  FERRY_ASSIGN_OR_RETURN(std::string name, Name(args));
  FERRY_ASSIGN_OR_RETURN(std::string version, args.RequiredString("version"));
  return std::make_pair(name, version);
}

Result<json> GetVersion(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto nv, NameVersion(args));
  FERRY_ASSIGN_OR_RETURN(auto v, GetModelVersion(*d.store, nv.first, nv.second));
  return json{{"model_version", ModelVersionJson(v)}};
}

Result<json> UpdateVersion(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto nv, NameVersion(args));
  FERRY_ASSIGN_OR_RETURN(auto description, args.String("description"));
  FERRY_ASSIGN_OR_RETURN(auto v, UpdateModelVersion(*d.store, nv.first, nv.second,
                                                    description.value_or(""), d.now_ms()));
  return json{{"model_version", ModelVersionJson(v)}};
}

Result<json> TransitionStage(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto nv, NameVersion(args));
  FERRY_ASSIGN_OR_RETURN(std::string stage, args.RequiredString("stage"));
  FERRY_ASSIGN_OR_RETURN(bool archive, Bool(args, "archive_existing_versions"));
  FERRY_ASSIGN_OR_RETURN(auto v, TransitionModelVersionStage(*d.store, nv.first, nv.second, stage,
                                                             archive, d.now_ms()));
  return json{{"model_version", ModelVersionJson(v)}};
}

Result<json> DeleteVersion(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto nv, NameVersion(args));
  FERRY_RETURN_IF_ERROR(DeleteModelVersion(*d.store, nv.first, nv.second));
  return json::object();
}

Result<json> SearchVersions(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto q, Search(args, 200000));
  FERRY_ASSIGN_OR_RETURN(auto page, SearchModelVersions(*d.store, q));
  json versions = json::array();
  for (const auto& v : page.items) versions.push_back(ModelVersionJson(v));
  json out = json::object();
  SetRepeated(out, "model_versions", std::move(versions));
  if (!page.next_page_token.empty()) out["next_page_token"] = page.next_page_token;
  return out;
}

Result<json> DownloadUri(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto nv, NameVersion(args));
  FERRY_ASSIGN_OR_RETURN(auto v, GetModelVersion(*d.store, nv.first, nv.second));
  return json{{"artifact_uri", v.storage_location.empty() ? v.source : v.storage_location}};
}

Result<json> SetVersionTag(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto nv, NameVersion(args));
  FERRY_ASSIGN_OR_RETURN(std::string key, args.RequiredString("key"));
  FERRY_ASSIGN_OR_RETURN(auto value, args.String("value"));
  FERRY_RETURN_IF_ERROR(ValidateKey("tag", key));
  FERRY_RETURN_IF_ERROR(
      SetModelVersionTag(*d.store, nv.first, nv.second, {key, value.value_or("")}, d.now_ms()));
  return json::object();
}

Result<json> DeleteVersionTag(const Request& r, MlflowDeps& d) {
  FERRY_ASSIGN_OR_RETURN(auto args, RequestArgs::From(r));
  FERRY_ASSIGN_OR_RETURN(auto nv, NameVersion(args));
  FERRY_ASSIGN_OR_RETURN(std::string key, args.RequiredString("key"));
  FERRY_RETURN_IF_ERROR(DeleteModelVersionTag(*d.store, nv.first, nv.second, key, d.now_ms()));
  return json::object();
}

}  // namespace registry
}  // namespace

#define FERRY_REGISTRY_HANDLER(Handler, Fn) \
  Response Handler(const Request& r, MlflowDeps& d) { return Respond(registry::Fn(r, d)); }
FERRY_REGISTRY_HANDLER(HandleCreateRegisteredModel, CreateModel)
FERRY_REGISTRY_HANDLER(HandleGetRegisteredModel, GetModel)
FERRY_REGISTRY_HANDLER(HandleRenameRegisteredModel, RenameModel)
FERRY_REGISTRY_HANDLER(HandleUpdateRegisteredModel, UpdateModel)
FERRY_REGISTRY_HANDLER(HandleDeleteRegisteredModel, DeleteModel)
FERRY_REGISTRY_HANDLER(HandleSearchRegisteredModels, SearchModels)
FERRY_REGISTRY_HANDLER(HandleGetLatestVersions, LatestVersions)
FERRY_REGISTRY_HANDLER(HandleSetRegisteredModelTag, SetModelTag)
FERRY_REGISTRY_HANDLER(HandleDeleteRegisteredModelTag, DeleteModelTag)
FERRY_REGISTRY_HANDLER(HandleSetRegisteredModelAlias, SetAlias)
FERRY_REGISTRY_HANDLER(HandleDeleteRegisteredModelAlias, DeleteAlias)
FERRY_REGISTRY_HANDLER(HandleGetModelVersionByAlias, GetByAlias)
FERRY_REGISTRY_HANDLER(HandleCreateModelVersion, CreateVersion)
FERRY_REGISTRY_HANDLER(HandleGetModelVersion, GetVersion)
FERRY_REGISTRY_HANDLER(HandleUpdateModelVersion, UpdateVersion)
FERRY_REGISTRY_HANDLER(HandleTransitionModelVersionStage, TransitionStage)
FERRY_REGISTRY_HANDLER(HandleDeleteModelVersion, DeleteVersion)
FERRY_REGISTRY_HANDLER(HandleSearchModelVersions, SearchVersions)
FERRY_REGISTRY_HANDLER(HandleGetModelVersionDownloadUri, DownloadUri)
FERRY_REGISTRY_HANDLER(HandleSetModelVersionTag, SetVersionTag)
FERRY_REGISTRY_HANDLER(HandleDeleteModelVersionTag, DeleteVersionTag)
#undef FERRY_REGISTRY_HANDLER

}  // namespace ferry::tracker::mlflow
