// Metric points: writing them with their summaries, history pages, and the bulk-interval
// sampling from summaries.
//
// Writing, in tracker/metric_batch.h's phases: InsertPoints (each new point, where INSERT OR
// IGNORE into `points` changed a row, goes into the MetricBatch; a retried point does not),
// WriteSummaries (each touched summary row read, merged and written back once: a batch of 1,000
// points over 100 steps and 10 keys updates ~10 * (7 + 3 + 7) rows), WriteLatest.
//
// Sampling (tracker/metric_sampling.h picks level w and bucket width v, a multiple of w): the
// level-w summaries that lie wholly inside [lo, hi] are read in one range scan and merged into
// their answer buckets; the two partial ends (< w steps each) are covered by
// sampling::RangeSummary, which takes the whole finer-level buckets inside a range and recurses
// into the rest, down to raw points: <= 3 rows per level per end.
#include <algorithm>
#include <limits>
#include <map>
#include <thread>
#include <tuple>

#include "tracker/metric_batch.h"
#include "tracker/metric_sampling.h"
#include "tracker/sqlite/sqlite_tracker_store.h"
#include "tracker/store_checks.h"
#include "tracker/store_rules.h"
#include "tracker/summary_sampler.h"

namespace ferry::tracker {

using sampling::Summary;
using sqlite::Connection;
using sqlite::Statement;
using sqlite::Transaction;

namespace {

MetricPoint PointAt(const Statement& q, int col) {
  return {"", rules::FromOrderedBits(q.Int(col + 2)), q.Int(col + 1), q.Int(col)};
}

// A summary row's columns: count, first, last, min, max (each step, ts, value). A macro, as
// Connection::Prepare takes string literals.
#define FERRY_SUMMARY_COLUMNS                                                                    \
  "count, first_step, first_ts, first_value, last_step, last_ts, last_value, min_step, min_ts, " \
  "min_value, max_step, max_ts, max_value"

// Columns count, first, last, min, max (each step, ts, value) starting at `col`.
Summary SummaryAt(const Statement& q, int col) {
  Summary s;
  s.count = q.Int(col);
  s.first = PointAt(q, col + 1);
  s.last = PointAt(q, col + 4);
  s.min = PointAt(q, col + 7);
  s.max = PointAt(q, col + 10);
  return s;
}

void BindPoint(Statement& q, int i, const MetricPoint& p) {
  q.Bind(i, p.step).Bind(i + 1, p.timestamp_ms).Bind(i + 2, rules::OrderedBits(p.value));
}

Result<int64_t> FindKeyId(Connection& c, const std::string& key) {
  FERRY_ASSIGN_OR_RETURN(auto q, c.Prepare("SELECT key_id FROM metric_keys WHERE name = ?"));
  q->Bind(1, key);
  FERRY_ASSIGN_OR_RETURN(bool found, q->Step());
  return found ? q->Int(0) : int64_t{-1};
}

// Summaries of one run's key, read inside the caller's transaction.
class SummarySource {
 public:
  SummarySource(Connection& c, int64_t run_pk, int64_t key_id)
      : c_(c), run_pk_(run_pk), key_id_(key_id) {}

  // Calls fn(bucket, summary) for each stored bucket of `level` in [first, last].
  template <typename Fn>
  Status ForEachBucket(int level, int64_t first, int64_t last, Fn fn) {
    FERRY_ASSIGN_OR_RETURN(auto q, c_.Prepare("SELECT bucket, " FERRY_SUMMARY_COLUMNS
                                              " FROM summaries WHERE run_pk = ? AND key_id = ? "
                                              "AND level = ? AND bucket BETWEEN ? AND ?"));
    q->Bind(1, run_pk_).Bind(2, key_id_).Bind(3, int64_t{level}).Bind(4, first).Bind(5, last);
    for (;;) {
      FERRY_ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) return Status();
      fn(q->Int(0), SummaryAt(*q, 1));
    }
  }

  // Calls fn(point) for each point with step in [lo, hi], in history order.
  template <typename Fn>
  Status ForEachPoint(int64_t lo, int64_t hi, Fn fn) {
    FERRY_ASSIGN_OR_RETURN(auto q, c_.Prepare("SELECT step, ts, value FROM points WHERE "
                                              "run_pk = ? AND key_id = ? AND step BETWEEN ? AND ? "
                                              "ORDER BY step, ts, value"));
    q->Bind(1, run_pk_).Bind(2, key_id_).Bind(3, lo).Bind(4, hi);
    for (;;) {
      FERRY_ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) return Status();
      fn(PointAt(*q, 0));
    }
  }

