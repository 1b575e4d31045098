#include "tracker/memory/memory_tracker_store.h"

#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <set>

#include "base/mutex.h"
#include "base/strings.h"
#include "tracker/metric_sampling.h"
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

Result<size_t> ParseOffset(const std::string& token) {
  if (token.empty()) return size_t{0};
  auto v = ParseUint64(token);
  if (!v) return InvalidArgument("invalid page token '" + token + "'");
  return static_cast<size_t>(*v);
}

bool InView(LifecycleStage stage, ViewType view) {
  return view == ViewType::kAll ||
         (view == ViewType::kActiveOnly) == (stage == LifecycleStage::kActive);
}

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
    for (const auto& t : tags) {
      if (t.key.empty()) return InvalidArgument("CreateExperiment: a tag key is empty");
    }
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
    if (q.max_results < 1) return InvalidArgument("SearchExperiments: max_results must be >= 1");
    FERRY_ASSIGN_OR_RETURN(size_t offset, ParseOffset(q.page_token));
    std::vector<Experiment> all;
    {
      MutexLock lock(mu_);
      for (const auto& [id, d] : experiments_) {
        if (!InView(d.exp.stage, q.view)) continue;
        if (q.name_like && !rules::LikeMatch(d.exp.name, *q.name_like)) continue;
        bool tags_ok = std::all_of(q.tags_equal.begin(), q.tags_equal.end(), [&](const Tag& t) {
          auto it = d.tags.find(t.key);
          return it != d.tags.end() && it->second == t.value;
        });
        if (tags_ok) all.push_back(Out(d));
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
      return Precondition("RenameExperiment: experiment '" + id + "' is deleted");
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
    if (tag.key.empty()) return InvalidArgument("SetExperimentTag: the key is empty");
    MutexLock lock(mu_);
    ExperimentData* d = FindExperiment(id);
    if (!d) return NotFound("SetExperimentTag: no experiment with id '" + id + "'");
    if (d->exp.stage != LifecycleStage::kActive) {
      return Precondition("SetExperimentTag: experiment '" + id + "' is deleted");
    }
    d->tags[tag.key] = tag.value;
    return Status();
  }

  Result<RunInfo> CreateRun(const CreateRunRequest& req) override {
    std::string name_tag;
    for (const auto& t : req.tags) {
      if (t.key.empty()) return InvalidArgument("CreateRun: a tag key is empty");
      if (t.key == rules::kRunNameTag) name_tag = t.value;
    }
    if (!req.run_name.empty() && !name_tag.empty() && req.run_name != name_tag) {
      return InvalidArgument("CreateRun: run_name '" + req.run_name + "' differs from tag " +
                             std::string(rules::kRunNameTag) + " '" + name_tag + "'");
    }
    MutexLock lock(mu_);
    ExperimentData* e = FindExperiment(req.experiment_id);
    if (!e) return NotFound("CreateRun: no experiment with id '" + req.experiment_id + "'");
    if (e->exp.stage != LifecycleStage::kActive) {
      return Precondition("CreateRun: experiment '" + req.experiment_id + "' is deleted");
    }
    RunData r;
    r.info.run_id = rules::NewRunId(rng_);
    r.info.experiment_id = e->exp.id;
    r.info.run_name = !req.run_name.empty() ? req.run_name
                      : !name_tag.empty()   ? name_tag
                                            : rules::GenerateRunName(rng_);
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
    MutexLock lock(mu_);
    FERRY_ASSIGN_OR_RETURN(RunData * r, Writable("LogBatch", run_id));
    std::map<std::string, std::string> new_params;
    for (const auto& p : params) {
      if (p.key.empty()) return InvalidArgument("LogBatch: a param key is empty");
      auto old = r->params.find(p.key);
      auto batch = new_params.find(p.key);
      if ((old != r->params.end() && old->second != p.value) ||
          (batch != new_params.end() && batch->second != p.value)) {
        return InvalidArgument("LogBatch: param '" + p.key + "' of run '" + run_id +
                               "' already has another value (params are immutable)");
      }
      new_params[p.key] = p.value;
    }
    for (const auto& m : metrics) {
      if (m.key.empty()) return InvalidArgument("LogBatch: a metric key is empty");
    }
    for (const auto& t : tags) {
      if (t.key.empty()) return InvalidArgument("LogBatch: a tag key is empty");
    }
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
    std::sort(out.begin(), out.end(), [](const Run& a, const Run& b) {
      if (a.info.start_time != b.info.start_time) return a.info.start_time > b.info.start_time;
      return a.info.run_id < b.info.run_id;
    });
    return out;
  }

  Result<Page<MetricPoint>> GetMetricHistory(const std::string& run_id, const std::string& key,
                                             int max_results,
                                             const std::string& page_token) override {
    if (max_results < 1) return InvalidArgument("GetMetricHistory: max_results must be >= 1");
    FERRY_ASSIGN_OR_RETURN(size_t offset, ParseOffset(page_token));
    MutexLock lock(mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return NotFound("GetMetricHistory: no run with id '" + run_id + "'");
    Page<MetricPoint> page;
    auto m = it->second.metrics.find(key);
    if (m == it->second.metrics.end()) return page;
    size_t i = 0;
    for (const auto& p : m->second) {
      if (i >= offset + static_cast<size_t>(max_results)) {
        page.next_page_token = std::to_string(i);
        break;
      }
      if (i++ < offset) continue;
      page.items.push_back(p);
      page.items.back().key = key;
    }
    return page;
  }

  Result<std::vector<SampledPoint>> GetMetricHistoryBulkInterval(
      const std::vector<std::string>& run_ids, const std::string& key,
      std::optional<int64_t> start_step, std::optional<int64_t> end_step,
      int max_results) override {
    if (max_results < 1) {
      return InvalidArgument("GetMetricHistoryBulkInterval: max_results must be >= 1");
    }
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
      return Precondition(std::string(op) + ": run '" + run_id + "' is deleted");
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
