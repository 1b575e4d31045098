#include "tracker/registry.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "base/json_text.h"
#include "base/strings.h"
#include "base/utf8.h"
#include "tracker/doc_codec.h"
#include "tracker/logged_models.h"
#include "tracker/search.h"

namespace ferry::tracker {
namespace {

using nlohmann::json;

constexpr std::string_view kModelKind = "registered_model";
constexpr std::string_view kVersionKind = "model_version";
constexpr size_t kMaxNameBytes = 256;
constexpr const char* kStages[] = {"None", "Staging", "Production", "Archived"};

std::string VersionKey(const std::string& name, int64_t version) {
  std::string digits = std::to_string(version);
  return name + '\x1f' + std::string(10 - std::min<size_t>(10, digits.size()), '0') + digits;
}
std::string VersionPrefix(const std::string& name) { return name + '\x1f'; }

Status CheckName(const std::string& name, const char* what = "registered model name") {
  if (name.empty()) return InvalidArgument(std::string("the ") + what + " is empty");
  if (name.size() > kMaxNameBytes || !IsUtf8(name)) {
    return InvalidArgument(std::string("the ") + what + " must be 1.." +
                           std::to_string(kMaxNameBytes) + " bytes of UTF-8");
  }
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      return InvalidArgument(std::string("the ") + what + " has a control character");
    }
  }
  return Status();
}

Status CheckTag(const Tag& t) {
  if (t.key.empty()) return InvalidArgument("a tag key is empty");
  if (!IsUtf8(t.key) || !IsUtf8(t.value))
    return InvalidArgument("tag '" + t.key + "' is not UTF-8");
  return Status();
}

Result<int64_t> ParseVersion(const std::string& name, const std::string& version) {
  auto v = ParseUint64(version);
  if (!v || *v < 1 || *v > 9'999'999'999ULL) {
    return InvalidArgument("Invalid model version '" + version + "' of registered model '" + name +
                           "': expected a positive integer");
  }
  return static_cast<int64_t>(*v);
}

// What a registered model's document holds besides the public fields.
struct StoredModel {
  RegisteredModel model;  // latest_versions and alias versions' aliases not filled
  int64_t last_version = 0;
};

std::string ToDoc(const StoredModel& s) {
  json aliases = json::object();
  for (const auto& [a, v] : s.model.aliases) aliases[a] = v;
  return JsonText({{"name", s.model.name},
                   {"creation_ms", s.model.creation_ms},
                   {"updated_ms", s.model.updated_ms},
                   {"description", s.model.description},
                   {"tags", doc::PairsJson(s.model.tags)},
                   {"aliases", aliases},
                   {"last_version", s.last_version}});
}

std::string ToDoc(const ModelVersion& v) {
  return JsonText({{"name", v.name},
                   {"version", v.version},
                   {"creation_ms", v.creation_ms},
                   {"updated_ms", v.updated_ms},
                   {"stage", v.current_stage},
                   {"description", v.description},
                   {"source", v.source},
                   {"storage_location", v.storage_location},
                   {"run_id", v.run_id},
                   {"run_link", v.run_link},
                   {"model_id", v.model_id},
                   {"user_id", v.user_id},
                   {"tags", doc::PairsJson(v.tags)}});
}

Status Damaged(const std::string& what) {
  return Internal(what + ": the stored document is damaged");
}

Result<StoredModel> ModelFromDoc(const std::string& doc) {
  json j = json::parse(doc, nullptr, false);
  try {
    StoredModel s;
    s.model.name = j.at("name").get<std::string>();
    s.model.creation_ms = j.at("creation_ms").get<int64_t>();
    s.model.updated_ms = j.at("updated_ms").get<int64_t>();
    s.model.description = j.value("description", "");
    s.model.tags = doc::PairsFrom(j.at("tags"));
    for (const auto& [a, v] : j.at("aliases").items())
      s.model.aliases.emplace_back(a, v.get<int64_t>());
    s.last_version = j.at("last_version").get<int64_t>();
    return s;
  } catch (const json::exception&) {
    return Damaged("a registered model");
  }
}

