#include "tracker/metric_batch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tracker/store_rules.h"

namespace ferry::tracker::metrics {
namespace {

TEST(MetricBatch, APointIsFoldedIntoEveryLevelAndTheLatestPerKey) {
  MetricBatch b;
  EXPECT_TRUE(b.empty());
  b.Add(1, {"", 0.5, 10, 3});
  b.Add(1, {"", 0.4, 11, 20});
  b.Add(2, {"", 9, 12, 1});
  // Key 1: steps 3 and 20 share every level's bucket 0 except level 0 (width 16): 3 and 20 are
  // in buckets 0 and 1 there.
  EXPECT_EQ(b.summaries().size(),
            sampling::kLevelWidths.size() + 1 + sampling::kLevelWidths.size());
  EXPECT_EQ(b.summaries().at({1, 0, 0}).count, 1);
  EXPECT_EQ(b.summaries().at({1, 0, 1}).count, 1);
  EXPECT_EQ(b.summaries().at({1, 1, 0}).count, 2);
  EXPECT_EQ(b.latest().at(1).step, 20);
  EXPECT_EQ(b.latest().at(2).value, 9);
}

TEST(MetricBatch, StoredSummariesMergeAndALaterStoredPointWins) {
  MetricBatch b;
  b.Add(1, {"", 0.5, 10, 3});
  sampling::Summary stored;
  stored.Add({"", 0.1, 5, 1});
  b.MergeStored({1, 1, 0}, stored);
  b.MergeStored({9, 1, 0}, stored);  // not touched by the batch: ignored
  EXPECT_EQ(b.summaries().at({1, 1, 0}).count, 2);
  EXPECT_EQ(b.summaries().at({1, 1, 0}).min.value, 0.1);
  EXPECT_EQ(b.summaries().count({9, 1, 0}), 0u);

  b.KeepStoredIfLater(1, {"", 0, 0, 2});  // earlier: the batch's point stays
  EXPECT_EQ(b.latest().count(1), 1u);
  b.KeepStoredIfLater(1, {"", 0.5, 10, 3});  // the same point: nothing to write
  EXPECT_EQ(b.latest().count(1), 0u);
}

TEST(HistoryToken, RoundTripsEveryValueIncludingNaNAndInfinities) {
  for (double v : {0.0, -1.5, std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity(), std::nan("")}) {
    MetricPoint p{"", v, -7, 1'000'000'000'000};
    auto c = ParseHistoryToken(HistoryToken(p));
    ASSERT_TRUE(c.ok()) << HistoryToken(p);
    ASSERT_TRUE(c->has_value());
    EXPECT_EQ(**c, (HistoryCursor{p.step, p.timestamp_ms, rules::OrderedBits(v)}));
  }
  EXPECT_FALSE(ParseHistoryToken("").value().has_value());
}

TEST(HistoryToken, AnythingElseIsRefusedNamingTheToken) {
  for (const char* bad : {"1", "1:2", "1:2:", "1:2:3:", "1:2:3x", "a:b:c", ":1:2", "1::2"}) {
    auto c = ParseHistoryToken(bad);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_EQ(c.status().message(),
              std::string("GetMetricHistory: invalid page token '") + bad + "'");
  }
}

}  // namespace
}  // namespace ferry::tracker::metrics
