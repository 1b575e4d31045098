#include "tracker/logged_models.h"

#include <algorithm>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/utf8.h"
#include "tracker/doc_codec.h"
#include "tracker/search.h"
#include "tracker/store_rules.h"

namespace ferry::tracker {
namespace {

using nlohmann::json;

constexpr std::string_view kLoggedModelKind = "logged_model";

Status Precondition(std::string m) { return Status(StatusCode::kFailedPrecondition, std::move(m)); }

std::mt19937_64& Rng() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  return rng;
}

// The stored document: our own field names, stable across MLflow's (the API encodes).
std::string ToDoc(const LoggedModel& m, bool deleted) {
  return JsonText({{"experiment_id", m.experiment_id},
                   {"name", m.name},
                   {"artifact_uri", m.artifact_uri},
                   {"model_type", m.model_type},
                   {"source_run_id", m.source_run_id},
                   {"status_message", m.status_message},
                   {"status", static_cast<int>(m.status)},
                   {"creation_ms", m.creation_ms},
                   {"updated_ms", m.updated_ms},
                   {"tags", doc::PairsJson(m.tags)},
                   {"params", doc::PairsJson(m.params)},
                   {"deleted", deleted}});
}

struct Stored {
  LoggedModel model;
  bool deleted = false;
};

Result<Stored> FromDoc(const std::string& id, const std::string& doc) {
  json j = json::parse(doc, nullptr, false);
  if (!j.is_object()) return Internal("logged model '" + id + "': its stored document is damaged");
  try {
    Stored s;
    LoggedModel& m = s.model;
    m.model_id = id;
    m.experiment_id = j.at("experiment_id").get<std::string>();
    m.name = j.at("name").get<std::string>();
    m.artifact_uri = j.at("artifact_uri").get<std::string>();
    m.model_type = j.value("model_type", "");
    m.source_run_id = j.value("source_run_id", "");
    m.status_message = j.value("status_message", "");
    m.status = static_cast<LoggedModelStatus>(j.at("status").get<int>());
    m.creation_ms = j.at("creation_ms").get<int64_t>();
    m.updated_ms = j.at("updated_ms").get<int64_t>();
    m.tags = doc::PairsFrom(j.at("tags"));
    m.params = doc::PairsFrom(j.at("params"));
    s.deleted = j.value("deleted", false);
    return s;
  } catch (const json::exception& e) {
    return Internal("logged model '" + id + "': its stored document is damaged (" + e.what() + ")");
  }
}

Status NotFoundModel(const std::string& id) {
  return NotFound("Logged model with ID '" + id + "' not found");
}

Status CheckPairs(const char* what, const std::vector<Tag>& pairs) {
  for (const auto& p : pairs) {
    if (p.key.empty()) return InvalidArgument(std::string(what) + " key is empty");
    if (!IsUtf8(p.key) || !IsUtf8(p.value)) {
      return InvalidArgument(std::string(what) + " '" + p.key + "' is not UTF-8");
    }
  }
  return Status();
}

// Reads the live model `id` inside `t`.
Result<LoggedModel> Live(DocTxn& t, const std::string& id) {
  FERRY_ASSIGN_OR_RETURN(auto doc, t.Get(kLoggedModelKind, id));
  if (!doc) return NotFoundModel(id);
  FERRY_ASSIGN_OR_RETURN(Stored s, FromDoc(id, *doc));
  if (s.deleted) return NotFoundModel(id);
  return s.model;
}

// Applies `change` to the live model `id` in one write transaction.
Result<LoggedModel> Update(TrackerStore& store, const std::string& id,
                           const std::function<Status(LoggedModel&)>& change) {
  LoggedModel out;
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kWrite, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(out, Live(t, id));
    FERRY_RETURN_IF_ERROR(change(out));
    return t.Put(kLoggedModelKind, id, ToDoc(out, false));
  }));
  return out;
}

// "READY" for kReady: how filters name statuses (MLflow's entity names).
std::string ShortStatusName(LoggedModelStatus s) {
  return std::string(LoggedModelStatusName(s).substr(std::string_view("LOGGED_MODEL_").size()));
}

std::string NewModelId() {
  std::string id = rules::NewRunId(Rng());
  return "m-" + id;
}

// A model's value for one filter/order key, as tracker/search.h's ClauseHolds takes it.
using ModelValue = ClauseValue;

