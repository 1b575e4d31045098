#pragma once
// Metric rows as the PostgresTrackerStore files read them: points and summaries from statement
// answers (values stored as rules::OrderedBits) and metric-name lookups.

#include <string>

#include "tracker/metric_sampling.h"
#include "tracker/postgres/pg_db.h"
#include "tracker/store_rules.h"

namespace ferry::tracker::postgres {

// The point in columns step, ts, value starting at `col`.
inline MetricPoint PointAt(const Rows& q, int row, int col) {
  return {"", rules::FromOrderedBits(q.Int(row, col + 2)), q.Int(row, col + 1), q.Int(row, col)};
}

// Columns count, first, last, min, max (each step, ts, value) starting at `col`.
inline sampling::Summary SummaryAt(const Rows& q, int row, int col) {
  sampling::Summary s;
  s.count = q.Int(row, col);
  s.first = PointAt(q, row, col + 1);
  s.last = PointAt(q, row, col + 4);
  s.min = PointAt(q, row, col + 7);
  s.max = PointAt(q, row, col + 10);
  return s;
}

// The key_id of metric name `key`; -1 when it was never logged.
inline Result<int64_t> FindKeyId(Connection& c, const std::string& key) {
  FERRY_ASSIGN_OR_RETURN(
      Rows q, c.Exec("find metric key", "SELECT key_id FROM metric_keys WHERE name = $1", {key}));
  return q.empty() ? int64_t{-1} : q.Int(0, 0);
}

}  // namespace ferry::tracker::postgres