  // Point with the lowest (highest) step; nullopt when the key has none.
  Result<std::optional<int64_t>> EdgeStep(bool last) {
    FERRY_ASSIGN_OR_RETURN(
        auto q, last ? c_.Prepare("SELECT step FROM points WHERE run_pk = ? AND key_id = ? "
                                  "ORDER BY step DESC LIMIT 1")
                     : c_.Prepare("SELECT step FROM points WHERE run_pk = ? AND key_id = ? "
                                  "ORDER BY step LIMIT 1"));
    q->Bind(1, run_pk_).Bind(2, key_id_);
    FERRY_ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return std::optional<int64_t>();
    return std::optional<int64_t>(q->Int(0));
  }

 private:
  Connection& c_;
  int64_t run_pk_, key_id_;
};

}  // namespace

Result<int64_t> SqliteTrackerStore::KeyId(const std::string& key) {
  auto it = key_ids_.find(key);
  if (it != key_ids_.end()) return it->second;
  FERRY_ASSIGN_OR_RETURN(int64_t id, FindKeyId(*writer_, key));
  if (id < 0) {
    FERRY_ASSIGN_OR_RETURN(
        auto q, writer_->Prepare("INSERT INTO metric_keys (name) VALUES (?) RETURNING key_id"));
    q->Bind(1, key);
    FERRY_ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Internal("LogBatch: INSERT of metric key '" + key + "' returned no id");
    id = q->Int(0);
    FERRY_RETURN_IF_ERROR(q->Run());
  }
  key_ids_[key] = id;
  return id;
}

Status SqliteTrackerStore::WriteMetrics(int64_t run_pk, const std::vector<MetricPoint>& metrics) {
  metrics::MetricBatch batch;
  FERRY_RETURN_IF_ERROR(InsertPoints(run_pk, metrics, batch));
  FERRY_RETURN_IF_ERROR(WriteSummaries(run_pk, batch));
  return WriteLatest(run_pk, batch);
}

Status SqliteTrackerStore::InsertPoints(int64_t run_pk, const std::vector<MetricPoint>& metrics,
                                        metrics::MetricBatch& batch) {
  Connection& c = *writer_;
  FERRY_ASSIGN_OR_RETURN(auto ins,
                         c.Prepare("INSERT OR IGNORE INTO points VALUES (?, ?, ?, ?, ?)"));
  for (const auto& m : metrics) {
    FERRY_ASSIGN_OR_RETURN(int64_t key_id, KeyId(m.key));
    MetricPoint p{"", rules::CanonicalValue(m.value), m.timestamp_ms, m.step};
    ins->Reset();
    ins->Bind(1, run_pk).Bind(2, key_id);
    BindPoint(*ins, 3, p);
    FERRY_RETURN_IF_ERROR(ins->Run());
    if (c.Changes() > 0) batch.Add(key_id, p);  // else already stored: a retried point
  }
  return Status();
}