ModelValue ValueOfModel(const LoggedModel& m, SearchEntity entity, const std::string& key) {
  auto find = [&](const std::vector<Tag>& v) {
    for (const auto& t : v) {
      if (t.key == key) return ModelValue{true, 0, t.value};
    }
    return ModelValue{};
  };
  switch (entity) {
    case SearchEntity::kParam:
      return find(m.params);
    case SearchEntity::kTag:
      return find(m.tags);
    case SearchEntity::kMetric:
      return ModelValue{};
    case SearchEntity::kAttribute:
      break;
  }
  if (key == "creation_timestamp") return {true, static_cast<double>(m.creation_ms), {}};
  if (key == "last_updated_timestamp") return {true, static_cast<double>(m.updated_ms), {}};
  if (key == "name") return {true, 0, m.name};
  if (key == "model_id") return {true, 0, m.model_id};
  if (key == "model_type") return {!m.model_type.empty(), 0, m.model_type};
  if (key == "source_run_id") return {!m.source_run_id.empty(), 0, m.source_run_id};
  if (key == "experiment_id") return {true, 0, m.experiment_id};
  if (key == "status") return {true, 0, ShortStatusName(m.status)};
  return ModelValue{};
}

}  // namespace

std::string_view LoggedModelStatusName(LoggedModelStatus s) {
  switch (s) {
    case LoggedModelStatus::kPending:
      return "LOGGED_MODEL_PENDING";
    case LoggedModelStatus::kReady:
      return "LOGGED_MODEL_READY";
    case LoggedModelStatus::kUploadFailed:
      return "LOGGED_MODEL_UPLOAD_FAILED";
    case LoggedModelStatus::kUnspecified:
      break;
  }
  return "LOGGED_MODEL_STATUS_UNSPECIFIED";
}

std::optional<LoggedModelStatus> ParseLoggedModelStatus(std::string_view text) {
  for (auto s : {LoggedModelStatus::kUnspecified, LoggedModelStatus::kPending,
                 LoggedModelStatus::kReady, LoggedModelStatus::kUploadFailed}) {
    std::string_view full = LoggedModelStatusName(s);
    std::string_view short_name = full.substr(std::string_view("LOGGED_MODEL_").size());
    if (text == full || text == short_name || text == std::to_string(static_cast<int>(s))) {
      return s;
    }
  }
  if (text == "FAILED") return LoggedModelStatus::kUploadFailed;  // MLflow's entity name
  return std::nullopt;
}

Result<LoggedModel> CreateLoggedModel(TrackerStore& store, const CreateLoggedModelRequest& req) {
  FERRY_ASSIGN_OR_RETURN(Experiment e, store.GetExperiment(req.experiment_id));
  if (e.stage != LifecycleStage::kActive) {
    return Precondition("experiment '" + req.experiment_id + "' is deleted");
  }
  if (!req.source_run_id.empty()) {
    Status run = store.GetRun(req.source_run_id).status();
    if (run.code() == StatusCode::kNotFound) {
      return NotFound("Run with id=" + req.source_run_id + " not found");
    }
    FERRY_RETURN_IF_ERROR(run);
  }
  FERRY_RETURN_IF_ERROR(CheckPairs("a param", req.params));
  FERRY_RETURN_IF_ERROR(CheckPairs("a tag", req.tags));
  if (!IsUtf8(req.name) || !IsUtf8(req.model_type)) {
    return InvalidArgument("the model's name or type is not UTF-8");
  }
  LoggedModel m;
  m.model_id = NewModelId();
  m.experiment_id = e.id;
  m.name = req.name.empty() ? rules::GenerateRunName(Rng()) : req.name;
  std::string base = req.experiment_artifact_location;
  while (!base.empty() && base.back() == '/') base.pop_back();
  m.artifact_uri = base + "/models/" + m.model_id + "/artifacts";
  m.model_type = req.model_type;
  m.source_run_id = req.source_run_id;
  m.creation_ms = m.updated_ms = req.now_ms;
  for (const auto& t : req.tags) doc::SetPair(m.tags, t);
  for (const auto& p : req.params) {
    for (const auto& q : m.params) {
      if (q.key == p.key && q.value != p.value) {
        return InvalidArgument("param '" + p.key + "' given twice with different values");
      }
    }
    doc::SetPair(m.params, p);
  }
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kWrite, [&](DocTxn& t) {
    return t.Put(kLoggedModelKind, m.model_id, ToDoc(m, false));
  }));
  return m;
}

Result<LoggedModel> GetLoggedModel(TrackerStore& store, const std::string& model_id) {
  LoggedModel out;
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kRead, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(out, Live(t, model_id));
    return Status();
  }));
  return out;
}

Result<LoggedModel> FinalizeLoggedModel(TrackerStore& store, const std::string& model_id,
                                        LoggedModelStatus status, int64_t now_ms) {
  if (status != LoggedModelStatus::kReady && status != LoggedModelStatus::kUploadFailed) {
    return InvalidArgument(
        "a logged model is finalized as LOGGED_MODEL_READY or "
        "LOGGED_MODEL_UPLOAD_FAILED, not " +
        std::string(LoggedModelStatusName(status)));
  }
  return Update(store, model_id, [&](LoggedModel& m) {
    m.status = status;
    m.updated_ms = now_ms;
    return Status();
  });
}

Status DeleteLoggedModel(TrackerStore& store, const std::string& model_id) {
  return store.Transact(TxnMode::kWrite, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(LoggedModel m, Live(t, model_id));
    return t.Put(kLoggedModelKind, model_id, ToDoc(m, true));
  });
}

