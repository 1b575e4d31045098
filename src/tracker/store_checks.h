#pragma once
// What every TrackerStore backend (tracker/memory, tracker/sqlite, tracker/postgres) checks and
// decides the same way before and around its own storage, so the three answer alike with the
// same words: the request checks of CreateExperiment/CreateRun/LogBatch, the run name a new run
// gets, params' immutability, search page tokens, experiment filters, run order and the
// lifecycle views. A backend calls these; it does not restate them.

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/status.h"
#include "tracker/model.h"
#include "tracker/tracker_store.h"

namespace ferry::tracker::checks {

// kInvalidArgument "<op>: a tag key is empty" when one of `tags` has no key.
Status TagKeys(const char* op, const std::vector<Tag>& tags);

// The value of the mlflow.runName tag among `req.tags` ("" when absent), after checking every
// tag key and that it agrees with `req.run_name` when both are given.
Result<std::string> CreateRunNameTag(const CreateRunRequest& req);

// The name a new run gets: the request's, else its mlflow.runName tag, else a generated one.
std::string ChooseRunName(const CreateRunRequest& req, const std::string& name_tag,
                          std::mt19937_64& rng);

// Every key of a LogBatch's metrics, params and tags is non-empty.
Status BatchKeys(const std::vector<MetricPoint>& metrics, const std::vector<Param>& params,
                 const std::vector<Tag>& tags);

// The params of a LogBatch as the backend writes them (one per key), after the immutability
// rule: a key logged twice in the batch, or already stored (`stored(key)`), with another value
// refuses the whole batch (kInvalidArgument naming the param and the run).
using StoredParam = std::function<Result<std::optional<std::string>>(const std::string& key)>;
Result<std::map<std::string, std::string>> NewParams(const std::string& run_id,
                                                     const std::vector<Param>& params,
                                                     const StoredParam& stored);

// A search's offset page token ("" = 0); kInvalidArgument "<op>: invalid page token '...'".
Result<size_t> OffsetToken(const char* op, const std::string& token);

// kInvalidArgument "<op>: max_results must be >= 1" when it is not.
Status MaxResults(const char* op, int max_results);

// Whether experiment `e` meets the name pattern and tag conditions of `q` (not its view).
bool ExperimentMatches(const Experiment& e, const ExperimentQuery& q);

// Whether an object in lifecycle `stage` is seen by a search with `view`.
bool InView(LifecycleStage stage, ViewType view);

// Runs in the order ScanRuns returns them: newest start first, then run id.
void SortRuns(std::vector<Run>& runs);

// kFailedPrecondition "<op>: <what> '<id>' is deleted".
Status Deleted(const char* op, const char* what, const std::string& id);

}  // namespace ferry::tracker::checks
