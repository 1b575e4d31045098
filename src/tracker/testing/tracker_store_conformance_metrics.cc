// Metric points: dedup, latest, NaN, history paging, bulk-interval sampling, concurrency.
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <thread>

#include "tracker/metric_sampling.h"
#include "tracker/store_rules.h"
#include "tracker/testing/tracker_store_conformance.h"

namespace ferry::tracker::testing {
namespace {

using ::testing::ElementsAre;

bool Same(const MetricPoint& a, const MetricPoint& b) {
  return a.key == b.key && a.step == b.step && a.timestamp_ms == b.timestamp_ms &&
         rules::ValueEqual(a.value, b.value);
}

// The answer tracker/metric_sampling.h defines, computed from all of a run's points.
std::vector<MetricPoint> ExpectedSample(std::vector<MetricPoint> points,
                                        std::optional<int64_t> start, std::optional<int64_t> end,
                                        int max_results) {
  std::sort(points.begin(), points.end(), rules::PointBefore);
  points.erase(std::unique(points.begin(), points.end(), Same), points.end());
  if (points.empty()) return {};
  auto range = sampling::ClipToSteps(start, end, points.front().step, points.back().step);
  if (!range) return {};
  const auto [lo, hi] = *range;
  auto plan = sampling::PlanBuckets(lo, hi, max_results);
  std::map<int64_t, sampling::Summary> buckets;
  for (const auto& p : points) {
    if (p.step >= lo && p.step <= hi) {
      buckets[sampling::FloorDiv(p.step, plan.bucket_width)].Add(p);
    }
  }
  std::vector<sampling::Summary> ordered;
  for (auto& [k, s] : buckets) ordered.push_back(s);
  return sampling::PickPoints(ordered);
}

std::vector<MetricPoint> OfRun(const std::vector<SampledPoint>& v, const std::string& run_id,
                               const std::string& key) {
  std::vector<MetricPoint> out;
  for (const auto& s : v) {
    if (s.run_id == run_id) out.push_back({key, s.value, s.timestamp_ms, s.step});
  }
  return out;
}

}  // namespace

TEST_P(TrackerStoreConformanceTest, RetriedBatchDoesNotDuplicatePoints) {
  RunInfo run = NewRun();
  std::vector<MetricPoint> batch = {
      {"loss", 1.0, 100, 0}, {"loss", 0.5, 200, 1}, {"loss", 0.5, 200, 1}, {"acc", 0.1, 100, 0}};
  Log(run.run_id, batch);
  Log(run.run_id, batch);
  EXPECT_THAT(History(run.run_id, "loss"),
              ElementsAre(MetricPoint{"loss", 1.0, 100, 0}, MetricPoint{"loss", 0.5, 200, 1}));
  EXPECT_THAT(History(run.run_id, "acc"), ElementsAre(MetricPoint{"acc", 0.1, 100, 0}));
  // Same step, another value or time: a new point.
  Log(run.run_id, {{"loss", 0.6, 200, 1}, {"loss", 0.5, 201, 1}});
  EXPECT_EQ(History(run.run_id, "loss").size(), 4u);
  EXPECT_EQ(store_->LogBatch(run.run_id, {{"", 1, 1, 1}}, {}, {}), StatusCode::kInvalidArgument);
}

TEST_P(TrackerStoreConformanceTest, LatestMetricIsHighestStepThenTimeThenValue) {
  RunInfo run = NewRun();
  Log(run.run_id, {{"a", 1, 900, 5}, {"a", 9, 999, 3}});   // higher step wins over later time
  Log(run.run_id, {{"b", 1, 100, 2}, {"b", 2, 50, 2}});    // same step: later time
  Log(run.run_id, {{"c", 3, 100, 2}, {"c", -1, 100, 2}});  // same step and time: higher value
  Log(run.run_id, {{"a", 0, 1, 1}});                       // an older point changes nothing
  auto got = store_->GetRun(run.run_id);
  ASSERT_TRUE(got.ok());
  EXPECT_THAT(got->latest_metrics,
              ElementsAre(MetricPoint{"a", 1, 900, 5}, MetricPoint{"b", 1, 100, 2},
                          MetricPoint{"c", 3, 100, 2}));
}

TEST_P(TrackerStoreConformanceTest, NanAndInfinityAreStoredAndDeduplicated) {
  RunInfo run = NewRun();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<MetricPoint> batch = {
      {"m", nan, 1, 0}, {"m", inf, 2, 1}, {"m", -inf, 3, 2}, {"m", -0.0, 4, 3}};
  Log(run.run_id, batch);
  Log(run.run_id, batch);
  Log(run.run_id, {{"m", -std::numeric_limits<double>::signaling_NaN(), 1, 0}, {"m", 0.0, 4, 3}});
  auto h = History(run.run_id, "m");
  ASSERT_EQ(h.size(), 4u);
  EXPECT_TRUE(std::isnan(h[0].value));
  EXPECT_EQ(h[1].value, inf);
  EXPECT_EQ(h[2].value, -inf);
  EXPECT_EQ(h[3].value, 0.0);
  auto latest = store_->GetRun(run.run_id)->latest_metrics;
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0].step, 3);
  // A NaN latest (step 9).
  Log(run.run_id, {{"m", nan, 5, 9}});
  latest = store_->GetRun(run.run_id)->latest_metrics;
  EXPECT_TRUE(std::isnan(latest[0].value));
}