Status SqliteTrackerStore::WriteSummaries(int64_t run_pk, metrics::MetricBatch& batch) {
  Connection& c = *writer_;
  {
    FERRY_ASSIGN_OR_RETURN(auto read, c.Prepare("SELECT " FERRY_SUMMARY_COLUMNS
                                                " FROM summaries WHERE run_pk = ? AND key_id = ? "
                                                "AND level = ? AND bucket = ?"));
    for (const auto& [where, unused] : batch.summaries()) {
      auto [key_id, level, bucket] = where;
      read->Reset();
      read->Bind(1, run_pk).Bind(2, key_id).Bind(3, int64_t{level}).Bind(4, bucket);
      FERRY_ASSIGN_OR_RETURN(bool found, read->Step());
      if (found) batch.MergeStored(where, SummaryAt(*read, 0));
    }
  }
  FERRY_ASSIGN_OR_RETURN(auto write,
                         c.Prepare("INSERT OR REPLACE INTO summaries VALUES "
                                   "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  for (const auto& [where, s] : batch.summaries()) {
    auto [key_id, level, bucket] = where;
    write->Reset();
    write->Bind(1, run_pk).Bind(2, key_id).Bind(3, int64_t{level}).Bind(4, bucket);
    write->Bind(5, s.count);
    BindPoint(*write, 6, s.first);
    BindPoint(*write, 9, s.last);
    BindPoint(*write, 12, s.min);
    BindPoint(*write, 15, s.max);
    FERRY_RETURN_IF_ERROR(write->Run());
  }
  return Status();
}

Status SqliteTrackerStore::WriteLatest(int64_t run_pk, metrics::MetricBatch& batch) {
  Connection& c = *writer_;
  {
    FERRY_ASSIGN_OR_RETURN(auto read, c.Prepare("SELECT step, ts, value FROM latest_metrics "
                                                "WHERE run_pk = ? AND key_id = ?"));
    std::vector<int64_t> keys;
    for (const auto& [key_id, p] : batch.latest()) keys.push_back(key_id);
    for (int64_t key_id : keys) {
      read->Reset();
      read->Bind(1, run_pk).Bind(2, key_id);
      FERRY_ASSIGN_OR_RETURN(bool found, read->Step());
      if (found) batch.KeepStoredIfLater(key_id, PointAt(*read, 0));
    }
  }
  FERRY_ASSIGN_OR_RETURN(auto write,
                         c.Prepare("INSERT OR REPLACE INTO latest_metrics VALUES (?, ?, ?, ?, ?)"));
  for (const auto& [key_id, p] : batch.latest()) {
    write->Reset();
    write->Bind(1, run_pk).Bind(2, key_id);
    BindPoint(*write, 3, p);
    FERRY_RETURN_IF_ERROR(write->Run());
  }
  return Status();
}

Result<Page<MetricPoint>> SqliteTrackerStore::GetMetricHistory(const std::string& run_id,
                                                               const std::string& key,
                                                               int max_results,
                                                               const std::string& page_token) {
  FERRY_RETURN_IF_ERROR(checks::MaxResults("GetMetricHistory", max_results));
  FERRY_ASSIGN_OR_RETURN(auto after, metrics::ParseHistoryToken(page_token));
  FERRY_ASSIGN_OR_RETURN(Reader r, AcquireReader());
  Connection& c = *r;
  FERRY_ASSIGN_OR_RETURN(Transaction tx, Transaction::Begin(c, false));
  auto row = ReadRunRow(c, run_id);
  if (!row.ok()) return row.status().WithContext("GetMetricHistory");
  Page<MetricPoint> page;
  FERRY_ASSIGN_OR_RETURN(int64_t key_id, FindKeyId(c, key));
  if (key_id < 0) return page;
  FERRY_ASSIGN_OR_RETURN(
      auto q, after ? c.Prepare("SELECT step, ts, value FROM points WHERE run_pk = ? AND "
                                "key_id = ? AND (step, ts, value) > (?, ?, ?) "
                                "ORDER BY step, ts, value LIMIT ?")
                    : c.Prepare("SELECT step, ts, value FROM points WHERE run_pk = ? AND "
                                "key_id = ? ORDER BY step, ts, value LIMIT ?"));
  q->Bind(1, row->run_pk).Bind(2, key_id);
  int next = 3;
  if (after) {
    q->Bind(3, after->step).Bind(4, after->timestamp_ms).Bind(5, after->value_bits);
    next = 6;
  }
  q->Bind(next, int64_t{max_results} + 1);
  for (;;) {
    FERRY_ASSIGN_OR_RETURN(bool more, q->Step());
    if (!more) break;
    if (static_cast<int>(page.items.size()) == max_results) {
      page.next_page_token = metrics::HistoryToken(page.items.back());
      break;
    }
    page.items.push_back(PointAt(*q, 0));
    page.items.back().key = key;
  }
  return page;
}

Status SqliteTrackerStore::SampleRun(Connection& c, const std::string& run_id,
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

Result<std::vector<SampledPoint>> SqliteTrackerStore::GetMetricHistoryBulkInterval(
    const std::vector<std::string>& run_ids, const std::string& key,
    std::optional<int64_t> start_step, std::optional<int64_t> end_step, int max_results) {
  FERRY_RETURN_IF_ERROR(checks::MaxResults("GetMetricHistoryBulkInterval", max_results));
  // The runs are independent: up to kBulkThreads readers (each its own connection and read
  // transaction) sample contiguous slices of them side by side, and the slices are joined in
  // the order asked. 100 runs x 1e6 points: most of a query is SQLite reading summary rows.
  constexpr size_t kBulkThreads = 4;
  constexpr size_t kRunsPerThread = 8;  // fewer runs than this per slice: not worth a thread
  const size_t slices =
      std::clamp<size_t>(std::min<size_t>(run_ids.size() / kRunsPerThread,
                                          std::max(1u, std::thread::hardware_concurrency())),
                         1, kBulkThreads);
  std::vector<std::vector<SampledPoint>> parts(slices);
  std::vector<Status> status(slices);
  auto sample = [&](size_t i) {
    const size_t begin = run_ids.size() * i / slices, end = run_ids.size() * (i + 1) / slices;
    auto r = AcquireReader();
    if (!r.ok()) return void(status[i] = r.status());
    auto tx = Transaction::Begin(**r, false);
    if (!tx.ok()) return void(status[i] = tx.status());
    for (size_t k = begin; k < end && status[i].ok(); ++k) {
      status[i] = SampleRun(**r, run_ids[k], key, start_step, end_step, max_results, parts[i]);
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < slices; ++i) threads.emplace_back(sample, i);
  sample(0);
  for (auto& t : threads) t.join();
  for (const Status& st : status) FERRY_RETURN_IF_ERROR(st);
  std::vector<SampledPoint> out = std::move(parts[0]);
  for (size_t i = 1; i < slices; ++i) out.insert(out.end(), parts[i].begin(), parts[i].end());
  return out;
}

}  // namespace ferry::tracker

#undef FERRY_SUMMARY_COLUMNS
