// Metric points: writing them with their summaries, and history pages (the bulk-interval
// sampling is in postgres_sampling.cc).
//
// Writing (inside LogBatch's transaction, with the run's row locked), in tracker/metric_batch.h's
// phases: InsertPoints (one INSERT of all the batch's points with ON CONFLICT DO NOTHING
// RETURNING gives exactly the points that are new, folded into the MetricBatch), WriteSummaries
// (the touched summary rows read in one statement, merged, and written back in one upsert),
// WriteLatest. Because the run's row is locked, no other writer (in this or another replica)
// merges into the same summary rows at the same time. Four round trips per batch, whatever its
// size.
#include <map>
#include <tuple>

#include "tracker/metric_batch.h"
#include "tracker/postgres/pg_metric_rows.h"
#include "tracker/postgres/postgres_tracker_store.h"
#include "tracker/store_checks.h"
#include "tracker/store_rules.h"

namespace ferry::tracker {

using postgres::Connection;
using postgres::FindKeyId;
using postgres::IntArray;
using postgres::P;
using postgres::PointAt;
using postgres::Rows;
using postgres::SummaryAt;

namespace {

struct PointColumns {
  std::vector<int64_t> step, ts, value;
  void Add(const MetricPoint& p) {
    step.push_back(p.step);
    ts.push_back(p.timestamp_ms);
    value.push_back(rules::OrderedBits(p.value));
  }
};

}  // namespace

Result<std::map<std::string, int64_t>> PostgresTrackerStore::KeyIds(
    const std::vector<MetricPoint>& metrics) {
  std::map<std::string, int64_t> ids;
  std::vector<std::string> missing;
  {
    MutexLock lock(keys_mu_);
    for (const auto& m : metrics) {
      if (ids.count(m.key)) continue;
      auto it = key_ids_.find(m.key);
      if (it != key_ids_.end()) {
        ids[m.key] = it->second;
      } else {
        ids[m.key] = -1;
        missing.push_back(m.key);
      }
    }
  }
  if (missing.empty()) return ids;
  // In a transaction of their own, before the batch's: names are harmless if the batch then
  // fails, and batches never wait on each other's uncommitted names (no deadlock). In READ
  // COMMITTED the SELECT sees names another replica added concurrently (ON CONFLICT waited).
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(false));
  Connection& c = *s;
  auto names = postgres::TextArray(missing);
  FERRY_RETURN_IF_ERROR(c.Exec("add metric keys",
                               "INSERT INTO metric_keys (name) SELECT unnest($1::text[]) "
                               "ON CONFLICT (name) DO NOTHING",
                               {names})
                            .status());
  FERRY_ASSIGN_OR_RETURN(Rows q, c.Exec("read metric keys",
                                        "SELECT name, key_id FROM metric_keys "
                                        "WHERE name = ANY($1::text[])",
                                        {names}));
  FERRY_RETURN_IF_ERROR(s.Commit());
  MutexLock lock(keys_mu_);
  for (int i = 0; i < q.size(); ++i) {
    ids[q.Text(i, 0)] = q.Int(i, 1);
    key_ids_[q.Text(i, 0)] = q.Int(i, 1);
  }
  for (const auto& [name, id] : ids) {
    if (id < 0) return Internal("metric key '" + name + "' was not added");
  }
  return ids;
}

Status PostgresTrackerStore::WriteMetrics(Connection& c, int64_t run_pk,
                                          const std::map<std::string, int64_t>& key_ids,
                                          const std::vector<MetricPoint>& metrics) {
  metrics::MetricBatch batch;
  FERRY_RETURN_IF_ERROR(InsertPoints(c, run_pk, key_ids, metrics, batch));
  if (batch.empty()) return Status();  // all already stored: a retried batch
  FERRY_RETURN_IF_ERROR(WriteSummaries(c, run_pk, batch));
  return WriteLatest(c, run_pk, batch);
}

Status PostgresTrackerStore::InsertPoints(Connection& c, int64_t run_pk,
                                          const std::map<std::string, int64_t>& key_ids,
                                          const std::vector<MetricPoint>& metrics,
                                          metrics::MetricBatch& batch) {
  if (metrics.empty()) return Status();
  std::vector<int64_t> keys;
  PointColumns cols;
  for (const auto& m : metrics) {
    keys.push_back(key_ids.at(m.key));
    cols.Add({"", rules::CanonicalValue(m.value), m.timestamp_ms, m.step});
  }
  FERRY_ASSIGN_OR_RETURN(
      Rows added,
      c.Exec("LogBatch",
             "INSERT INTO points (run_pk, key_id, step, ts, value) SELECT $1, k, s, t, v FROM "
             "unnest($2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) AS u(k, s, t, v) "
             "ON CONFLICT DO NOTHING RETURNING key_id, step, ts, value",
             {P(run_pk), IntArray(keys), IntArray(cols.step), IntArray(cols.ts),
              IntArray(cols.value)}));
  for (int i = 0; i < added.size(); ++i) batch.Add(added.Int(i, 0), PointAt(added, i, 1));
  return Status();
}