TEST_P(TrackerStoreConformanceTest, HistoryPagesInStepThenTimestampOrder) {
  RunInfo run = NewRun();
  std::vector<MetricPoint> points;
  for (int step = 0; step < 10; ++step) {
    for (int t = 2; t >= 0; --t) points.push_back({"m", step * 10.0 + t, 1000 + t, step});
  }
  std::mt19937 rng(7);
  std::shuffle(points.begin(), points.end(), rng);
  Log(run.run_id, {points.begin(), points.begin() + 13});
  Log(run.run_id, {points.begin() + 13, points.end()});
  auto sorted = points;
  std::sort(sorted.begin(), sorted.end(), rules::PointBefore);
  EXPECT_EQ(History(run.run_id, "m", 7), sorted);
  EXPECT_EQ(History(run.run_id, "m", 1), sorted);
  EXPECT_EQ(History(run.run_id, "m", 1000), sorted);
  auto first = store_->GetMetricHistory(run.run_id, "m", 30, "");
  EXPECT_EQ(first->items.size(), 30u);
  EXPECT_EQ(first->next_page_token, "");
  EXPECT_TRUE(History(run.run_id, "unknown").empty());
  EXPECT_EQ(store_->GetMetricHistory(run.run_id, "m", 0, "").status(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->GetMetricHistory(run.run_id, "m", 5, "garbage!").status(),
            StatusCode::kInvalidArgument);
}

TEST_P(TrackerStoreConformanceTest, BulkIntervalKeepsEndsAndSpikes) {
  RunInfo run = NewRun();
  std::vector<MetricPoint> points;
  for (int step = 0; step < 10000; ++step) {
    double v = step == 4321 ? 1000 : step == 7777 ? -1000 : std::sin(step / 100.0);
    points.push_back({"loss", v, 1000 + step, step});
  }
  for (size_t i = 0; i < points.size(); i += 1000) {
    Log(run.run_id, {points.begin() + i, points.begin() + std::min(points.size(), i + 1000)});
  }
  auto got = store_->GetMetricHistoryBulkInterval({run.run_id}, "loss", {}, {}, 100);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_LE(got->size(), 100u);
  EXPECT_GE(got->size(), 25u);
  auto mine = OfRun(*got, run.run_id, "loss");
  EXPECT_EQ(mine.front().step, 0);
  EXPECT_EQ(mine.back().step, 9999);
  auto has = [&](int64_t step, double v) {
    return std::any_of(mine.begin(), mine.end(),
                       [&](const MetricPoint& p) { return p.step == step && p.value == v; });
  };
  EXPECT_TRUE(has(4321, 1000));
  EXPECT_TRUE(has(7777, -1000));
  EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end(), rules::PointBefore));
  EXPECT_EQ(mine, ExpectedSample(points, {}, {}, 100));
}

