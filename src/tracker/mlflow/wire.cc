#include "tracker/mlflow/wire.h"

#include <cmath>

#include "tracker/enum_names.h"
#include "tracker/mlflow/request_args.h"

namespace ferry::tracker::mlflow {

using nlohmann::json;

json TagsJson(const std::vector<Tag>& tags) {
  json out = json::array();
  for (const auto& t : tags) out.push_back({{"key", t.key}, {"value", t.value}});
  return out;
}

json ExperimentJson(const Experiment& e) {
  json out = {{"experiment_id", e.id},
              {"name", e.name},
              {"artifact_location", e.artifact_location},
              {"lifecycle_stage", LifecycleStageName(e.stage)},
              {"creation_time", Int64Json(e.creation_time)},
              {"last_update_time", Int64Json(e.last_update_time)}};
  SetRepeated(out, "tags", TagsJson(e.tags));
  return out;
}

json RunInfoJson(const RunInfo& i) {
  json out = {{"run_id", i.run_id},
              {"run_uuid", i.run_id},
              {"experiment_id", i.experiment_id},
              {"run_name", i.run_name},
              {"user_id", i.user_id},
              {"status", RunStatusName(i.status)},
              {"start_time", Int64Json(i.start_time)},
              {"artifact_uri", i.artifact_uri},
              {"lifecycle_stage", LifecycleStageName(i.stage)}};
  if (i.end_time) out["end_time"] = Int64Json(*i.end_time);
  return out;
}

json MetricJson(const MetricPoint& m) {
  return {{"key", m.key},
          {"value", DoubleJson(m.value)},
          {"timestamp", Int64Json(m.timestamp_ms)},
          {"step", Int64Json(m.step)}};
}

json RunJson(const Run& run, const RunIo* io) {
  json metrics = json::array();
  for (const auto& m : run.latest_metrics) metrics.push_back(MetricJson(m));
  json data = json::object();
  SetRepeated(data, "metrics", std::move(metrics));
  SetRepeated(data, "params", TagsJson(run.params));
  SetRepeated(data, "tags", TagsJson(run.tags));
  json out = {{"info", RunInfoJson(run.info)},
              {"data", std::move(data)},
              {"inputs", io ? io->inputs : json::object()}};
  if (io && !io->outputs.empty()) out["outputs"] = io->outputs;
  return out;
}

json LoggedModelJson(const LoggedModel& m) {
  json info = {{"model_id", m.model_id},
               {"experiment_id", m.experiment_id},
               {"name", m.name},
               {"creation_timestamp_ms", Int64Json(m.creation_ms)},
               {"last_updated_timestamp_ms", Int64Json(m.updated_ms)},
               {"artifact_uri", m.artifact_uri},
               {"status", LoggedModelStatusName(m.status)}};
  if (!m.model_type.empty()) info["model_type"] = m.model_type;
  if (!m.source_run_id.empty()) info["source_run_id"] = m.source_run_id;
  if (!m.status_message.empty()) info["status_message"] = m.status_message;
  SetRepeated(info, "tags", TagsJson(m.tags));
  json data = json::object();
  SetRepeated(data, "params", TagsJson(m.params));
  return {{"info", info}, {"data", data}};
}

json ModelVersionJson(const ModelVersion& v) {
  json out = {{"name", v.name},
              {"version", std::to_string(v.version)},
              {"creation_timestamp", Int64Json(v.creation_ms)},
              {"last_updated_timestamp", Int64Json(v.updated_ms)},
              {"current_stage", v.current_stage},
              {"source", v.source},
              {"status", "READY"}};
  auto opt = [&](const char* field, const std::string& value) {
    if (!value.empty()) out[field] = value;
  };
  opt("description", v.description);
  opt("run_id", v.run_id);
  opt("run_link", v.run_link);
  opt("user_id", v.user_id);
  opt("model_id", v.model_id);
  SetRepeated(out, "tags", TagsJson(v.tags));
  SetRepeated(out, "aliases", v.aliases);
  return out;
}

json RegisteredModelJson(const RegisteredModel& m) {
  json out = {{"name", m.name},
              {"creation_timestamp", Int64Json(m.creation_ms)},
              {"last_updated_timestamp", Int64Json(m.updated_ms)}};
  if (!m.description.empty()) out["description"] = m.description;
  if (!m.latest_versions.empty()) {
    json latest = json::array();
    for (const auto& v : m.latest_versions) latest.push_back(ModelVersionJson(v));
    out["latest_versions"] = latest;
  }
  SetRepeated(out, "tags", TagsJson(m.tags));
  if (!m.aliases.empty()) {
    json aliases = json::array();
    for (const auto& [a, v] : m.aliases)
      aliases.push_back({{"alias", a}, {"version", std::to_string(v)}});
    out["aliases"] = aliases;
  }
  return out;
}

json SampledPointJson(const SampledPoint& p) {
  return {{"key", p.key},
          {"value", DoubleJson(p.value)},
          {"timestamp", Int64Json(p.timestamp_ms)},
          {"step", Int64Json(p.step)},
          {"run_id", p.run_id}};
}

}  // namespace ferry::tracker::mlflow
