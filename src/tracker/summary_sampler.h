#pragma once
// GetMetricHistoryBulkInterval over precomputed summaries (metric_sampling.h's rule), for the
// backends that store them (tracker/sqlite, tracker/postgres): the same merge of summary
// buckets, whatever reads them. `Source` gives, for one run and key:
//   Result<std::optional<int64_t>> EdgeStep(bool last)        first/last step, nullopt if none
//   Status ForEachPoint(int64_t lo, int64_t hi, fn(const MetricPoint&))       raw points
//   Status ForEachBucket(int level, int64_t lo, int64_t hi, fn(int64_t b, const Summary&))
// (levels index sampling::kLevelWidths).

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "base/status.h"
#include "tracker/metric_sampling.h"

namespace ferry::tracker::sampling {

// ceil(a / b) for b > 0.
inline int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// The summary of steps [a, b] from the levels <= `level` of `src` (-1: raw points): the whole
// buckets of `level` inside [a, b], the two ends from finer levels.
template <typename Source>
Result<Summary> RangeSummary(Source& src, int64_t a, int64_t b, int level) {
  Summary s;
  if (a > b) return s;
  if (level < 0) {
    FERRY_RETURN_IF_ERROR(src.ForEachPoint(a, b, [&](const MetricPoint& p) { s.Add(p); }));
    return s;
  }
  int64_t w = kLevelWidths[static_cast<size_t>(level)];
  int64_t full_lo = CeilDiv(a, w), full_hi = FloorDiv(b, w) - (FloorDiv(b, w) * w + w - 1 > b);
  if (full_lo > full_hi) return RangeSummary(src, a, b, level - 1);
  FERRY_RETURN_IF_ERROR(
      src.ForEachBucket(level, full_lo, full_hi, [&](int64_t, const Summary& x) { s.Merge(x); }));
  FERRY_ASSIGN_OR_RETURN(Summary left, RangeSummary(src, a, full_lo * w - 1, level - 1));
  FERRY_ASSIGN_OR_RETURN(Summary right, RangeSummary(src, (full_hi + 1) * w, b, level - 1));
  s.Merge(left);
  s.Merge(right);
  return s;
}

// The sampled points of [start_step, end_step] (ClipToSteps), in
// (step, timestamp) order; empty when the key has no point there.
template <typename Source>
Result<std::vector<MetricPoint>> SampleFromSummaries(Source& src, std::optional<int64_t> start_step,
                                                     std::optional<int64_t> end_step,
                                                     int max_results) {
  FERRY_ASSIGN_OR_RETURN(auto first, src.EdgeStep(false));
  FERRY_ASSIGN_OR_RETURN(auto last, src.EdgeStep(true));
  if (!first || !last) return std::vector<MetricPoint>{};
  auto range = ClipToSteps(start_step, end_step, *first, *last);
  if (!range) return std::vector<MetricPoint>{};
  const auto [lo, hi] = *range;
  BucketPlan plan = PlanBuckets(lo, hi, max_results);
  const int64_t v = plan.bucket_width;
  std::map<int64_t, Summary> buckets;
  if (plan.level_index < 0) {
    FERRY_RETURN_IF_ERROR(src.ForEachPoint(
        lo, hi, [&](const MetricPoint& p) { buckets[FloorDiv(p.step, v)].Add(p); }));
  } else {
    const int64_t w = plan.level_width;
    int64_t full_lo = CeilDiv(lo, w);
    int64_t full_hi = FloorDiv(hi, w) - (FloorDiv(hi, w) * w + w - 1 > hi);
    if (full_lo <= full_hi) {
      FERRY_RETURN_IF_ERROR(src.ForEachBucket(
          plan.level_index, full_lo, full_hi,
          [&](int64_t b, const Summary& s) { buckets[FloorDiv(b * w, v)].Merge(s); }));
      FERRY_ASSIGN_OR_RETURN(Summary left,
                             RangeSummary(src, lo, full_lo * w - 1, plan.level_index - 1));
      FERRY_ASSIGN_OR_RETURN(Summary right,
                             RangeSummary(src, (full_hi + 1) * w, hi, plan.level_index - 1));
      if (left.count > 0) buckets[FloorDiv(lo, v)].Merge(left);
      if (right.count > 0) buckets[FloorDiv(hi, v)].Merge(right);
    } else {
      // [lo, hi] is shorter than 2w: cut it at the answer buckets' edges.
      for (int64_t a = lo; a <= hi;) {
        int64_t k = FloorDiv(a, v);
        int64_t b = (k + 1) * v - 1 < hi ? (k + 1) * v - 1 : hi;
        FERRY_ASSIGN_OR_RETURN(Summary s, RangeSummary(src, a, b, plan.level_index - 1));
        if (s.count > 0) buckets[k].Merge(s);
        if (b == hi) break;
        a = b + 1;
      }
    }
  }
  std::vector<Summary> ordered;
  ordered.reserve(buckets.size());
  for (auto& [k, s] : buckets) ordered.push_back(s);
  return PickPoints(ordered);
}

}  // namespace ferry::tracker::sampling
