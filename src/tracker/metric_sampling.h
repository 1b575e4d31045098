#pragma once
// The downsampling rule of GetMetricHistoryBulkInterval, shared by every backend so they answer
// alike (header-only; tracker/memory computes it from raw points, tracker/sqlite from its
// precomputed per-bucket summaries).
//
// For one run and key, with [lo, hi] the requested steps clipped to the key's first and last
// step (ClipToSteps: a request for [-2^63, 2^63-1] over steps 0..99 is [0, 99], so it returns
// all 100 points as MLflow does, and no bucket arithmetic ever spans more than the data):
//  1. n = max(1, (max_results - 4) / 2) buckets are wanted, of width d = ceil((hi-lo+1) / n).
//  2. The summary level w is the widest of 1 (raw points) and kLevelWidths (16, 64, ..., 4^10)
//     with w <= d; the bucket width is v = ceil(d / w) * w (a multiple of w, so a bucket is a
//     whole number of summary buckets). Bucket k holds steps [k*v, (k+1)*v), clipped to [lo, hi].
//  3. The answer: the first and the last point of [lo, hi] and each bucket's minimum and
//     maximum point (values ordered by rules::ValueLess; ties go to the earlier point), without
//     repeats, in (step, timestamp) order. So at most max(max_results, 6) points, and at least
//     about max_results / 4 when there are that many points.
// Summaries are aligned to multiples of their width; a backend answers a request by merging
// at most 4 * n summaries of level w plus O(3 * levels) finer ones at the two ends.

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "tracker/model.h"
#include "tracker/store_rules.h"

namespace ferry::tracker::sampling {

// The summary levels kept per (run, key): a factor 4 apart, so a query reads at most 4 summary
// rows per answer bucket (about 2.5 on average). A factor of 16 (5 levels) read up to 16 (~8 on
// average) and answered 100 runs x 1e6 points at max_results 1000 in 500 ms (p50); the extra
// levels cost little at ingest (a batch touches few coarse buckets) and ~2% more rows on disk.
inline constexpr std::array<int64_t, 9> kLevelWidths = {16,    64,    256,    1024,   4096,
                                                        16384, 65536, 262144, 1048576};

// floor(a / b) for b > 0.
inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// What a run of points reduces to.
struct Summary {
  int64_t count = 0;
  MetricPoint first, last, min, max;  // `key` is left empty

  void Add(const MetricPoint& p) {
    if (count++ == 0) {
      first = last = min = max = p;
      return;
    }
    if (rules::PointBefore(p, first)) first = p;
    if (rules::PointBefore(last, p)) last = p;
    if (MinBetter(p, min)) min = p;
    if (MaxBetter(p, max)) max = p;
  }
  void Merge(const Summary& s) {
    if (s.count == 0) return;
    if (count == 0) {
      *this = s;
      return;
    }
    count += s.count;
    if (rules::PointBefore(s.first, first)) first = s.first;
    if (rules::PointBefore(last, s.last)) last = s.last;
    if (MinBetter(s.min, min)) min = s.min;
    if (MaxBetter(s.max, max)) max = s.max;
  }
  static bool MinBetter(const MetricPoint& a, const MetricPoint& b) {
    if (!rules::ValueEqual(a.value, b.value)) return rules::ValueLess(a.value, b.value);
    return rules::PointBefore(a, b);
  }
  static bool MaxBetter(const MetricPoint& a, const MetricPoint& b) {
    if (!rules::ValueEqual(a.value, b.value)) return rules::ValueLess(b.value, a.value);
    return rules::PointBefore(a, b);
  }
};

// [max(start, first), min(end, last)]: the requested steps (none given: all) where the key has
// points, `first` and `last` being its first and last step; nullopt when that is empty.
inline std::optional<std::pair<int64_t, int64_t>> ClipToSteps(std::optional<int64_t> start,
                                                              std::optional<int64_t> end,
                                                              int64_t first, int64_t last) {
  int64_t lo = start ? std::max(*start, first) : first;
  int64_t hi = end ? std::min(*end, last) : last;
  if (lo > hi) return std::nullopt;
  return std::make_pair(lo, hi);
}

struct BucketPlan {
  int64_t level_width = 1;   // 1: raw points; else one of kLevelWidths
  int64_t bucket_width = 1;  // a multiple of level_width
  int level_index = -1;      // index into kLevelWidths; -1 for raw points
};

inline BucketPlan PlanBuckets(int64_t lo, int64_t hi, int max_results) {
  uint64_t n = static_cast<uint64_t>(std::max(1, (max_results - 4) / 2));
  uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (span == 0) span = std::numeric_limits<uint64_t>::max();
  uint64_t d = span / n + (span % n != 0);
  d = std::min<uint64_t>(d, uint64_t{1} << 62);
  BucketPlan plan;
  for (int i = 0; i < static_cast<int>(kLevelWidths.size()); ++i) {
    if (static_cast<uint64_t>(kLevelWidths[i]) <= d) {
      plan.level_width = kLevelWidths[i];
      plan.level_index = i;
    }
  }
  uint64_t w = static_cast<uint64_t>(plan.level_width);
  plan.bucket_width = static_cast<int64_t>((d + w - 1) / w * w);
  return plan;
}

// The answer's points from the buckets' summaries (in bucket order, empty ones allowed).
inline std::vector<MetricPoint> PickPoints(const std::vector<Summary>& buckets) {
  std::vector<MetricPoint> out;
  const Summary* first = nullptr;
  const Summary* last = nullptr;
  for (const auto& b : buckets) {
    if (b.count == 0) continue;
    if (!first) first = &b;
    last = &b;
    out.push_back(b.min);
    out.push_back(b.max);
  }
  if (!first) return out;
  out.push_back(first->first);
  out.push_back(last->last);
  std::sort(out.begin(), out.end(), rules::PointBefore);
  auto same = [](const MetricPoint& a, const MetricPoint& b) {
    return !rules::PointBefore(a, b) && !rules::PointBefore(b, a);
  };
  out.erase(std::unique(out.begin(), out.end(), same), out.end());
  return out;
}

}  // namespace ferry::tracker::sampling
