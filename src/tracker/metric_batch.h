#pragma once
// Writing a batch of metric points into a backend that keeps per-bucket summaries
// (tracker/sqlite, tracker/postgres), in the phases both follow:
//   1. insert the points; the backend hands each point that was new (a retried one is not) to
//      MetricBatch::Add, which folds it into the Summary of every (key, level, bucket) it falls
//      in (levels: sampling::kLevelWidths) and into its key's "latest" candidate;
//   2. summaries(): for each touched bucket, the backend reads the stored summary, MergeStored()s
//      it, and writes the merged one back;
//   3. latest(): for each key, the backend reads the stored latest point, KeepStoredIfLater()
//      drops the candidate where the stored point is not earlier, and writes the rest.
// And the history page token both issue: the (step, timestamp, value) of the last point returned.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "base/status.h"
#include "tracker/metric_sampling.h"
#include "tracker/model.h"

namespace ferry::tracker::metrics {

// Where a summary lives: (key id, level index, bucket).
using BucketId = std::tuple<int64_t, int, int64_t>;

class MetricBatch {
 public:
  // A point the backend just stored (not one that was already there).
  void Add(int64_t key_id, const MetricPoint& p);
  bool empty() const { return summaries_.empty(); }

  // Phase 2: the touched summaries, in (key, level, bucket) order.
  const std::map<BucketId, sampling::Summary>& summaries() const { return summaries_; }
  void MergeStored(const BucketId& where, const sampling::Summary& stored);

  // Phase 3: per key id, the batch's latest point that is later than what is stored.
  const std::map<int64_t, MetricPoint>& latest() const { return latest_; }
  void KeepStoredIfLater(int64_t key_id, const MetricPoint& stored);

 private:
  std::map<BucketId, sampling::Summary> summaries_;
  std::map<int64_t, MetricPoint> latest_;
};

// A history page's position: the point returned last, its value as rules::OrderedBits.
struct HistoryCursor {
  int64_t step = 0, timestamp_ms = 0, value_bits = 0;
  friend bool operator==(const HistoryCursor&, const HistoryCursor&) = default;
};
// "step:ts:value_bits".
std::string HistoryToken(const MetricPoint& last);
// The cursor of a token HistoryToken made; kInvalidArgument "GetMetricHistory: invalid page
// token '...'" for anything else. "" is no cursor (the first page).
Result<std::optional<HistoryCursor>> ParseHistoryToken(const std::string& token);

}  // namespace ferry::tracker::metrics