Result<ModelVersion> VersionFromDoc(const std::string& doc) {
  json j = json::parse(doc, nullptr, false);
  try {
    ModelVersion v;
    v.name = j.at("name").get<std::string>();
    v.version = j.at("version").get<int64_t>();
    v.creation_ms = j.at("creation_ms").get<int64_t>();
    v.updated_ms = j.at("updated_ms").get<int64_t>();
    v.current_stage = j.at("stage").get<std::string>();
    v.description = j.value("description", "");
    v.source = j.value("source", "");
    v.storage_location = j.value("storage_location", "");
    v.run_id = j.value("run_id", "");
    v.run_link = j.value("run_link", "");
    v.model_id = j.value("model_id", "");
    v.user_id = j.value("user_id", "");
    v.tags = doc::PairsFrom(j.at("tags"));
    return v;
  } catch (const json::exception&) {
    return Damaged("a model version");
  }
}

Status NoModel(const std::string& name) {
  return NotFound("Registered Model with name=" + name + " not found");
}
Status NoVersion(const std::string& name, int64_t version) {
  return NotFound("Model Version (name=" + name + ", version=" + std::to_string(version) +
                  ") not found");
}

Result<StoredModel> ReadModel(DocTxn& t, const std::string& name) {
  FERRY_ASSIGN_OR_RETURN(auto doc, t.Get(kModelKind, name));
  if (!doc) return NoModel(name);
  return ModelFromDoc(*doc);
}

// The version with its aliases (from the model's map).
Result<ModelVersion> ReadVersion(DocTxn& t, const StoredModel& m, int64_t version) {
  FERRY_ASSIGN_OR_RETURN(auto doc, t.Get(kVersionKind, VersionKey(m.model.name, version)));
  if (!doc) return NoVersion(m.model.name, version);
  FERRY_ASSIGN_OR_RETURN(ModelVersion v, VersionFromDoc(*doc));
  for (const auto& [a, n] : m.model.aliases) {
    if (n == version) v.aliases.push_back(a);
  }
  return v;
}

Result<std::vector<ModelVersion>> ReadVersions(DocTxn& t, const StoredModel& m) {
  FERRY_ASSIGN_OR_RETURN(auto docs, t.Scan(kVersionKind, VersionPrefix(m.model.name)));
  std::vector<ModelVersion> out;
  for (const auto& [key, doc] : docs) {
    FERRY_ASSIGN_OR_RETURN(ModelVersion v, VersionFromDoc(doc));
    for (const auto& [a, n] : m.model.aliases) {
      if (n == v.version) v.aliases.push_back(a);
    }
    out.push_back(std::move(v));
  }
  return out;
}

// The highest version of each stage, in kStages order.
std::vector<ModelVersion> Latest(const std::vector<ModelVersion>& versions,
                                 const std::vector<std::string>& stages) {
  std::vector<ModelVersion> out;
  for (const auto& stage : stages) {
    const ModelVersion* best = nullptr;
    for (const auto& v : versions) {
      if (v.current_stage == stage && (!best || v.version > best->version)) best = &v;
    }
    if (best) out.push_back(*best);
  }
  return out;
}

Result<RegisteredModel> Full(DocTxn& t, StoredModel m) {
  FERRY_ASSIGN_OR_RETURN(auto versions, ReadVersions(t, m));
  m.model.latest_versions = Latest(versions, {std::begin(kStages), std::end(kStages)});
  return m.model;
}

Result<std::string> CanonicalStage(const std::string& stage) {
  for (const char* s : kStages) {
    if (EqualsIgnoreCase(stage, s)) return std::string(s);
  }
  return InvalidArgument("Invalid Model Version stage: " + stage +
                         ". Value must be one of None, Staging, Production, Archived.");
}

