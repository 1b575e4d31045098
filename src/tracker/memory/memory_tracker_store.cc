#include "tracker/memory/memory_tracker_store.h"

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "base/mutex.h"
#include "base/strings.h"
#include "tracker/metric_batch.h"
#include "tracker/metric_sampling.h"
#include "tracker/store_checks.h"
#include "tracker/store_rules.h"

namespace ferry::tracker {
namespace {

Status Precondition(std::string m) { return Status(StatusCode::kFailedPrecondition, std::move(m)); }
Status Exists(std::string m) { return Status(StatusCode::kAlreadyExists, std::move(m)); }

struct PointOrder {
  bool operator()(const MetricPoint& a, const MetricPoint& b) const {
    return rules::PointBefore(a, b);
  }
};
using PointSet = std::set<MetricPoint, PointOrder>;  // keys left empty

struct ExperimentData {
  Experiment exp;  // exp.tags unused: see tags
  std::map<std::string, std::string> tags;
};

struct RunData {
  RunInfo info;
  std::map<std::string, std::string> params, tags;
  std::map<std::string, PointSet> metrics;
};

std::vector<Tag> ToTags(const std::map<std::string, std::string>& m) {
  std::vector<Tag> out;
  for (const auto& [k, v] : m) out.push_back({k, v});
  return out;
}

using checks::InView;

using DocMap = std::map<std::pair<std::string, std::string>, std::string, std::less<>>;

// A transaction over a DocMap: writes go to an overlay (nullopt: deleted) applied at commit, so
// a body that fails leaves the map as it was.
class MemoryDocTxn final : public DocTxn {
 public:
  MemoryDocTxn(const DocMap& docs, bool writable) : docs_(docs), writable_(writable) {}

  Result<std::optional<std::string>> Get(std::string_view kind, std::string_view key) override {
    auto k = std::make_pair(std::string(kind), std::string(key));
    if (auto it = overlay_.find(k); it != overlay_.end()) return it->second;
    if (auto it = docs_.find(k); it != docs_.end()) return std::optional<std::string>(it->second);
    return std::optional<std::string>();
  }
  Status Put(std::string_view kind, std::string_view key, std::string_view doc) override {
    if (!writable_) return Precondition("Put in a read transaction");
    overlay_[{std::string(kind), std::string(key)}] = std::string(doc);
    return Status();
  }
  Status Delete(std::string_view kind, std::string_view key) override {
    if (!writable_) return Precondition("Delete in a read transaction");
    overlay_[{std::string(kind), std::string(key)}] = std::nullopt;
    return Status();
  }
  Result<std::vector<std::pair<std::string, std::string>>> Scan(
      std::string_view kind, std::string_view key_prefix) override {
    std::map<std::string, std::string> merged;
    auto in = [&](const std::pair<std::string, std::string>& k) {
      return k.first == kind && k.second.starts_with(key_prefix);
    };
    for (auto it = docs_.lower_bound(std::make_pair(std::string(kind), std::string(key_prefix)));
         it != docs_.end() && in(it->first); ++it) {
      merged[it->first.second] = it->second;
    }
    for (const auto& [k, v] : overlay_) {
      if (!in(k)) continue;
      if (v) {
        merged[k.second] = *v;
      } else {
        merged.erase(k.second);
      }
    }
    return std::vector<std::pair<std::string, std::string>>(merged.begin(), merged.end());
  }
  void ApplyTo(DocMap& docs) {
    for (auto& [k, v] : overlay_) {
      if (v) {
        docs[k] = std::move(*v);
      } else {
        docs.erase(k);
      }
    }
  }

 private:
  const DocMap& docs_;
  const bool writable_;
  std::map<std::pair<std::string, std::string>, std::optional<std::string>> overlay_;
};

class MemoryTrackerStore final : public TrackerStore {
 public:
  MemoryTrackerStore() : rng_(std::random_device{}()) {
    ExperimentData d;
    d.exp.id = "0";
    d.exp.name = "Default";
    d.exp.creation_time = d.exp.last_update_time = rules::NowMs();
    experiments_[0] = std::move(d);
  }

