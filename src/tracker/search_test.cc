// Order, paging and page tokens of the run search (docs/semantics/mlflow.md, "Search").
#include "tracker/search.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ferry::tracker {
namespace {

Run MakeRun(std::string id, int64_t start, std::optional<double> loss) {
  tracker::Run r;
  r.info.run_id = std::move(id);
  r.info.start_time = start;
  if (loss) r.latest_metrics.push_back({"loss", *loss, 0, 0});
  return r;
}

std::vector<std::string> Ids(const std::vector<tracker::Run>& runs) {
  std::vector<std::string> ids;
  for (const auto& r : runs) ids.push_back(r.info.run_id);
  return ids;
}

using V = std::vector<std::string>;

TEST(SearchRunsTest, DefaultOrderIsStartTimeDescThenRunId) {
  std::vector<tracker::Run> runs = {MakeRun("b", 1, 0.1), MakeRun("a", 1, 0.2),
                                    MakeRun("c", 3, 0.3)};
  auto page = SearchRuns(runs, {});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(Ids(page->items), (V{"c", "a", "b"}));
  EXPECT_EQ(page->next_page_token, "");
}

TEST(SearchRunsTest, OrderByMetricWithMissingAndNanLast) {
  std::vector<tracker::Run> runs = {MakeRun("a", 1, 0.5), MakeRun("b", 2, std::nullopt),
                                    MakeRun("c", 3, 0.1), MakeRun("d", 4, std::nan("")),
                                    MakeRun("e", 5, 0.9)};
  RunSearchRequest req;
  req.order_by = {"metrics.loss DESC"};
  auto page = SearchRuns(runs, req);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(Ids(page->items), (V{"e", "a", "c", "d", "b"}));
  req.order_by = {"metrics.loss"};
  page = SearchRuns(runs, req);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(Ids(page->items), (V{"c", "a", "e", "d", "b"}));
  req.order_by = {"metrics.`loss` asc"};
  page = SearchRuns(runs, req);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(Ids(page->items), (V{"c", "a", "e", "d", "b"}));
}

TEST(SearchRunsTest, OrderByAttributesAndParams) {
  std::vector<tracker::Run> runs = {MakeRun("a", 3, 0), MakeRun("b", 1, 0), MakeRun("c", 2, 0)};
  runs[0].params.push_back({"lr", "0.3"});
  runs[1].params.push_back({"lr", "0.1"});
  RunSearchRequest req;
  req.order_by = {"attributes.start_time"};
  EXPECT_EQ(Ids(SearchRuns(runs, req)->items), (V{"b", "c", "a"}));
  req.order_by = {"start_time DESC"};
  EXPECT_EQ(Ids(SearchRuns(runs, req)->items), (V{"a", "c", "b"}));
  req.order_by = {"params.lr DESC"};
  EXPECT_EQ(Ids(SearchRuns(runs, req)->items), (V{"a", "b", "c"}));
  req.order_by = {"run_id DESC"};
  EXPECT_EQ(Ids(SearchRuns(runs, req)->items), (V{"c", "b", "a"}));
}

TEST(SearchRunsTest, BadOrderByIsInvalidArgument) {
  RunSearchRequest req;
  for (const char* bad : {"metrics.loss sideways", "colour", "metrics.", "nope.x DESC"}) {
    req.order_by = {bad};
    auto page = SearchRuns({MakeRun("a", 1, 0)}, req);
    ASSERT_FALSE(page.ok()) << bad;
    EXPECT_EQ(page.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(SearchRunsTest, FilterThenPage) {
  std::vector<tracker::Run> runs;
  for (int i = 0; i < 25; ++i) {
    runs.push_back(MakeRun("r" + std::to_string(100 + i), i, i < 20 ? 0.5 : 2.0));
  }
  RunSearchRequest req;
  req.filter = "metrics.loss < 1";
  req.max_results = 8;
  std::vector<std::string> seen;
  for (int pages = 0; pages < 10; ++pages) {
    auto page = SearchRuns(runs, req);
    ASSERT_TRUE(page.ok()) << page.status().message();
    for (const auto& r : page->items) seen.push_back(r.info.run_id);
    if (page->next_page_token.empty()) break;
    req.page_token = page->next_page_token;
  }
  ASSERT_EQ(seen.size(), 20u);
  EXPECT_EQ(seen.front(), "r119");
  EXPECT_EQ(seen.back(), "r100");
}

TEST(SearchRunsTest, MaxResultsBounds) {
  RunSearchRequest req;
  req.max_results = 0;
  EXPECT_FALSE(SearchRuns({}, req).ok());
  req.max_results = kMaxSearchResults + 1;
  EXPECT_FALSE(SearchRuns({}, req).ok());
  req.max_results = kMaxSearchResults;
  EXPECT_TRUE(SearchRuns({}, req).ok());
}

TEST(PageTokenTest, RoundTripsAndRejectsGarbage) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{123456789}}) {
    auto back = DecodePageToken(EncodePageToken(n));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, n);
  }
  EXPECT_EQ(*DecodePageToken(""), 0u);
  for (const char* bad : {"x", "!!!!", "eyJvZmZzZXQiOiAtMX0=", "e30=", "abc=d",
                          "====", "eyJvZmZzZXQiOiAxMjM0NTY3ODkwMTIzNDU2Nzg5fQ=="}) {
    auto r = DecodePageToken(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("invalid page_token"), std::string::npos);
  }
  EXPECT_FALSE(DecodePageToken(std::string(100000, 'A')).ok());
}

TEST(PageTokenTest, AnOffsetPastTheEndIsAnEmptyPage) {
  RunSearchRequest req;
  req.page_token = EncodePageToken(50);
  auto page = SearchRuns({MakeRun("a", 1, 0)}, req);
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->items.empty());
  EXPECT_EQ(page->next_page_token, "");
}

}  // namespace
}  // namespace ferry::tracker