Status CheckAlias(const std::string& alias) {
  FERRY_RETURN_IF_ERROR(CheckName(alias, "alias"));
  std::string lower = ToLower(alias);
  bool v_number =
      lower.size() > 1 && lower[0] == 'v' &&
      std::all_of(lower.begin() + 1, lower.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (lower == "latest" || v_number) {
    return InvalidArgument("'" + alias +
                           "' is reserved and cannot be an alias (models:/name/latest and "
                           "models:/name/v<N> mean other things)");
  }
  return Status();
}

// Runs `change` on the model `name` and writes it back, in one write transaction.
Status UpdateModel(TrackerStore& store, const std::string& name,
                   const std::function<Status(DocTxn&, StoredModel&)>& change) {
  return store.Transact(TxnMode::kWrite, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(StoredModel m, ReadModel(t, name));
    FERRY_RETURN_IF_ERROR(change(t, m));
    return t.Put(kModelKind, name, ToDoc(m));
  });
}

// Runs `change` on one version and writes it back (the model's update time too).
Result<ModelVersion> UpdateVersion(
    TrackerStore& store, const std::string& name, const std::string& version, int64_t now_ms,
    const std::function<Status(DocTxn&, StoredModel&, ModelVersion&)>& change) {
  FERRY_ASSIGN_OR_RETURN(int64_t n, ParseVersion(name, version));
  ModelVersion out;
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kWrite, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(StoredModel m, ReadModel(t, name));
    FERRY_ASSIGN_OR_RETURN(out, ReadVersion(t, m, n));
    FERRY_RETURN_IF_ERROR(change(t, m, out));
    out.updated_ms = now_ms;
    m.model.updated_ms = now_ms;
    FERRY_RETURN_IF_ERROR(t.Put(kVersionKind, VersionKey(name, n), ToDoc(out)));
    return t.Put(kModelKind, name, ToDoc(m));
  }));
  return out;
}

// Where a version's files are, from its source (see registry.h).
Result<std::string> StorageLocation(TrackerStore& store, const std::string& source) {
  for (std::string_view seg : Split(source, '/')) {
    if (seg == "..") return InvalidArgument("Invalid model version source '" + source + "': '..'");
  }
  constexpr std::string_view kModels = "models:/", kRuns = "runs:/";
  std::string_view s = source;
  if (s.starts_with(kModels) && s.substr(kModels.size()).starts_with("m-") &&
      s.substr(kModels.size()).find('/') == std::string_view::npos) {
    FERRY_ASSIGN_OR_RETURN(LoggedModel m,
                           GetLoggedModel(store, std::string(s.substr(kModels.size()))));
    return m.artifact_uri;
  }
  if (s.starts_with(kRuns)) {
    std::string_view rest = s.substr(kRuns.size());
    size_t slash = rest.find('/');
    std::string run_id(rest.substr(0, slash));
    auto run = store.GetRun(run_id);
    if (run.status().code() == StatusCode::kNotFound) {
      return NotFound("Run with id=" + run_id + " not found (the source '" + source + "')");
    }
    FERRY_RETURN_IF_ERROR(run.status());
    std::string path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
    return run->info.artifact_uri + path;
  }
  return source;
}

const std::string* FindTag(const std::vector<Tag>& tags, const std::string& key) {
  for (const auto& t : tags) {
    if (t.key == key) return &t.value;
  }
  return nullptr;
}

}  // namespace

Result<RegisteredModel> CreateRegisteredModel(TrackerStore& store, const std::string& name,
                                              const std::vector<Tag>& tags,
                                              const std::string& description, int64_t now_ms) {
  FERRY_RETURN_IF_ERROR(CheckName(name));
  for (const auto& t : tags) FERRY_RETURN_IF_ERROR(CheckTag(t));
  if (!IsUtf8(description)) return InvalidArgument("the description is not UTF-8");
  StoredModel m;
  m.model.name = name;
  m.model.creation_ms = m.model.updated_ms = now_ms;
  m.model.description = description;
  for (const auto& t : tags) doc::SetPair(m.model.tags, t);
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kWrite, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(auto existing, t.Get(kModelKind, name));
    if (existing) {
      return Status(StatusCode::kAlreadyExists,
                    "Registered Model (name=" + name + ") already exists.");
    }
    return t.Put(kModelKind, name, ToDoc(m));
  }));
  return m.model;
}

