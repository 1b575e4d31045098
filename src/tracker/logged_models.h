#pragma once
// MLflow 3's logged models (docs/semantics/mlflow.md, "Logged models"): what
// `mlflow.<flavor>.log_model` creates, and what MLflow 3's list_artifacts and download_artifacts
// search for. The rules live here once, over TrackerStore::Transact (tracker/doc_txn.h), so the
// memory, SQLite and PostgreSQL backends keep them alike; each model is one document of kind
// "logged_model" keyed by its id.
//
//  - ids are "m-" + 32 lower-case hex digits; a model's artifacts live under
//    "<experiment artifact location>/models/<id>/artifacts" (as MLflow puts them);
//  - a model starts PENDING; Finalize sets READY or UPLOAD_FAILED (and may be repeated);
//  - params are kept like a run's (logging one again with another value is kInvalidArgument),
//    tags are set and deleted freely;
//  - Delete hides the model from Get and Search (kNotFound afterwards);
//  - Search filters with tracker/search.h's grammar (SearchTarget::kLoggedModels), orders by
//    attributes (creation_timestamp DESC, then model_id, by default) and pages with opaque
//    tokens. Metrics of logged models are not kept: a filter or order on metrics is
//    kInvalidArgument saying so.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "tracker/model.h"
#include "tracker/tracker_store.h"

namespace ferry::tracker {

// MLflow's LoggedModelStatus numbers (service.proto).
enum class LoggedModelStatus { kUnspecified = 0, kPending = 1, kReady = 2, kUploadFailed = 3 };

// "LOGGED_MODEL_READY" and so on; parsed from that name, the short one ("READY") or the number.
std::string_view LoggedModelStatusName(LoggedModelStatus s);
std::optional<LoggedModelStatus> ParseLoggedModelStatus(std::string_view text);

struct LoggedModel {
  std::string model_id;
  std::string experiment_id;
  std::string name;
  std::string artifact_uri;
  std::string model_type;
  std::string source_run_id;
  std::string status_message;
  LoggedModelStatus status = LoggedModelStatus::kPending;
  int64_t creation_ms = 0;
  int64_t updated_ms = 0;
  std::vector<Tag> tags;      // by key
  std::vector<Param> params;  // by key
};

struct CreateLoggedModelRequest {
  std::string experiment_id;
  std::string experiment_artifact_location;  // the experiment's, as the API answers it
  std::string name;                          // "" = one is made up, as MLflow does
  std::string model_type;
  std::string source_run_id;  // "" or a run of the experiment
  std::vector<Param> params;
  std::vector<Tag> tags;
  int64_t now_ms = 0;
};

struct LoggedModelQuery {
  std::vector<std::string> experiment_ids;  // at least one
  std::string filter;
  // Each "<field> [ASC|DESC]" (the API turns {field_name, ascending} into this).
  std::vector<std::string> order_by;
  int max_results = 50;
  std::string page_token;
};

// The store checks that the experiment is active and the source run exists.
Result<LoggedModel> CreateLoggedModel(TrackerStore& store, const CreateLoggedModelRequest& req);
Result<LoggedModel> GetLoggedModel(TrackerStore& store, const std::string& model_id);
Result<LoggedModel> FinalizeLoggedModel(TrackerStore& store, const std::string& model_id,
                                        LoggedModelStatus status, int64_t now_ms);
Status DeleteLoggedModel(TrackerStore& store, const std::string& model_id);
Status SetLoggedModelTags(TrackerStore& store, const std::string& model_id,
                          const std::vector<Tag>& tags, int64_t now_ms);
Status DeleteLoggedModelTag(TrackerStore& store, const std::string& model_id,
                            const std::string& key, int64_t now_ms);
Status LogLoggedModelParams(TrackerStore& store, const std::string& model_id,
                            const std::vector<Param>& params, int64_t now_ms);
Result<Page<LoggedModel>> SearchLoggedModels(TrackerStore& store, const LoggedModelQuery& q);

}  // namespace ferry::tracker