  Result<std::string> CreateExperiment(const std::string& name,
                                       const std::string& artifact_location,
                                       const std::vector<Tag>& tags) override {
    if (name.empty()) return InvalidArgument("CreateExperiment: the name is empty");
    FERRY_RETURN_IF_ERROR(checks::TagKeys("CreateExperiment", tags));
    MutexLock lock(mu_);
    if (FindByName(name)) {
      return Exists("CreateExperiment: an experiment named '" + name + "' already exists");
    }
    int64_t id = next_experiment_id_++;
    ExperimentData d;
    d.exp.id = std::to_string(id);
    d.exp.name = name;
    d.exp.artifact_location = artifact_location;
    d.exp.creation_time = d.exp.last_update_time = rules::NowMs();
    for (const auto& t : tags) d.tags[t.key] = t.value;
    experiments_[id] = std::move(d);
    return std::to_string(id);
  }

  Result<Experiment> GetExperiment(const std::string& id) override {
    MutexLock lock(mu_);
    ExperimentData* d = FindExperiment(id);
    if (!d) return NotFound("GetExperiment: no experiment with id '" + id + "'");
    return Out(*d);
  }

  Result<Experiment> GetExperimentByName(const std::string& name) override {
    MutexLock lock(mu_);
    ExperimentData* d = FindByName(name);
    if (!d) return NotFound("GetExperimentByName: no experiment named '" + name + "'");
    return Out(*d);
  }

  Result<Page<Experiment>> SearchExperiments(const ExperimentQuery& q) override {
    FERRY_RETURN_IF_ERROR(checks::MaxResults("SearchExperiments", q.max_results));
    FERRY_ASSIGN_OR_RETURN(size_t offset, checks::OffsetToken("SearchExperiments", q.page_token));
    std::vector<Experiment> all;
    {
      MutexLock lock(mu_);
      for (const auto& [id, d] : experiments_) {
        if (!InView(d.exp.stage, q.view)) continue;
        Experiment e = Out(d);
        if (checks::ExperimentMatches(e, q)) all.push_back(std::move(e));
      }
    }
    return rules::SortAndPageExperiments(std::move(all), offset, q.max_results);
  }

  Status RenameExperiment(const std::string& id, const std::string& new_name) override {
    if (new_name.empty()) return InvalidArgument("RenameExperiment: the new name is empty");
    MutexLock lock(mu_);
    ExperimentData* d = FindExperiment(id);
    if (!d) return NotFound("RenameExperiment: no experiment with id '" + id + "'");
    if (d->exp.stage != LifecycleStage::kActive) {
      return checks::Deleted("RenameExperiment", "experiment", id);
    }
    ExperimentData* other = FindByName(new_name);
    if (other && other != d) {
      return Exists("RenameExperiment: an experiment named '" + new_name + "' already exists");
    }
    d->exp.name = new_name;
    d->exp.last_update_time = rules::NowMs();
    return Status();
  }

  Status SetExperimentStage(const std::string& id, LifecycleStage stage) override {
    MutexLock lock(mu_);
    ExperimentData* d = FindExperiment(id);
    if (!d) return NotFound("SetExperimentStage: no experiment with id '" + id + "'");
    d->exp.stage = stage;
    d->exp.last_update_time = rules::NowMs();
    for (auto& [run_id, r] : runs_) {
      if (r.info.experiment_id == d->exp.id) r.info.stage = stage;
    }
    return Status();
  }

  Status SetExperimentTag(const std::string& id, const Tag& tag) override {
    FERRY_RETURN_IF_ERROR(checks::TagKeys("SetExperimentTag", {tag}));
    MutexLock lock(mu_);
    ExperimentData* d = FindExperiment(id);
    if (!d) return NotFound("SetExperimentTag: no experiment with id '" + id + "'");
    if (d->exp.stage != LifecycleStage::kActive) {
      return checks::Deleted("SetExperimentTag", "experiment", id);
    }
    d->tags[tag.key] = tag.value;
    return Status();
  }

  Result<RunInfo> CreateRun(const CreateRunRequest& req) override {
    FERRY_ASSIGN_OR_RETURN(std::string name_tag, checks::CreateRunNameTag(req));
    MutexLock lock(mu_);
    ExperimentData* e = FindExperiment(req.experiment_id);
    if (!e) return NotFound("CreateRun: no experiment with id '" + req.experiment_id + "'");
    if (e->exp.stage != LifecycleStage::kActive) {
      return checks::Deleted("CreateRun", "experiment", req.experiment_id);
    }
    RunData r;
    r.info.run_id = rules::NewRunId(rng_);
    r.info.experiment_id = e->exp.id;
    r.info.run_name = checks::ChooseRunName(req, name_tag, rng_);
    r.info.user_id = req.user_id;
    r.info.start_time = req.start_time;
    r.info.artifact_uri = rules::RunArtifactUri(
        req.artifact_root.empty() ? e->exp.artifact_location : req.artifact_root, r.info.run_id);
    for (const auto& t : req.tags) r.tags[t.key] = t.value;
    r.tags[std::string(rules::kRunNameTag)] = r.info.run_name;
    RunInfo info = r.info;
    runs_[info.run_id] = std::move(r);
    return info;
  }

