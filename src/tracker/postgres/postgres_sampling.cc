// The bulk-interval sampling of PostgresTrackerStore from the precomputed summaries (the same
// algorithm as tracker/sqlite/sqlite_metrics.cc): tracker/metric_sampling.h picks level w and
// bucket width v, a multiple of w; the level-w summaries wholly inside [lo, hi] come from one
// range scan; the two partial ends (< w steps each) are covered by sampling::RangeSummary
// (summary_sampler.h), which takes the whole finer-level buckets inside a range and recurses into
// the rest, down to raw points.
#include <map>
#include <optional>

#include "tracker/metric_sampling.h"
#include "tracker/postgres/pg_metric_rows.h"
#include "tracker/postgres/postgres_tracker_store.h"
#include "tracker/store_checks.h"
#include "tracker/summary_sampler.h"

namespace ferry::tracker {

using postgres::Connection;
using postgres::FindKeyId;
using postgres::P;
using postgres::PointAt;
using postgres::Rows;
using postgres::SummaryAt;
using sampling::Summary;

namespace {

// Summaries of one run's key, read inside the caller's transaction.
class SummarySource {
 public:
  SummarySource(Connection& c, int64_t run_pk, int64_t key_id)
      : c_(c), run_pk_(run_pk), key_id_(key_id) {}

  // Calls fn(bucket, summary) for each stored bucket of `level` in [first, last].
  template <typename Fn>
  Status ForEachBucket(int level, int64_t first, int64_t last, Fn fn) {
    FERRY_ASSIGN_OR_RETURN(
        Rows q, c_.Exec("read summaries",
                        "SELECT bucket, count, first_step, first_ts, first_value, last_step, "
                        "last_ts, last_value, min_step, min_ts, min_value, max_step, max_ts, "
                        "max_value FROM summaries WHERE run_pk = $1 AND key_id = $2 AND "
                        "level = $3 AND bucket BETWEEN $4 AND $5 ORDER BY bucket",
                        {P(run_pk_), P(key_id_), P(int64_t{level}), P(first), P(last)}));
    for (int i = 0; i < q.size(); ++i) fn(q.Int(i, 0), SummaryAt(q, i, 1));
    return Status();
  }

  // Calls fn(point) for each point with step in [lo, hi], in history order.
  template <typename Fn>
  Status ForEachPoint(int64_t lo, int64_t hi, Fn fn) {
    FERRY_ASSIGN_OR_RETURN(
        Rows q, c_.Exec("read points",
                        "SELECT step, ts, value FROM points WHERE run_pk = $1 AND key_id = $2 AND "
                        "step BETWEEN $3 AND $4 ORDER BY step, ts, value",
                        {P(run_pk_), P(key_id_), P(lo), P(hi)}));
    for (int i = 0; i < q.size(); ++i) fn(PointAt(q, i, 0));
    return Status();
  }

  // The lowest (highest) step of the key; nullopt when it has no points.
  Result<std::optional<int64_t>> EdgeStep(bool last) {
    FERRY_ASSIGN_OR_RETURN(
        Rows q, c_.Exec("read points",
                        last ? "SELECT step FROM points WHERE run_pk = $1 AND key_id = $2 "
                               "ORDER BY step DESC LIMIT 1"
                             : "SELECT step FROM points WHERE run_pk = $1 AND key_id = $2 "
                               "ORDER BY step LIMIT 1",
                        {P(run_pk_), P(key_id_)}));
    if (q.empty()) return std::optional<int64_t>();
    return std::optional<int64_t>(q.Int(0, 0));
  }

 private:
  Connection& c_;
  int64_t run_pk_, key_id_;
};

}  // namespace

Status PostgresTrackerStore::SampleRun(Connection& c, const std::string& run_id,
                                       const std::string& key, std::optional<int64_t> start_step,
                                       std::optional<int64_t> end_step, int max_results,
                                       std::vector<SampledPoint>& out) {
  auto row = ReadRunRow(c, run_id);
  if (!row.ok()) return row.status().WithContext("GetMetricHistoryBulkInterval");
  FERRY_ASSIGN_OR_RETURN(int64_t key_id, FindKeyId(c, key));
  if (key_id < 0) return Status();
  SummarySource src(c, row->run_pk, key_id);
  FERRY_ASSIGN_OR_RETURN(auto points,
                         sampling::SampleFromSummaries(src, start_step, end_step, max_results));
  for (const auto& p : points) out.push_back({run_id, key, p.step, p.value, p.timestamp_ms});
  return Status();
}

Result<std::vector<SampledPoint>> PostgresTrackerStore::GetMetricHistoryBulkInterval(
    const std::vector<std::string>& run_ids, const std::string& key,
    std::optional<int64_t> start_step, std::optional<int64_t> end_step, int max_results) {
  FERRY_RETURN_IF_ERROR(checks::MaxResults("GetMetricHistoryBulkInterval", max_results));
  FERRY_ASSIGN_OR_RETURN(Session s, Begin(true));
  std::vector<SampledPoint> out;
  for (const auto& run_id : run_ids) {
    FERRY_RETURN_IF_ERROR(SampleRun(*s, run_id, key, start_step, end_step, max_results, out));
  }
  return out;
}

}  // namespace ferry::tracker