Status SetLoggedModelTags(TrackerStore& store, const std::string& model_id,
                          const std::vector<Tag>& tags, int64_t now_ms) {
  FERRY_RETURN_IF_ERROR(CheckPairs("a tag", tags));
  return Update(store, model_id,
                [&](LoggedModel& m) {
                  for (const auto& t : tags) doc::SetPair(m.tags, t);
                  m.updated_ms = now_ms;
                  return Status();
                })
      .status();
}

Status DeleteLoggedModelTag(TrackerStore& store, const std::string& model_id,
                            const std::string& key, int64_t now_ms) {
  return Update(store, model_id,
                [&](LoggedModel& m) -> Status {
                  auto it = std::find_if(m.tags.begin(), m.tags.end(),
                                         [&](const Tag& t) { return t.key == key; });
                  if (it == m.tags.end()) {
                    return NotFound("logged model '" + model_id + "' has no tag '" + key + "'");
                  }
                  m.tags.erase(it);
                  m.updated_ms = now_ms;
                  return Status();
                })
      .status();
}

Status LogLoggedModelParams(TrackerStore& store, const std::string& model_id,
                            const std::vector<Param>& params, int64_t now_ms) {
  FERRY_RETURN_IF_ERROR(CheckPairs("a param", params));
  return Update(store, model_id,
                [&](LoggedModel& m) -> Status {
                  for (const auto& p : params) {
                    for (const auto& q : m.params) {
                      if (q.key == p.key && q.value != p.value) {
                        return InvalidArgument("param '" + p.key + "' of logged model '" +
                                               model_id + "' is already '" + q.value +
                                               "' (params are immutable)");
                      }
                    }
                    doc::SetPair(m.params, p);
                  }
                  m.updated_ms = now_ms;
                  return Status();
                })
      .status();
}

Result<Page<LoggedModel>> SearchLoggedModels(TrackerStore& store, const LoggedModelQuery& q) {
  if (q.experiment_ids.empty()) return InvalidArgument("experiment_ids must name an experiment");
  if (q.max_results < 1 || q.max_results > kMaxSearchResults) {
    return InvalidArgument("max_results must be 1.." + std::to_string(kMaxSearchResults));
  }
  FERRY_ASSIGN_OR_RETURN(auto clauses, ParseFilter(q.filter, SearchTarget::kLoggedModels));
  FERRY_ASSIGN_OR_RETURN(auto order, ParseOrderBy(q.order_by, SearchTarget::kLoggedModels));
  for (auto& c : clauses) {
    if (c.entity == SearchEntity::kAttribute && c.key == "status") {
      for (auto& v : c.strings) {  // 'READY', 'LOGGED_MODEL_READY' or '2' alike
        if (auto st = ParseLoggedModelStatus(v)) v = ShortStatusName(*st);
      }
    }
    if (c.entity == SearchEntity::kMetric) {
      return InvalidArgument("filter on metrics." + c.key +
                             ": Ferry does not keep metrics of logged models");
    }
  }
  for (const auto& k : order) {
    if (k.entity == SearchEntity::kMetric) {
      return InvalidArgument("order_by metrics." + k.key +
                             ": Ferry does not keep metrics of logged models");
    }
  }
  FERRY_ASSIGN_OR_RETURN(size_t offset, DecodePageToken(q.page_token));
  std::vector<LoggedModel> found;
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kRead, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(auto docs, t.Scan(kLoggedModelKind, ""));
    for (const auto& [id, doc] : docs) {
      FERRY_ASSIGN_OR_RETURN(Stored s, FromDoc(id, doc));
      if (s.deleted) continue;
      if (std::find(q.experiment_ids.begin(), q.experiment_ids.end(), s.model.experiment_id) ==
          q.experiment_ids.end()) {
        continue;
      }
      bool ok = AllClausesHold(
          clauses, [&](const SearchClause& c) { return ValueOfModel(s.model, c.entity, c.key); });
      if (ok) found.push_back(std::move(s.model));
    }
    return Status();
  }));
  std::sort(found.begin(), found.end(), [&](const LoggedModel& a, const LoggedModel& b) {
    for (const auto& k : order) {
      ModelValue va = ValueOfModel(a, k.entity, k.key), vb = ValueOfModel(b, k.entity, k.key);
      if (va.present != vb.present) return va.present;  // missing values last
      bool numeric = IsNumericAttribute(k.key) && k.entity == SearchEntity::kAttribute;
      if (numeric ? va.number == vb.number : va.text == vb.text) continue;
      bool less = numeric ? va.number < vb.number : va.text < vb.text;
      return k.ascending ? less : !less;
    }
    if (a.creation_ms != b.creation_ms) return a.creation_ms > b.creation_ms;
    return a.model_id < b.model_id;
  });
  return PageOf(std::move(found), offset, q.max_results);
}

}  // namespace ferry::tracker
