#include "tracker/store_checks.h"

#include <algorithm>

#include "base/strings.h"
#include "tracker/search.h"
#include "tracker/store_rules.h"

namespace ferry::tracker::checks {

Status TagKeys(const char* op, const std::vector<Tag>& tags) {
  for (const auto& t : tags) {
    if (t.key.empty()) return InvalidArgument(std::string(op) + ": a tag key is empty");
  }
  return Status();
}

Result<std::string> CreateRunNameTag(const CreateRunRequest& req) {
  FERRY_RETURN_IF_ERROR(TagKeys("CreateRun", req.tags));
  std::string name_tag;
  for (const auto& t : req.tags) {
    if (t.key == rules::kRunNameTag) name_tag = t.value;
  }
  if (!req.run_name.empty() && !name_tag.empty() && req.run_name != name_tag) {
    return InvalidArgument("CreateRun: run_name '" + req.run_name + "' differs from tag " +
                           std::string(rules::kRunNameTag) + " '" + name_tag + "'");
  }
  return name_tag;
}

std::string ChooseRunName(const CreateRunRequest& req, const std::string& name_tag,
                          std::mt19937_64& rng) {
  if (!req.run_name.empty()) return req.run_name;
  if (!name_tag.empty()) return name_tag;
  return rules::GenerateRunName(rng);
}

Status BatchKeys(const std::vector<MetricPoint>& metrics, const std::vector<Param>& params,
                 const std::vector<Tag>& tags) {
  for (const auto& m : metrics) {
    if (m.key.empty()) return InvalidArgument("LogBatch: a metric key is empty");
  }
  for (const auto& p : params) {
    if (p.key.empty()) return InvalidArgument("LogBatch: a param key is empty");
  }
  return TagKeys("LogBatch", tags);
}

Result<std::map<std::string, std::string>> NewParams(const std::string& run_id,
                                                     const std::vector<Param>& params,
                                                     const StoredParam& stored) {
  std::map<std::string, std::string> batch;
  for (const auto& p : params) {
    auto [it, inserted] = batch.emplace(p.key, p.value);
    bool conflict = !inserted && it->second != p.value;
    if (!conflict && inserted) {
      FERRY_ASSIGN_OR_RETURN(std::optional<std::string> old, stored(p.key));
      conflict = old && *old != p.value;
    }
    if (conflict) {
      return InvalidArgument("LogBatch: param '" + p.key + "' of run '" + run_id +
                             "' already has another value (params are immutable)");
    }
  }
  return batch;
}

Result<size_t> OffsetToken(const char* op, const std::string& token) {
  if (token.empty()) return size_t{0};
  auto v = ParseUint64(token);
  if (!v) return InvalidArgument(std::string(op) + ": invalid page token '" + token + "'");
  return static_cast<size_t>(*v);
}

Status MaxResults(const char* op, int max_results) {
  if (max_results < 1) return InvalidArgument(std::string(op) + ": max_results must be >= 1");
  return Status();
}

bool ExperimentMatches(const Experiment& e, const ExperimentQuery& q) {
  if (q.name_like && !LikeMatch(e.name, *q.name_like, /*ignore_case=*/false)) return false;
  return std::all_of(q.tags_equal.begin(), q.tags_equal.end(), [&](const Tag& t) {
    return std::find(e.tags.begin(), e.tags.end(), t) != e.tags.end();
  });
}

bool InView(LifecycleStage stage, ViewType view) {
  return view == ViewType::kAll ||
         (view == ViewType::kActiveOnly) == (stage == LifecycleStage::kActive);
}

void SortRuns(std::vector<Run>& runs) {
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) {
    if (a.info.start_time != b.info.start_time) return a.info.start_time > b.info.start_time;
    return a.info.run_id < b.info.run_id;
  });
}

Status Deleted(const char* op, const char* what, const std::string& id) {
  return Status(StatusCode::kFailedPrecondition,
                std::string(op) + ": " + what + " '" + id + "' is deleted");
}

}  // namespace ferry::tracker::checks
