#include "tracker/metric_batch.h"

#include <charconv>

#include "tracker/store_rules.h"

namespace ferry::tracker::metrics {

void MetricBatch::Add(int64_t key_id, const MetricPoint& p) {
  for (int level = 0; level < static_cast<int>(sampling::kLevelWidths.size()); ++level) {
    int64_t bucket = sampling::FloorDiv(p.step, sampling::kLevelWidths[static_cast<size_t>(level)]);
    summaries_[{key_id, level, bucket}].Add(p);
  }
  auto [it, inserted] = latest_.emplace(key_id, p);
  if (!inserted && rules::LaterThan(p, it->second)) it->second = p;
}

void MetricBatch::MergeStored(const BucketId& where, const sampling::Summary& stored) {
  auto it = summaries_.find(where);
  if (it != summaries_.end()) it->second.Merge(stored);
}

void MetricBatch::KeepStoredIfLater(int64_t key_id, const MetricPoint& stored) {
  auto it = latest_.find(key_id);
  if (it != latest_.end() && !rules::LaterThan(it->second, stored)) latest_.erase(it);
}

std::string HistoryToken(const MetricPoint& last) {
  return std::to_string(last.step) + ":" + std::to_string(last.timestamp_ms) + ":" +
         std::to_string(rules::OrderedBits(last.value));
}

Result<std::optional<HistoryCursor>> ParseHistoryToken(const std::string& token) {
  if (token.empty()) return std::optional<HistoryCursor>();
  int64_t v[3];
  const char* p = token.data();
  const char* end = token.data() + token.size();
  for (int i = 0; i < 3; ++i) {
    auto r = std::from_chars(p, end, v[i]);
    bool separator_ok = i == 2 ? r.ptr == end : r.ptr != end && *r.ptr == ':';
    if (r.ec != std::errc() || !separator_ok) {
      return InvalidArgument("GetMetricHistory: invalid page token '" + token + "'");
    }
    p = r.ptr + (i < 2 ? 1 : 0);
  }
  return std::optional<HistoryCursor>(HistoryCursor{v[0], v[1], v[2]});
}

}  // namespace ferry::tracker::metrics