Result<RegisteredModel> GetRegisteredModel(TrackerStore& store, const std::string& name) {
  RegisteredModel out;
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kRead, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(StoredModel m, ReadModel(t, name));
    FERRY_ASSIGN_OR_RETURN(out, Full(t, std::move(m)));
    return Status();
  }));
  return out;
}

Result<RegisteredModel> RenameRegisteredModel(TrackerStore& store, const std::string& name,
                                              const std::string& new_name, int64_t now_ms) {
  FERRY_RETURN_IF_ERROR(CheckName(new_name));
  RegisteredModel out;
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kWrite, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(StoredModel m, ReadModel(t, name));
    if (new_name == name) {
      FERRY_ASSIGN_OR_RETURN(out, Full(t, std::move(m)));
      return Status();
    }
    FERRY_ASSIGN_OR_RETURN(auto taken, t.Get(kModelKind, new_name));
    if (taken) {
      return Status(StatusCode::kAlreadyExists,
                    "Registered Model (name=" + new_name + ") already exists.");
    }
    FERRY_ASSIGN_OR_RETURN(auto versions, ReadVersions(t, m));
    for (auto& v : versions) {
      FERRY_RETURN_IF_ERROR(t.Delete(kVersionKind, VersionKey(name, v.version)));
      v.name = new_name;
      v.aliases.clear();
      FERRY_RETURN_IF_ERROR(t.Put(kVersionKind, VersionKey(new_name, v.version), ToDoc(v)));
    }
    FERRY_RETURN_IF_ERROR(t.Delete(kModelKind, name));
    m.model.name = new_name;
    m.model.updated_ms = now_ms;
    FERRY_RETURN_IF_ERROR(t.Put(kModelKind, new_name, ToDoc(m)));
    FERRY_ASSIGN_OR_RETURN(out, Full(t, std::move(m)));
    return Status();
  }));
  return out;
}

Result<RegisteredModel> UpdateRegisteredModel(TrackerStore& store, const std::string& name,
                                              const std::string& description, int64_t now_ms) {
  if (!IsUtf8(description)) return InvalidArgument("the description is not UTF-8");
  FERRY_RETURN_IF_ERROR(UpdateModel(store, name, [&](DocTxn&, StoredModel& m) {
    m.model.description = description;
    m.model.updated_ms = now_ms;
    return Status();
  }));
  return GetRegisteredModel(store, name);
}

Status DeleteRegisteredModel(TrackerStore& store, const std::string& name) {
  return store.Transact(TxnMode::kWrite, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(StoredModel m, ReadModel(t, name));
    FERRY_ASSIGN_OR_RETURN(auto versions, ReadVersions(t, m));
    for (const auto& v : versions) {
      FERRY_RETURN_IF_ERROR(t.Delete(kVersionKind, VersionKey(name, v.version)));
    }
    return t.Delete(kModelKind, name);
  });
}

Status SetRegisteredModelTag(TrackerStore& store, const std::string& name, const Tag& tag,
                             int64_t now_ms) {
  FERRY_RETURN_IF_ERROR(CheckTag(tag));
  return UpdateModel(store, name, [&](DocTxn&, StoredModel& m) {
    doc::SetPair(m.model.tags, tag);
    m.model.updated_ms = now_ms;
    return Status();
  });
}

Status DeleteRegisteredModelTag(TrackerStore& store, const std::string& name,
                                const std::string& key, int64_t now_ms) {
  return UpdateModel(store, name, [&](DocTxn&, StoredModel& m) {
    std::erase_if(m.model.tags, [&](const Tag& t) { return t.key == key; });
    m.model.updated_ms = now_ms;
    return Status();
  });
}

