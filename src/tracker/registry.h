#pragma once
// The Model Registry (MLflow's model_registry.proto; docs/semantics/mlflow.md, "Model Registry"):
// registered models, their numbered versions, stages, tags and aliases. The rules live here once,
// over TrackerStore::Transact (tracker/doc_txn.h): a registered model is one document of kind
// "registered_model" keyed by its name, each version one of kind "model_version" keyed
// "<name>\x1f<version, 10 digits>" (so a model's versions scan in order).
//
//  - names are unique (case-sensitive), 1..256 bytes of UTF-8 without control characters;
//  - versions are numbered 1, 2, ... per model and never reused, even after a delete;
//  - a version's `storage_location` is where its files are: for a source "models:/<model_id>"
//    (what MLflow 3's register_model sends) the logged model's artifact_uri, for
//    "runs:/<run_id>/<path>" the run's artifact_uri + "/<path>", else the source itself;
//    get-download-uri answers it;
//  - stages are None, Staging, Production, Archived (any case in requests); a transition with
//    archive_existing_versions archives the model's other versions in that stage;
//  - an alias names one version of its model; setting it again moves it; deleting a version
//    drops its aliases; "latest" and "v<digits>" are not aliases (they mean other things in
//    models:/ URIs);
//  - deleting a model deletes its versions; renaming moves them with it.
// Errors: kNotFound (RESOURCE_DOES_NOT_EXIST), kAlreadyExists (RESOURCE_ALREADY_EXISTS),
// kInvalidArgument (INVALID_PARAMETER_VALUE), each naming the model/version.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "tracker/model.h"
#include "tracker/tracker_store.h"

namespace ferry::tracker {

struct ModelVersion {
  std::string name;
  int64_t version = 0;
  int64_t creation_ms = 0;
  int64_t updated_ms = 0;
  std::string current_stage = "None";
  std::string description;
  std::string source;
  std::string storage_location;
  std::string run_id;
  std::string run_link;
  std::string model_id;
  std::string user_id;
  std::vector<Tag> tags;             // by key
  std::vector<std::string> aliases;  // sorted
};

struct RegisteredModel {
  std::string name;
  int64_t creation_ms = 0;
  int64_t updated_ms = 0;
  std::string description;
  std::vector<Tag> tags;                                 // by key
  std::vector<std::pair<std::string, int64_t>> aliases;  // (alias, version), by alias
  std::vector<ModelVersion> latest_versions;             // per stage, the highest version
};

struct CreateVersionRequest {
  std::string name;
  std::string source;
  std::string run_id;
  std::string run_link;
  std::string description;
  std::string model_id;
  std::vector<Tag> tags;
  int64_t now_ms = 0;
};

struct RegistrySearch {
  std::string filter;
  std::vector<std::string> order_by;
  int max_results = 100;
  std::string page_token;
};

Result<RegisteredModel> CreateRegisteredModel(TrackerStore& store, const std::string& name,
                                              const std::vector<Tag>& tags,
                                              const std::string& description, int64_t now_ms);
Result<RegisteredModel> GetRegisteredModel(TrackerStore& store, const std::string& name);
Result<RegisteredModel> RenameRegisteredModel(TrackerStore& store, const std::string& name,
                                              const std::string& new_name, int64_t now_ms);
Result<RegisteredModel> UpdateRegisteredModel(TrackerStore& store, const std::string& name,
                                              const std::string& description, int64_t now_ms);
Status DeleteRegisteredModel(TrackerStore& store, const std::string& name);
Status SetRegisteredModelTag(TrackerStore& store, const std::string& name, const Tag& tag,
                             int64_t now_ms);
Status DeleteRegisteredModelTag(TrackerStore& store, const std::string& name,
                                const std::string& key, int64_t now_ms);
Result<Page<RegisteredModel>> SearchRegisteredModels(TrackerStore& store, const RegistrySearch& q);
// `stages` empty: the latest version of every stage.
Result<std::vector<ModelVersion>> GetLatestVersions(TrackerStore& store, const std::string& name,
                                                    const std::vector<std::string>& stages);

Result<ModelVersion> CreateModelVersion(TrackerStore& store, const CreateVersionRequest& req);
Result<ModelVersion> GetModelVersion(TrackerStore& store, const std::string& name,
                                     const std::string& version);
Result<ModelVersion> UpdateModelVersion(TrackerStore& store, const std::string& name,
                                        const std::string& version, const std::string& description,
                                        int64_t now_ms);
Result<ModelVersion> TransitionModelVersionStage(TrackerStore& store, const std::string& name,
                                                 const std::string& version,
                                                 const std::string& stage, bool archive_existing,
                                                 int64_t now_ms);
Status DeleteModelVersion(TrackerStore& store, const std::string& name, const std::string& version);
Status SetModelVersionTag(TrackerStore& store, const std::string& name, const std::string& version,
                          const Tag& tag, int64_t now_ms);
Status DeleteModelVersionTag(TrackerStore& store, const std::string& name,
                             const std::string& version, const std::string& key, int64_t now_ms);
Result<Page<ModelVersion>> SearchModelVersions(TrackerStore& store, const RegistrySearch& q);

Status SetRegisteredModelAlias(TrackerStore& store, const std::string& name,
                               const std::string& alias, const std::string& version,
                               int64_t now_ms);
Status DeleteRegisteredModelAlias(TrackerStore& store, const std::string& name,
                                  const std::string& alias, int64_t now_ms);
Result<ModelVersion> GetModelVersionByAlias(TrackerStore& store, const std::string& name,
                                            const std::string& alias);

}  // namespace ferry::tracker
