#pragma once
// experiments/search over any TrackerStore: every experiment of the view is read from the store
// (experiments are few), then filtered with the run search's grammar (tracker/search.h,
// SearchTarget::kExperiments: name, creation_time, last_update_time, tags.<key>), ordered
// (default last_update_time DESC, then experiment_id) and paged with the search's tokens.

#include <string>
#include <vector>

#include "base/status.h"
#include "tracker/tracker_store.h"

namespace ferry::tracker::mlflow {

struct ExperimentSearch {
  ViewType view = ViewType::kActiveOnly;
  std::string filter;
  std::vector<std::string> order_by;
  int max_results = 1000;
  std::string page_token;
};

Result<Page<Experiment>> SearchExperiments(TrackerStore& store, const ExperimentSearch& search);

}  // namespace ferry::tracker::mlflow
