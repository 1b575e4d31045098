#pragma once
// The tracker's model as MLflow's JSON (docs/semantics/mlflow.md, "Answers"): int64 fields as
// numbers, non-finite doubles as "NaN"/"Infinity"/"-Infinity", enums by name. Errors, statuses
// and the number rules themselves are tracker/wire's, shared with the artifact API.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "server/http_types.h"
#include "tracker/logged_models.h"
#include "tracker/model.h"
#include "tracker/registry.h"
#include "tracker/run_io.h"
#include "tracker/wire/mlflow_wire.h"

namespace ferry::tracker::mlflow {

using wire::DoubleJson;
using wire::Int64Json;
using wire::OkJson;
using wire::Respond;
using wire::SetRepeated;
nlohmann::json TagsJson(const std::vector<Tag>& tags);
nlohmann::json ExperimentJson(const Experiment& e);
nlohmann::json RunInfoJson(const RunInfo& info);
// `io`: the run's inputs and outputs (tracker/run_io.h); null answers none.
nlohmann::json RunJson(const Run& run, const RunIo* io = nullptr);
// {"info": {model_id, experiment_id, name, creation_timestamp_ms, last_updated_timestamp_ms,
// artifact_uri, status, model_type?, source_run_id?, status_message?, tags?},
// "data": {"params"?}} as MLflow 3 writes a LoggedModel (empty fields omitted).
nlohmann::json LoggedModelJson(const LoggedModel& m);
// MLflow's ModelVersion ({name, version (a string), creation_timestamp, last_updated_timestamp,
// current_stage, source, status "READY", run_id?, description?, tags?, aliases?, model_id?...})
// and RegisteredModel ({name, creation_timestamp, last_updated_timestamp, description?,
// latest_versions?, tags?, aliases?: [{alias, version}]}); empty fields omitted.
nlohmann::json ModelVersionJson(const ModelVersion& v);
nlohmann::json RegisteredModelJson(const RegisteredModel& m);
nlohmann::json MetricJson(const MetricPoint& m);
nlohmann::json SampledPointJson(const SampledPoint& p);

// Errors and statuses are tracker/wire's: wire::Error(status), wire::Error(http, code, message).

}  // namespace ferry::tracker::mlflow