Result<Page<RegisteredModel>> SearchRegisteredModels(TrackerStore& store, const RegistrySearch& q) {
  if (q.max_results < 1 || q.max_results > 1000) {
    return InvalidArgument("Invalid value for max_results: it must be at most 1000, got " +
                           std::to_string(q.max_results));
  }
  FERRY_ASSIGN_OR_RETURN(auto clauses, ParseFilter(q.filter, SearchTarget::kRegisteredModels));
  FERRY_ASSIGN_OR_RETURN(auto order, ParseOrderBy(q.order_by, SearchTarget::kRegisteredModels));
  FERRY_ASSIGN_OR_RETURN(size_t offset, DecodePageToken(q.page_token));
  std::vector<RegisteredModel> found;
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kRead, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(auto docs, t.Scan(kModelKind, ""));
    for (const auto& [name, doc] : docs) {
      FERRY_ASSIGN_OR_RETURN(StoredModel m, ModelFromDoc(doc));
      bool ok = AllClausesHold(clauses, [&](const SearchClause& c) -> ClauseValue {
        if (c.entity == SearchEntity::kTag) {
          const std::string* v = FindTag(m.model.tags, c.key);
          return {v != nullptr, 0, v ? *v : ""};
        }
        return {true, 0, m.model.name};
      });
      if (!ok) continue;
      FERRY_ASSIGN_OR_RETURN(RegisteredModel full, Full(t, std::move(m)));
      found.push_back(std::move(full));
    }
    return Status();
  }));
  std::sort(found.begin(), found.end(), [&](const RegisteredModel& a, const RegisteredModel& b) {
    for (const auto& k : order) {
      if (k.key == "name") {
        if (a.name != b.name) return k.ascending == (a.name < b.name);
      } else {  // last_updated_timestamp / creation_timestamp
        int64_t x = k.key == "creation_timestamp" ? a.creation_ms : a.updated_ms;
        int64_t y = k.key == "creation_timestamp" ? b.creation_ms : b.updated_ms;
        if (x != y) return k.ascending == (x < y);
      }
    }
    return a.name < b.name;
  });
  return PageOf(std::move(found), offset, q.max_results);
}

Result<std::vector<ModelVersion>> GetLatestVersions(TrackerStore& store, const std::string& name,
                                                    const std::vector<std::string>& stages) {
  std::vector<std::string> wanted;
  for (const auto& s : stages) {
    FERRY_ASSIGN_OR_RETURN(std::string c, CanonicalStage(s));
    wanted.push_back(c);
  }
  if (wanted.empty()) wanted.assign(std::begin(kStages), std::end(kStages));
  std::vector<ModelVersion> out;
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kRead, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(StoredModel m, ReadModel(t, name));
    FERRY_ASSIGN_OR_RETURN(auto versions, ReadVersions(t, m));
    out = Latest(versions, wanted);
    return Status();
  }));
  return out;
}

Result<ModelVersion> CreateModelVersion(TrackerStore& store, const CreateVersionRequest& req) {
  FERRY_RETURN_IF_ERROR(CheckName(req.name));
  if (req.source.empty()) return InvalidArgument("Missing value for required parameter 'source'");
  if (!IsUtf8(req.source) || !IsUtf8(req.description) || !IsUtf8(req.run_link)) {
    return InvalidArgument("the source, description or run_link is not UTF-8");
  }
  for (const auto& t : req.tags) FERRY_RETURN_IF_ERROR(CheckTag(t));
  if (!req.run_id.empty()) {
    auto run = store.GetRun(req.run_id);
    if (run.status().code() == StatusCode::kNotFound) {
      return NotFound("Run with id=" + req.run_id + " not found");
    }
    FERRY_RETURN_IF_ERROR(run.status());
  }
  if (!req.model_id.empty()) FERRY_RETURN_IF_ERROR(GetLoggedModel(store, req.model_id).status());
  FERRY_ASSIGN_OR_RETURN(std::string location, StorageLocation(store, req.source));
  ModelVersion v;
  v.name = req.name;
  v.creation_ms = v.updated_ms = req.now_ms;
  v.description = req.description;
  v.source = req.source;
  v.storage_location = location;
  v.run_id = req.run_id;
  v.run_link = req.run_link;
  v.model_id = req.model_id;
  for (const auto& t : req.tags) doc::SetPair(v.tags, t);
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kWrite, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(StoredModel m, ReadModel(t, req.name));
    v.version = ++m.last_version;
    m.model.updated_ms = req.now_ms;
    FERRY_RETURN_IF_ERROR(t.Put(kVersionKind, VersionKey(req.name, v.version), ToDoc(v)));
    return t.Put(kModelKind, req.name, ToDoc(m));
  }));
  return v;
}

