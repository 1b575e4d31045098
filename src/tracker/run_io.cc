#include "tracker/run_io.h"

#include "base/json_text.h"
#include "base/utf8.h"
#include "tracker/logged_models.h"

namespace ferry::tracker {
namespace {

using nlohmann::json;

constexpr std::string_view kRunIoKind = "run_io";

Result<json> Array(const json& j, const char* field) {
  if (j.is_null()) return json::array();
  if (!j.is_array()) return InvalidArgument(std::string("'") + field + "' must be a list");
  return j;
}

Status RequireString(const json& obj, const std::string& where, const char* field) {
  if (!obj.is_object() || !obj.contains(field) || !obj[field].is_string() ||
      obj[field].get<std::string>().empty()) {
    return InvalidArgument("Missing value for required parameter '" + where + "." + field + "'");
  }
  return Status();
}

// The run exists and is active.
Status WritableRun(TrackerStore& store, const std::string& run_id) {
  auto run = store.GetRun(run_id);
  if (run.status().code() == StatusCode::kNotFound) {
    return NotFound("Run with id=" + run_id + " not found");
  }
  FERRY_RETURN_IF_ERROR(run.status());
  if (run->info.stage != LifecycleStage::kActive) {
    return Status(StatusCode::kFailedPrecondition,
                  "The run " + run_id + " must be in the 'active' state");
  }
  return Status();
}

Result<RunIo> Read(DocTxn& t, const std::string& run_id) {
  FERRY_ASSIGN_OR_RETURN(auto doc, t.Get(kRunIoKind, run_id));
  RunIo io;
  if (!doc) return io;
  json j = json::parse(*doc, nullptr, false);
  if (!j.is_object() || !j.contains("inputs") || !j.contains("outputs")) {
    return Internal("the inputs of run '" + run_id + "': the stored document is damaged");
  }
  io.inputs = j["inputs"];
  io.outputs = j["outputs"];
  return io;
}

Status Write(DocTxn& t, const std::string& run_id, const RunIo& io) {
  return t.Put(kRunIoKind, run_id, JsonText({{"inputs", io.inputs}, {"outputs", io.outputs}}));
}

// Appends `item` to io[list] unless an entry with the same `same` fields is there; returns it.
json& AppendUnique(json& parent, const char* list, const json& item,
                   const std::function<bool(const json&, const json&)>& same) {
  json& arr = parent[list];
  if (!arr.is_array()) arr = json::array();
  for (json& existing : arr) {
    if (same(existing, item)) return existing;
  }
  arr.push_back(item);
  return arr.back();
}

}  // namespace

Status LogRunInputs(TrackerStore& store, const std::string& run_id, const json& datasets_in,
                    const json& models_in) {
  FERRY_ASSIGN_OR_RETURN(json datasets, Array(datasets_in, "datasets"));
  FERRY_ASSIGN_OR_RETURN(json models, Array(models_in, "models"));
  for (size_t i = 0; i < datasets.size(); ++i) {
    std::string where = "datasets[" + std::to_string(i) + "]";
    const json& d = datasets[i];
    if (!d.is_object() || !d.contains("dataset") || !d["dataset"].is_object()) {
      return InvalidArgument("Missing value for required parameter '" + where + ".dataset'");
    }
    for (const char* f : {"name", "digest", "source_type", "source"}) {
      FERRY_RETURN_IF_ERROR(RequireString(d["dataset"], where + ".dataset", f));
    }
    if (d.contains("tags") && !d["tags"].is_array()) {
      return InvalidArgument("'" + where + ".tags' must be a list");
    }
    for (const json& tag : d.value("tags", json::array())) {
      FERRY_RETURN_IF_ERROR(RequireString(tag, where + ".tags[]", "key"));
      if (!tag.contains("value") || !tag["value"].is_string()) {
        return InvalidArgument("Missing value for required parameter '" + where + ".tags[].value'");
      }
    }
  }
  for (size_t i = 0; i < models.size(); ++i) {
    FERRY_RETURN_IF_ERROR(
        RequireString(models[i], "models[" + std::to_string(i) + "]", "model_id"));
    FERRY_RETURN_IF_ERROR(GetLoggedModel(store, models[i]["model_id"].get<std::string>()).status());
  }
  FERRY_RETURN_IF_ERROR(WritableRun(store, run_id));
  return store.Transact(TxnMode::kWrite, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(RunIo io, Read(t, run_id));
    for (const json& d : datasets) {
      json item = {{"tags", d.value("tags", json::array())}, {"dataset", d["dataset"]}};
      json& kept =
          AppendUnique(io.inputs, "dataset_inputs", item, [](const json& a, const json& b) {
            return a["dataset"]["name"] == b["dataset"]["name"] &&
                   a["dataset"]["digest"] == b["dataset"]["digest"];
          });
      for (const json& tag : item["tags"]) {
        AppendUnique(kept, "tags", tag, [](const json& a, const json& b) {
          return a["key"] == b["key"] && a["value"] == b["value"];
        });
      }
    }
    for (const json& m : models) {
      AppendUnique(io.inputs, "model_inputs", json{{"model_id", m["model_id"]}},
                   [](const json& a, const json& b) { return a["model_id"] == b["model_id"]; });
    }
    return Write(t, run_id, io);
  });
}

Status LogRunOutputs(TrackerStore& store, const std::string& run_id, const json& models_in) {
  if (models_in.is_null()) {
    return InvalidArgument("Missing value for required parameter 'models'");
  }
  FERRY_ASSIGN_OR_RETURN(json models, Array(models_in, "models"));
  FERRY_RETURN_IF_ERROR(WritableRun(store, run_id));
  std::vector<json> outputs;
  for (size_t i = 0; i < models.size(); ++i) {
    std::string where = "models[" + std::to_string(i) + "]";
    FERRY_RETURN_IF_ERROR(RequireString(models[i], where, "model_id"));
    const json& step = models[i].value("step", json());
    int64_t n = 0;
    if (step.is_number_integer()) {
      n = step.get<int64_t>();
    } else if (step.is_string() && !step.get<std::string>().empty()) {
      try {
        size_t used = 0;
        n = std::stoll(step.get<std::string>(), &used);
        if (used != step.get<std::string>().size()) throw std::invalid_argument("trailing");
      } catch (const std::exception&) {
        return InvalidArgument("Invalid value for parameter '" + where + ".step': not an int64");
      }
    } else {
      return InvalidArgument("Missing value for required parameter '" + where + ".step'");
    }
    FERRY_RETURN_IF_ERROR(GetLoggedModel(store, models[i]["model_id"].get<std::string>()).status());
    outputs.push_back({{"model_id", models[i]["model_id"]}, {"step", n}});
  }
  return store.Transact(TxnMode::kWrite, [&](DocTxn& t) -> Status {
    FERRY_ASSIGN_OR_RETURN(RunIo io, Read(t, run_id));
    for (const json& o : outputs) {
      AppendUnique(io.outputs, "model_outputs", o, [](const json& a, const json& b) {
        return a["model_id"] == b["model_id"] && a["step"] == b["step"];
      });
    }
    return Write(t, run_id, io);
  });
}

Result<std::map<std::string, RunIo>> GetRunIo(TrackerStore& store,
                                              const std::vector<std::string>& run_ids) {
  std::map<std::string, RunIo> out;
  FERRY_RETURN_IF_ERROR(store.Transact(TxnMode::kRead, [&](DocTxn& t) -> Status {
    for (const auto& id : run_ids) {
      FERRY_ASSIGN_OR_RETURN(out[id], Read(t, id));
    }
    return Status();
  }));
  return out;
}

}  // namespace ferry::tracker