Status PostgresTrackerStore::WriteSummaries(Connection& c, int64_t run_pk,
                                            metrics::MetricBatch& batch) {
  std::vector<int64_t> t_key, t_level, t_bucket;
  for (const auto& [where, s] : batch.summaries()) {
    t_key.push_back(std::get<0>(where));
    t_level.push_back(std::get<1>(where));
    t_bucket.push_back(std::get<2>(where));
  }
  {
    FERRY_ASSIGN_OR_RETURN(
        Rows old, c.Exec("LogBatch",
                         "SELECT s.key_id, s.level, s.bucket, s.count, s.first_step, s.first_ts, "
                         "s.first_value, s.last_step, s.last_ts, s.last_value, s.min_step, "
                         "s.min_ts, s.min_value, s.max_step, s.max_ts, s.max_value FROM summaries "
                         "s JOIN unnest($2::bigint[], $3::int[], $4::bigint[]) AS u(k, l, b) "
                         "ON s.key_id = u.k AND s.level = u.l AND s.bucket = u.b "
                         "WHERE s.run_pk = $1",
                         {P(run_pk), IntArray(t_key), IntArray(t_level), IntArray(t_bucket)}));
    for (int i = 0; i < old.size(); ++i) {
      batch.MergeStored({old.Int(i, 0), static_cast<int>(old.Int(i, 1)), old.Int(i, 2)},
                        SummaryAt(old, i, 3));
    }
  }
  std::vector<int64_t> count;
  PointColumns first, last, min, max;
  for (const auto& [where, s] : batch.summaries()) {
    count.push_back(s.count);
    first.Add(s.first);
    last.Add(s.last);
    min.Add(s.min);
    max.Add(s.max);
  }
  return c
      .Exec("LogBatch",
            "INSERT INTO summaries SELECT $1, * FROM unnest($2::bigint[], $3::int[], "
            "$4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], "
            "$9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::bigint[], "
            "$14::bigint[], $15::bigint[], $16::bigint[], $17::bigint[]) "
            "ON CONFLICT (run_pk, key_id, level, bucket) DO UPDATE SET count = excluded.count, "
            "first_step = excluded.first_step, first_ts = excluded.first_ts, "
            "first_value = excluded.first_value, last_step = excluded.last_step, "
            "last_ts = excluded.last_ts, last_value = excluded.last_value, "
            "min_step = excluded.min_step, min_ts = excluded.min_ts, "
            "min_value = excluded.min_value, max_step = excluded.max_step, "
            "max_ts = excluded.max_ts, max_value = excluded.max_value",
            {P(run_pk), IntArray(t_key), IntArray(t_level), IntArray(t_bucket), IntArray(count),
             IntArray(first.step), IntArray(first.ts), IntArray(first.value), IntArray(last.step),
             IntArray(last.ts), IntArray(last.value), IntArray(min.step), IntArray(min.ts),
             IntArray(min.value), IntArray(max.step), IntArray(max.ts), IntArray(max.value)})
      .status();
}

Status PostgresTrackerStore::WriteLatest(Connection& c, int64_t run_pk,
                                         metrics::MetricBatch& batch) {
  std::vector<int64_t> l_key;
  for (const auto& [key_id, p] : batch.latest()) l_key.push_back(key_id);
  FERRY_ASSIGN_OR_RETURN(Rows stored, c.Exec("LogBatch",
                                             "SELECT key_id, step, ts, value FROM latest_metrics "
                                             "WHERE run_pk = $1 AND key_id = ANY($2::bigint[])",
                                             {P(run_pk), IntArray(l_key)}));
  for (int i = 0; i < stored.size(); ++i) {
    batch.KeepStoredIfLater(stored.Int(i, 0), PointAt(stored, i, 1));
  }
  if (batch.latest().empty()) return Status();
  l_key.clear();
  PointColumns l_point;
  for (const auto& [key_id, p] : batch.latest()) {
    l_key.push_back(key_id);
    l_point.Add(p);
  }
  return c
      .Exec("LogBatch",
            "INSERT INTO latest_metrics SELECT $1, * FROM unnest($2::bigint[], $3::bigint[], "
            "$4::bigint[], $5::bigint[]) ON CONFLICT (run_pk, key_id) DO UPDATE SET "
            "step = excluded.step, ts = excluded.ts, value = excluded.value",
            {P(run_pk), IntArray(l_key), IntArray(l_point.step), IntArray(l_point.ts),
             IntArray(l_point.value)})
      .status();
}

Result<Page<MetricPoint>> PostgresTrackerStore::GetMetricHistory(const std::string& run_id,
                                                                 const std::string& key,
                                                                 int max_results,
                                                                 const std::string& page_token) {
  FERRY_RETURN_IF_ERROR(checks::MaxResults("GetMetricHistory", max_results));
  FERRY_ASSIGN_OR_RETURN(auto after, metrics::ParseHistoryToken(page_token));
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(true));
  Connection& c = *s;
  auto row = ReadRunRow(c, run_id);
  if (!row.ok()) return row.status().WithContext("GetMetricHistory");
  Page<MetricPoint> page;
  FERRY_ASSIGN_OR_RETURN(int64_t key_id, FindKeyId(c, key));
  if (key_id < 0) return page;
  FERRY_ASSIGN_OR_RETURN(
      Rows q, after ? c.Exec("GetMetricHistory",
                             "SELECT step, ts, value FROM points WHERE run_pk = $1 AND key_id = $2 "
                             "AND (step, ts, value) > ($3, $4, $5) ORDER BY step, ts, value "
                             "LIMIT $6",
                             {P(row->run_pk), P(key_id), P(after->step), P(after->timestamp_ms),
                              P(after->value_bits), P(int64_t{max_results} + 1)})
                    : c.Exec("GetMetricHistory",
                             "SELECT step, ts, value FROM points WHERE run_pk = $1 AND key_id = $2 "
                             "ORDER BY step, ts, value LIMIT $3",
                             {P(row->run_pk), P(key_id), P(int64_t{max_results} + 1)}));
  int n = std::min(q.size(), max_results);
  for (int i = 0; i < n; ++i) {
    page.items.push_back(PointAt(q, i, 0));
    page.items.back().key = key;
  }
  if (q.size() > max_results) page.next_page_token = metrics::HistoryToken(page.items.back());
  return page;
}

}  // namespace ferry::tracker