Result<ModelVersion> GetModelVersion(TrackerStore& store, const std::string& name,
                                     const std::string& version) {
  FERRY_ASSIGN_OR_RETURN(int64_t n, ParseVersion(name, version));
  ModelVersion out;
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kRead, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(StoredModel m, ReadModel(t, name));
    FERRY_ASSIGN_OR_RETURN(out, ReadVersion(t, m, n));
    return Status();
  }));
  return out;
}

Result<ModelVersion> UpdateModelVersion(TrackerStore& store, const std::string& name,
                                        const std::string& version, const std::string& description,
                                        int64_t now_ms) {
  if (!IsUtf8(description)) return InvalidArgument("the description is not UTF-8");
  return UpdateVersion(store, name, version, now_ms, [&](DocTxn&, StoredModel&, ModelVersion& v) {
    v.description = description;
    return Status();
  });
}

Result<ModelVersion> TransitionModelVersionStage(TrackerStore& store, const std::string& name,
                                                 const std::string& version,
                                                 const std::string& stage, bool archive_existing,
                                                 int64_t now_ms) {
  FERRY_ASSIGN_OR_RETURN(std::string to, CanonicalStage(stage));
  if (archive_existing && to != "Staging" && to != "Production") {
    return InvalidArgument(
        "archive_existing_versions applies to Staging and Production only, not " + to);
  }
  return UpdateVersion(
      store, name, version, now_ms, [&](DocTxn& t, StoredModel& m, ModelVersion& v) -> Status {
        v.current_stage = to;
        if (!archive_existing) return Status();
        FERRY_ASSIGN_OR_RETURN(auto others, ReadVersions(t, m));
        for (auto& o : others) {
          if (o.version == v.version || o.current_stage != to) continue;
          o.current_stage = "Archived";
          o.updated_ms = now_ms;
          o.aliases.clear();
          FERRY_RETURN_IF_ERROR(t.Put(kVersionKind, VersionKey(name, o.version), ToDoc(o)));
        }
        return Status();
      });
}

Status DeleteModelVersion(TrackerStore& store, const std::string& name,
                          const std::string& version) {
  FERRY_ASSIGN_OR_RETURN(int64_t n, ParseVersion(name, version));
  return store.Transact(TxnMode::kWrite, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(StoredModel m, ReadModel(t, name));
    FERRY_RETURN_IF_ERROR(ReadVersion(t, m, n).status());
    std::erase_if(m.model.aliases, [&](const auto& a) { return a.second == n; });
    FERRY_RETURN_IF_ERROR(t.Delete(kVersionKind, VersionKey(name, n)));
    return t.Put(kModelKind, name, ToDoc(m));
  });
}

Status SetModelVersionTag(TrackerStore& store, const std::string& name, const std::string& version,
                          const Tag& tag, int64_t now_ms) {
  FERRY_RETURN_IF_ERROR(CheckTag(tag));
  return UpdateVersion(store, name, version, now_ms,
                       [&](DocTxn&, StoredModel&, ModelVersion& v) {
                         doc::SetPair(v.tags, tag);
                         return Status();
                       })
      .status();
}

Status DeleteModelVersionTag(TrackerStore& store, const std::string& name,
                             const std::string& version, const std::string& key, int64_t now_ms) {
  return UpdateVersion(store, name, version, now_ms,
                       [&](DocTxn&, StoredModel&, ModelVersion& v) {
                         std::erase_if(v.tags, [&](const Tag& t) { return t.key == key; });
                         return Status();
                       })
      .status();
}

