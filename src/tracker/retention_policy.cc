#include "tracker/retention_policy.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "base/strings.h"

namespace ferry::tracker {
namespace {

constexpr std::string_view kKeepLast = "keep_last";
constexpr std::string_view kKeepBest = "keep_best";
constexpr std::string_view kMetric = "metric";
constexpr std::string_view kGoal = "goal";

// A decimal count 0..kMaxRetentionCount, digits only.
std::optional<int64_t> ParseCount(std::string_view s) {
  if (s.empty() || s.size() > 7) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  auto v = ParseUint64(s);
  if (!v || *v > static_cast<uint64_t>(kMaxRetentionCount)) return std::nullopt;
  return static_cast<int64_t>(*v);
}

std::optional<RetentionGoal> ParseGoal(std::string_view s) {
  if (s == "min") return RetentionGoal::kMin;
  if (s == "max") return RetentionGoal::kMax;
  return std::nullopt;
}

// Checkpoints are ordered by (step, name); "newer" means later in that order.
struct Entry {
  size_t index;
  int64_t step;
  std::optional<double> value;  // of the metric at the checkpoint's step
};

// The value of the latest point at a step <= `step` (highest step, then latest timestamp).
std::optional<double> ValueAt(const std::vector<const MetricPoint*>& sorted, int64_t step) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), step,
                             [](int64_t s, const MetricPoint* p) { return s < p->step; });
  if (it == sorted.begin()) return std::nullopt;
  double v = (*std::prev(it))->value;
  if (std::isnan(v)) return std::nullopt;
  return v;
}

}  // namespace

bool RetentionPolicy::Active() const {
  if (!keep_last && !keep_best) return false;
  if (keep_best.value_or(0) > 0 && metric.empty()) return false;
  return true;
}

std::string RetentionPolicy::Describe() const {
  std::string s = "keep the last " + std::to_string(keep_last.value_or(0));
  if (keep_best.value_or(0) > 0) {
    s += " and the best " + std::to_string(*keep_best) + " by " + metric +
         (goal == RetentionGoal::kMin ? " (min)" : " (max)");
  }
  return s;
}

Status ValidateRetentionTag(const Tag& tag) {
  if (!StartsWith(tag.key, kRetentionTagPrefix)) return Status();
  std::string_view name = std::string_view(tag.key).substr(kRetentionTagPrefix.size());
  std::string_view v = tag.value;
  auto bad = [&](std::string_view what) {
    return InvalidArgument("experiment tag '" + tag.key + "': '" + tag.value + "' is not " +
                           std::string(what));
  };
  if (name == kKeepLast || name == kKeepBest) {
    if (!v.empty() && !ParseCount(v)) {
      return bad("a count (an integer from 0 to " + std::to_string(kMaxRetentionCount) + ")");
    }
    return Status();
  }
  if (name == kGoal) {
    if (!v.empty() && !ParseGoal(v)) return bad("'min' or 'max'");
    return Status();
  }
  if (name == kMetric) return Status();  // any metric key (MLflow's key rules apply when logged)
  return InvalidArgument("experiment tag '" + tag.key +
                         "' is not a retention setting (ferry.retention.keep_last, keep_best, "
                         "metric or goal)");
}

std::optional<RetentionPolicy> RetentionPolicyFromTags(const std::vector<Tag>& tags) {
  RetentionPolicy p;
  bool any = false;
  for (const Tag& t : tags) {
    if (!StartsWith(t.key, kRetentionTagPrefix) || t.value.empty()) continue;
    std::string_view name = std::string_view(t.key).substr(kRetentionTagPrefix.size());
    if (name == kKeepLast) {
      p.keep_last = ParseCount(t.value);
      any |= p.keep_last.has_value();
    } else if (name == kKeepBest) {
      p.keep_best = ParseCount(t.value);
      any |= p.keep_best.has_value();
    } else if (name == kMetric) {
      p.metric = t.value;
      any = true;
    } else if (name == kGoal) {
      p.goal = ParseGoal(t.value).value_or(RetentionGoal::kMin);
      any = true;
    }
  }
  if (!any) return std::nullopt;
  return p;
}

