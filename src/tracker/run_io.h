#pragma once
// A run's inputs and outputs (MLflow's runs/log-inputs and runs/outputs; docs/semantics/mlflow.md,
// "Datasets, inputs and outputs"): the datasets a run read (`mlflow.log_input`), the logged
// models it read, and the logged models it produced at a step. One document of kind "run_io"
// per run (tracker/doc_txn.h), kept in MLflow's own JSON shape, since the tracker only stores
// and returns them:
//   inputs  = {"dataset_inputs": [{"tags": [{key, value}], "dataset": {name, digest, source_type,
//              source, schema?, profile?}}], "model_inputs": [{"model_id"}]}
//   outputs = {"model_outputs": [{"model_id", "step"}]}
// A dataset logged again (same name and digest) is one input with the union of its tags; a
// model input or output logged again is one entry. Logging to a deleted run is
// kFailedPrecondition, to an unknown one kNotFound; a model output must name a logged model.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "tracker/tracker_store.h"

namespace ferry::tracker {

struct RunIo {
  nlohmann::json inputs = nlohmann::json::object();
  nlohmann::json outputs = nlohmann::json::object();
};

// `datasets`: an array of DatasetInput, `models` of ModelInput (either may be null or empty).
Status LogRunInputs(TrackerStore& store, const std::string& run_id, const nlohmann::json& datasets,
                    const nlohmann::json& models);
// `models`: an array of ModelOutput ({model_id, step}).
Status LogRunOutputs(TrackerStore& store, const std::string& run_id, const nlohmann::json& models);
// Each run's inputs and outputs (empty objects for a run with none), in one read.
Result<std::map<std::string, RunIo>> GetRunIo(TrackerStore& store,
                                              const std::vector<std::string>& run_ids);

}  // namespace ferry::tracker