Result<Page<ModelVersion>> SearchModelVersions(TrackerStore& store, const RegistrySearch& q) {
  if (q.max_results < 1 || q.max_results > 200000) {
    return InvalidArgument("Invalid value for max_results: it must be 1..200000, got " +
                           std::to_string(q.max_results));
  }
  FERRY_ASSIGN_OR_RETURN(auto clauses, ParseFilter(q.filter, SearchTarget::kModelVersions));
  FERRY_ASSIGN_OR_RETURN(auto order, ParseOrderBy(q.order_by, SearchTarget::kModelVersions));
  FERRY_ASSIGN_OR_RETURN(size_t offset, DecodePageToken(q.page_token));
  std::vector<ModelVersion> found;
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kRead, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(auto models, t.Scan(kModelKind, ""));
    for (const auto& [name, doc] : models) {
      FERRY_ASSIGN_OR_RETURN(StoredModel m, ModelFromDoc(doc));
      FERRY_ASSIGN_OR_RETURN(auto versions, ReadVersions(t, m));
      for (auto& v : versions) {
        bool ok = AllClausesHold(clauses, [&](const SearchClause& c) -> ClauseValue {
          if (c.entity == SearchEntity::kTag) {
            const std::string* tv = FindTag(v.tags, c.key);
            return {tv != nullptr, 0, tv ? *tv : ""};
          }
          if (c.key == "version_number") return {true, static_cast<double>(v.version), ""};
          if (c.key == "run_id") return {!v.run_id.empty(), 0, v.run_id};
          if (c.key == "source_path") return {true, 0, v.source};
          if (c.key == "model_id") return {!v.model_id.empty(), 0, v.model_id};
          if (c.key == "current_stage") return {true, 0, v.current_stage};
          return {true, 0, v.name};
        });
        if (ok) found.push_back(std::move(v));
      }
    }
    return Status();
  }));
  std::sort(found.begin(), found.end(), [&](const ModelVersion& a, const ModelVersion& b) {
    for (const auto& k : order) {
      if (k.key == "name") {
        if (a.name != b.name) return k.ascending == (a.name < b.name);
      } else if (k.key == "version_number") {
        if (a.version != b.version) return k.ascending == (a.version < b.version);
      } else {
        int64_t x = k.key == "creation_timestamp" ? a.creation_ms : a.updated_ms;
        int64_t y = k.key == "creation_timestamp" ? b.creation_ms : b.updated_ms;
        if (x != y) return k.ascending == (x < y);
      }
    }
    if (order.empty() && a.updated_ms != b.updated_ms) return a.updated_ms > b.updated_ms;
    if (a.name != b.name) return a.name < b.name;
    return a.version > b.version;
  });
  return PageOf(std::move(found), offset, q.max_results);
}

Status SetRegisteredModelAlias(TrackerStore& store, const std::string& name,
                               const std::string& alias, const std::string& version,
                               int64_t now_ms) {
  FERRY_RETURN_IF_ERROR(CheckAlias(alias));
  FERRY_ASSIGN_OR_RETURN(int64_t n, ParseVersion(name, version));
  return UpdateModel(store, name, [&](DocTxn& t, StoredModel& m) -> Status {
    FERRY_RETURN_IF_ERROR(ReadVersion(t, m, n).status());
    std::erase_if(m.model.aliases, [&](const auto& a) { return a.first == alias; });
    m.model.aliases.emplace_back(alias, n);
    std::sort(m.model.aliases.begin(), m.model.aliases.end());
    m.model.updated_ms = now_ms;
    return Status();
  });
}

Status DeleteRegisteredModelAlias(TrackerStore& store, const std::string& name,
                                  const std::string& alias, int64_t now_ms) {
  return UpdateModel(store, name, [&](DocTxn&, StoredModel& m) -> Status {
    std::erase_if(m.model.aliases, [&](const auto& a) { return a.first == alias; });
    m.model.updated_ms = now_ms;
    return Status();
  });
}

Result<ModelVersion> GetModelVersionByAlias(TrackerStore& store, const std::string& name,
                                            const std::string& alias) {
  ModelVersion out;
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kRead, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(StoredModel m, ReadModel(t, name));
    for (const auto& [a, n] : m.model.aliases) {
      if (a == alias) {
        FERRY_ASSIGN_OR_RETURN(out, ReadVersion(t, m, n));
        return Status();
      }
    }
    return NotFound("Registered model alias " + alias + " not found.");
  }));
  return out;
}

}  // namespace ferry::tracker