std::optional<int64_t> CheckpointStep(std::string_view name) {
  size_t end = name.size();
  size_t begin = end;
  while (begin > 0 && name[begin - 1] >= '0' && name[begin - 1] <= '9') --begin;
  if (begin == end) return std::nullopt;
  std::string_view digits = name.substr(begin);
  while (digits.size() > 1 && digits[0] == '0') digits.remove_prefix(1);
  if (digits.size() > 18) return std::nullopt;
  auto v = ParseUint64(digits);
  if (!v) return std::nullopt;
  return static_cast<int64_t>(*v);
}

std::vector<RetentionDecision> DecideRetention(const std::vector<CheckpointState>& checkpoints,
                                               const std::vector<MetricPoint>& history,
                                               const RetentionPolicy& policy) {
  std::vector<RetentionDecision> out;
  out.reserve(checkpoints.size());
  for (const CheckpointState& c : checkpoints) out.push_back({c.name, true, ""});
  if (!policy.Active()) {
    for (auto& d : out) d.reason = "no active retention policy";
    return out;
  }
  const bool by_metric = policy.keep_best.value_or(0) > 0;
  std::vector<const MetricPoint*> points;
  for (const MetricPoint& p : history) {
    if (p.key == policy.metric) points.push_back(&p);
  }
  std::sort(points.begin(), points.end(), [](const MetricPoint* a, const MetricPoint* b) {
    return a->step != b->step ? a->step < b->step : a->timestamp_ms < b->timestamp_ms;
  });

  std::vector<Entry> entries;  // checkpoints with a step, oldest first
  for (size_t i = 0; i < checkpoints.size(); ++i) {
    auto step = CheckpointStep(checkpoints[i].name);
    if (!step) {
      out[i].reason = "no step in its name";
      continue;
    }
    entries.push_back({i, *step, by_metric ? ValueAt(points, *step) : std::nullopt});
  }
  std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    return a.step != b.step ? a.step < b.step
                            : checkpoints[a.index].name < checkpoints[b.index].name;
  });

  // Reasons to keep, strongest first; the first that applies is the one reported.
  std::map<size_t, std::string> kept;
  auto keep = [&](size_t index, std::string reason) { kept.emplace(index, std::move(reason)); };
  if (!entries.empty()) keep(entries.back().index, "the newest");
  for (const Entry& e : entries) {
    if (checkpoints[e.index].uploading) keep(e.index, "being uploaded");
  }
  const int64_t last = policy.keep_last.value_or(0);
  for (int64_t n = 0; n < last && n < static_cast<int64_t>(entries.size()); ++n) {
    keep(entries[entries.size() - 1 - n].index, "among the last " + std::to_string(last));
  }
  if (by_metric) {
    std::vector<const Entry*> ranked;
    for (const Entry& e : entries) {
      if (e.value) {
        ranked.push_back(&e);
      } else {
        keep(e.index, "no " + policy.metric + " at or before step " + std::to_string(e.step));
      }
    }
    // Best first; equal values: the newer checkpoint first; then the listing's order. The last
    // key makes the order total, so std::sort is stable here (std::stable_sort's libstdc++ 12
    // buffer is deprecated under clang 19, which builds the fuzzers with -Werror).
    std::sort(ranked.begin(), ranked.end(), [&](const Entry* a, const Entry* b) {
      if (*a->value != *b->value) {
        return policy.goal == RetentionGoal::kMin ? *a->value < *b->value : *a->value > *b->value;
      }
      if (a->step != b->step) return a->step > b->step;
      return a->index < b->index;
    });
    const size_t best = static_cast<size_t>(*policy.keep_best);
    for (size_t n = 0; n < best && n < ranked.size(); ++n) {
      keep(ranked[n]->index, "among the best " + std::to_string(best) + " by " + policy.metric);
    }
  }
  std::string deleted_reason = "not among the last " + std::to_string(last);
  if (by_metric) {
    deleted_reason += " or the best " + std::to_string(*policy.keep_best) + " by " + policy.metric;
  }
  for (const Entry& e : entries) {
    auto it = kept.find(e.index);
    if (it != kept.end()) {
      out[e.index].reason = it->second;
    } else {
      out[e.index].keep = false;
      out[e.index].reason = deleted_reason;
    }
  }
  return out;
}

}  // namespace ferry::tracker