TEST_P(TrackerStoreConformanceTest, BulkIntervalFollowsTheSamplingRuleExactly) {
  RunInfo a = NewRun();
  RunInfo b = NewRun();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> value(-1, 1);
  std::vector<MetricPoint> pa, pb;
  // a: every 3rd step up to 30,000, some steps twice (two timestamps); b: sparse, huge steps
  // (exercises the coarse summary levels) and negative ones.
  for (int64_t step = 0; step < 30000; step += 3) {
    pa.push_back({"m", value(rng), step * 2, step});
    if (step % 7 == 0) pa.push_back({"m", value(rng), step * 2 + 1, step});
  }
  for (int64_t step = -5000000; step < 20000000; step += 4999) {
    pb.push_back({"m", value(rng), 0, step});
  }
  pb.push_back({"m", std::numeric_limits<double>::quiet_NaN(), 0, 1234567});
  std::shuffle(pa.begin(), pa.end(), rng);
  for (size_t i = 0; i < pa.size(); i += 997) {
    Log(a.run_id, {pa.begin() + i, pa.begin() + std::min(pa.size(), i + 997)});
  }
  Log(b.run_id, pb);
  struct Case {
    std::optional<int64_t> start, end;
    int max_results;
  };
  for (Case c : {Case{{}, {}, 1000}, Case{{}, {}, 10}, Case{{}, {}, 1}, Case{1001, 17777, 50},
                 Case{-3000000, 2, 320}, Case{5, 5, 100}, Case{7, 3, 100}, Case{{}, 999, 64},
                 Case{29000, {}, 5000}, Case{0, 19000000, 333}}) {
    SCOPED_TRACE(::testing::Message() << "start " << c.start.value_or(-1) << " end "
                                      << c.end.value_or(-1) << " max " << c.max_results);
    auto got = store_->GetMetricHistoryBulkInterval({a.run_id, b.run_id}, "m", c.start, c.end,
                                                    c.max_results);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    auto ga = OfRun(*got, a.run_id, "m");
    auto gb = OfRun(*got, b.run_id, "m");
    ASSERT_EQ(ga.size() + gb.size(), got->size());
    // Run by run, in the order asked.
    if (!ga.empty() && !gb.empty()) {
      EXPECT_EQ(got->front().run_id, a.run_id);
    }
    EXPECT_EQ(ga, ExpectedSample(pa, c.start, c.end, c.max_results));
    auto eb = ExpectedSample(pb, c.start, c.end, c.max_results);
    ASSERT_EQ(gb.size(), eb.size());
    for (size_t i = 0; i < gb.size(); ++i) EXPECT_TRUE(Same(gb[i], eb[i])) << i;
    EXPECT_LE(ga.size(), static_cast<size_t>(std::max(c.max_results, 6)));
  }
}

TEST_P(TrackerStoreConformanceTest, BulkIntervalErrorsAndEmptyAnswers) {
  RunInfo run = NewRun();
  Log(run.run_id, {{"m", 1, 1, 1}});
  auto none = store_->GetMetricHistoryBulkInterval({run.run_id}, "other", {}, {}, 10);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_EQ(store_->GetMetricHistoryBulkInterval({run.run_id, "nope"}, "m", {}, {}, 10).status(),
            StatusCode::kNotFound);
  EXPECT_EQ(store_->GetMetricHistoryBulkInterval({run.run_id}, "m", {}, {}, 0).status(),
            StatusCode::kInvalidArgument);
  auto one = store_->GetMetricHistoryBulkInterval({run.run_id}, "m", {}, {}, 10);
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].run_id, run.run_id);
  EXPECT_EQ((*one)[0].key, "m");
  EXPECT_EQ((*one)[0].step, 1);
  EXPECT_EQ((*one)[0].value, 1);
  EXPECT_EQ((*one)[0].timestamp_ms, 1);
}