  Result<RunInfo> UpdateRun(const std::string& run_id, const RunUpdate& u) override {
    MutexLock lock(mu_);
    FERRY_ASSIGN_OR_RETURN(RunData * r, Writable("UpdateRun", run_id));
    if (u.status) r->info.status = *u.status;
    if (u.end_time) r->info.end_time = *u.end_time;
    if (u.run_name && !u.run_name->empty()) {
      r->info.run_name = *u.run_name;
      r->tags[std::string(rules::kRunNameTag)] = *u.run_name;
    }
    return r->info;
  }

  Result<Run> GetRun(const std::string& run_id) override {
    MutexLock lock(mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return NotFound("GetRun: no run with id '" + run_id + "'");
    return Out(it->second);
  }

  Status SetRunStage(const std::string& run_id, LifecycleStage stage) override {
    MutexLock lock(mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return NotFound("SetRunStage: no run with id '" + run_id + "'");
    it->second.info.stage = stage;
    return Status();
  }

  Status LogBatch(const std::string& run_id, const std::vector<MetricPoint>& metrics,
                  const std::vector<Param>& params, const std::vector<Tag>& tags) override {
    FERRY_RETURN_IF_ERROR(checks::BatchKeys(metrics, params, tags));
    MutexLock lock(mu_);
    FERRY_ASSIGN_OR_RETURN(RunData * r, Writable("LogBatch", run_id));
    FERRY_ASSIGN_OR_RETURN(
        auto new_params,
        checks::NewParams(run_id, params,
                          [&](const std::string& key) -> Result<std::optional<std::string>> {
                            auto old = r->params.find(key);
                            if (old == r->params.end()) return std::optional<std::string>();
                            return std::optional<std::string>(old->second);
                          }));
    r->params.merge(new_params);
    for (const auto& t : tags) {
      r->tags[t.key] = t.value;
      if (t.key == rules::kRunNameTag) r->info.run_name = t.value;
    }
    for (const auto& m : metrics) {
      MetricPoint p{.key = "",
                    .value = rules::CanonicalValue(m.value),
                    .timestamp_ms = m.timestamp_ms,
                    .step = m.step};
      r->metrics[m.key].insert(p);
    }
    return Status();
  }

  Status DeleteTag(const std::string& run_id, const std::string& key) override {
    MutexLock lock(mu_);
    FERRY_ASSIGN_OR_RETURN(RunData * r, Writable("DeleteTag", run_id));
    if (r->tags.erase(key) == 0) {
      return NotFound("DeleteTag: run '" + run_id + "' has no tag '" + key + "'");
    }
    return Status();
  }

  Result<std::vector<Run>> ScanRuns(const RunScan& scan) override {
    std::vector<Run> out;
    {
      MutexLock lock(mu_);
      for (const auto& [id, r] : runs_) {
        if (!InView(r.info.stage, scan.view)) continue;
        if (std::find(scan.experiment_ids.begin(), scan.experiment_ids.end(),
                      r.info.experiment_id) == scan.experiment_ids.end()) {
          continue;
        }
        out.push_back(Out(r));
      }
    }
    checks::SortRuns(out);
    return out;
  }

  Result<Page<MetricPoint>> GetMetricHistory(const std::string& run_id, const std::string& key,
                                             int max_results,
                                             const std::string& page_token) override {
    FERRY_RETURN_IF_ERROR(checks::MaxResults("GetMetricHistory", max_results));
    FERRY_ASSIGN_OR_RETURN(auto after, metrics::ParseHistoryToken(page_token));
    MutexLock lock(mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return NotFound("GetMetricHistory: no run with id '" + run_id + "'");
    Page<MetricPoint> page;
    auto m = it->second.metrics.find(key);
    if (m == it->second.metrics.end()) return page;
    auto p = m->second.begin();
    if (after) {  // the first point past the cursor (the set's order is the cursor's)
      p = m->second.upper_bound(
          {"", rules::FromOrderedBits(after->value_bits), after->timestamp_ms, after->step});
    }
    for (; p != m->second.end(); ++p) {
      if (static_cast<int>(page.items.size()) == max_results) {
        page.next_page_token = metrics::HistoryToken(page.items.back());
        break;
      }
      page.items.push_back(*p);
      page.items.back().key = key;
    }
    return page;
  }

  Result<std::vector<SampledPoint>> GetMetricHistoryBulkInterval(
      const std::vector<std::string>& run_ids, const std::string& key,
      std::optional<int64_t> start_step, std::optional<int64_t> end_step,
      int max_results) override {
    FERRY_RETURN_IF_ERROR(checks::MaxResults("GetMetricHistoryBulkInterval", max_results));
    std::vector<SampledPoint> out;
    MutexLock lock(mu_);
    for (const auto& run_id : run_ids) {
      auto it = runs_.find(run_id);
      if (it == runs_.end()) {
        return NotFound("GetMetricHistoryBulkInterval: no run with id '" + run_id + "'");
      }
      auto m = it->second.metrics.find(key);
      if (m == it->second.metrics.end() || m->second.empty()) continue;
      auto range = sampling::ClipToSteps(start_step, end_step, m->second.begin()->step,
                                         m->second.rbegin()->step);
      if (!range) continue;
      const auto [lo, hi] = *range;
      sampling::BucketPlan plan = sampling::PlanBuckets(lo, hi, max_results);
      std::vector<sampling::Summary> buckets;
      int64_t current = 0;
      MetricPoint from{.value = -std::numeric_limits<double>::infinity(),
                       .timestamp_ms = std::numeric_limits<int64_t>::min(),
                       .step = lo};
      for (auto p = m->second.lower_bound(from); p != m->second.end() && p->step <= hi; ++p) {
        int64_t b = sampling::FloorDiv(p->step, plan.bucket_width);
        if (buckets.empty() || b != current) buckets.emplace_back(), current = b;
        buckets.back().Add(*p);
      }
      for (const auto& p : sampling::PickPoints(buckets)) {
        out.push_back({run_id, key, p.step, p.value, p.timestamp_ms});
      }
    }
    return out;
  }

 private:
  ExperimentData* FindExperiment(const std::string& id) REQUIRES(mu_) {
    auto n = ParseUint64(id);
    if (!n || *n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return nullptr;
    auto it = experiments_.find(static_cast<int64_t>(*n));
    return it == experiments_.end() ? nullptr : &it->second;
  }
  ExperimentData* FindByName(const std::string& name) REQUIRES(mu_) {
    for (auto& [id, d] : experiments_) {
      if (d.exp.name == name) return &d;
    }
    return nullptr;
  }
  // A run that may be written: kNotFound when unknown, kFailedPrecondition when deleted.
  Result<RunData*> Writable(const char* op, const std::string& run_id) REQUIRES(mu_) {
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return NotFound(std::string(op) + ": no run with id '" + run_id + "'");
    if (it->second.info.stage != LifecycleStage::kActive) {
      return checks::Deleted(op, "run", run_id);
    }
    return &it->second;
  }
  static Experiment Out(const ExperimentData& d) {
    Experiment e = d.exp;
    e.tags = ToTags(d.tags);
    return e;
  }
  static Run Out(const RunData& r) {
    Run out;
    out.info = r.info;
    out.params = ToTags(r.params);
    out.tags = ToTags(r.tags);
    for (const auto& [key, points] : r.metrics) {
      if (points.empty()) continue;
      out.latest_metrics.push_back(*points.rbegin());  // the set's order is "latest" last
      out.latest_metrics.back().key = key;
    }
    return out;
  }

  Status Transact(TxnMode mode, const DocBody& body) override {
    MutexLock lock(docs_mu_);
    MemoryDocTxn txn(docs_, mode == TxnMode::kWrite);
    FERRY_RETURN_IF_ERROR(body(txn));
    txn.ApplyTo(docs_);
    return Status();
  }

  Mutex docs_mu_;
  DocMap docs_ GUARDED_BY(docs_mu_);
  Mutex mu_;
  std::map<int64_t, ExperimentData> experiments_ GUARDED_BY(mu_);
  int64_t next_experiment_id_ GUARDED_BY(mu_) = 1;
  std::map<std::string, RunData> runs_ GUARDED_BY(mu_);
  std::mt19937_64 rng_ GUARDED_BY(mu_);
};

}  // namespace

std::shared_ptr<TrackerStore> MakeMemoryTrackerStore() {
  return std::make_shared<MemoryTrackerStore>();
}

}  // namespace ferry::tracker