// Issue 28: [-2^63, 2^63-1] kept a core busy forever (bucket arithmetic over the whole int64
// range), and a wide range returned 2 of 100 points where MLflow returns all 100.
TEST_P(TrackerStoreConformanceTest, BulkIntervalOverAnyRangeAnswersFromTheStepsThatExist) {
  RunInfo run = NewRun();
  std::vector<MetricPoint> points;
  for (int64_t s = 0; s < 100; ++s) points.push_back({"m", static_cast<double>(s % 7), s, s});
  Log(run.run_id, points);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (auto [lo, hi] : std::vector<std::pair<int64_t, int64_t>>{
           {kMin, kMax}, {-1'000'000'000'000, 1'000'000'000'000}, {kMin, 99}, {0, kMax}}) {
    auto got = store_->GetMetricHistoryBulkInterval({run.run_id}, "m", lo, hi, 320);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->size(), 100u) << lo << ".." << hi;
  }
  auto tail = store_->GetMetricHistoryBulkInterval({run.run_id}, "m", 90, kMax, 320);
  ASSERT_TRUE(tail.ok());
  EXPECT_EQ(tail->size(), 10u);
  auto outside = store_->GetMetricHistoryBulkInterval({run.run_id}, "m", kMin, -1, 320);
  ASSERT_TRUE(outside.ok());
  EXPECT_TRUE(outside->empty());
  auto past = store_->GetMetricHistoryBulkInterval({run.run_id}, "m", 100, kMax, 320);
  ASSERT_TRUE(past.ok());
  EXPECT_TRUE(past->empty());
}

TEST_P(TrackerStoreConformanceTest, BulkIntervalOverManyRunsAnswersEachInTheOrderAsked) {
  // Enough runs for a store to sample them in slices side by side (SQLite: 8 runs per reader);
  // an unknown run anywhere fails the whole query.
  std::vector<std::string> ids;
  for (int r = 0; r < 37; ++r) {
    RunInfo run = NewRun();
    std::vector<MetricPoint> points;
    for (int step = 0; step < 50; ++step) points.push_back({"m", double(r * 1000 + step), 7, step});
    Log(run.run_id, points);
    ids.push_back(run.run_id);
  }
  std::reverse(ids.begin(), ids.end());  // not creation order
  auto got = store_->GetMetricHistoryBulkInterval(ids, "m", {}, {}, 1000);
  ASSERT_TRUE(got.ok()) << got.status().message();
  ASSERT_EQ(got->size(), ids.size() * 50);
  for (size_t i = 0; i < got->size(); ++i) {
    const size_t run = i / 50;
    EXPECT_EQ((*got)[i].run_id, ids[run]) << i;
    EXPECT_EQ((*got)[i].step, static_cast<int64_t>(i % 50)) << i;
    EXPECT_EQ((*got)[i].value, double((36 - run) * 1000 + i % 50)) << i;
  }
  ids[20] = "nope";
  EXPECT_EQ(store_->GetMetricHistoryBulkInterval(ids, "m", {}, {}, 10).status(),
            StatusCode::kNotFound);
}

TEST_P(TrackerStoreConformanceTest, ConcurrentBatchesToOneRunLoseAndDuplicateNothing) {
  RunInfo run = NewRun();
  constexpr int kThreads = 8, kBatches = 20, kPerBatch = 100;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int b = 0; b < kBatches; ++b) {
        std::vector<MetricPoint> batch;
        for (int i = 0; i < kPerBatch; ++i) {
          int64_t step = (static_cast<int64_t>(b) * kPerBatch + i) * kThreads + t;
          batch.push_back({i % 2 ? "b" : "a", static_cast<double>(step), t, step});
        }
        for (int attempt = 0; attempt < (b % 5 == 0 ? 2 : 1); ++attempt) {  // some retried
          if (!store_->LogBatch(run.run_id, batch, {{"p", "same"}}, {{"t", "x"}}).ok()) {
            ++failures;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  auto a = History(run.run_id, "a", 997);
  auto b = History(run.run_id, "b", 997);
  EXPECT_EQ(a.size() + b.size(), static_cast<size_t>(kThreads * kBatches * kPerBatch));
  for (const auto* h : {&a, &b}) {
    EXPECT_TRUE(std::adjacent_find(h->begin(), h->end(), [](const auto& x, const auto& y) {
                  return x.step >= y.step;
                }) == h->end());
  }
  auto latest = store_->GetRun(run.run_id)->latest_metrics;
  ASSERT_EQ(latest.size(), 2u);
  EXPECT_EQ(latest[1].step, kThreads * kBatches * kPerBatch - 1);
  auto sample = store_->GetMetricHistoryBulkInterval({run.run_id}, "a", {}, {}, 200);
  ASSERT_TRUE(sample.ok());
  EXPECT_EQ(OfRun(*sample, run.run_id, "a"), ExpectedSample(a, {}, {}, 200));
}

}  // namespace ferry::tracker::testing
