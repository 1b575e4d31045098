// Runs, logging, search and metric histories of the MLflow handlers (docs/semantics/mlflow.md).
#include <gtest/gtest.h>

#include "tracker/mlflow/mlflow_test_util.h"

namespace ferry::tracker::mlflow {
namespace {

TEST_F(MlflowHandlersTest, RunLifecycleWithEnumsAsNamesOrNumbers) {
  std::string exp = NewExperiment("runs");
  std::string run = NewRun(exp);
  ASSERT_EQ(run.size(), 32u);
  Answer got = Get("runs/get", {{"run_id", run}});
  ASSERT_EQ(got.status, 200) << got.raw;
  EXPECT_EQ(got.body["run"]["info"]["status"], "RUNNING");
  EXPECT_EQ(got.body["run"]["info"]["run_uuid"], run);
  EXPECT_EQ(got.body["run"]["info"]["artifact_uri"],
            "mlflow-artifacts:/" + exp + "/" + run + "/artifacts");
  EXPECT_EQ(got.body["run"]["info"]["start_time"], 1000);  // int64 as a JSON number
  Answer up = Post("runs/update", {{"run_uuid", run}, {"status", "FINISHED"}, {"end_time", 2000}});
  ASSERT_EQ(up.status, 200) << up.raw;
  EXPECT_EQ(up.body["run_info"]["status"], "FINISHED");
  EXPECT_EQ(up.body["run_info"]["end_time"], 2000);
  up = Post("runs/update", {{"run_id", run}, {"status", 4}});
  EXPECT_EQ(up.body["run_info"]["status"], "FAILED");
  ExpectError(Post("runs/update", {{"run_id", run}, {"status", "DONE"}}), 400,
              "INVALID_PARAMETER_VALUE", "'status'");
  ASSERT_EQ(Post("runs/delete", {{"run_id", run}}).status, 200);
  EXPECT_EQ(Get("runs/get", {{"run_id", run}}).body["run"]["info"]["lifecycle_stage"], "deleted");
  ASSERT_EQ(Post("runs/restore", {{"run_id", run}}).status, 200);
  EXPECT_EQ(Get("runs/get", {{"run_id", run}}).body["run"]["info"]["lifecycle_stage"], "active");
}

TEST_F(MlflowHandlersTest, LogBatchAndExactHistory) {
  std::string run = NewRun("0");
  json metrics = json::array();
  for (int i = 0; i < 1000; ++i) {
    metrics.push_back(
        {{"key", "loss"}, {"value", 1.0 / (i + 1)}, {"timestamp", 5000 + i}, {"step", i}});
  }
  json body = {{"run_id", run}, {"metrics", metrics}};
  ASSERT_EQ(Post("runs/log-batch", body).status, 200);
  json more = {
      {"run_id", run}, {"metrics", metrics}, {"params", {{{"key", "lr"}, {"value", "0.1"}}}}};
  ExpectError(Post("runs/log-batch", more), 400, "INVALID_PARAMETER_VALUE",
              "1000 metrics, params and tags in total");
  ASSERT_EQ(Post("runs/log-batch", body).status, 200);  // a retry: no duplicate points
  Answer h = Get("metrics/get-history", {{"run_uuid", run}, {"metric_key", "loss"}});
  ASSERT_EQ(h.status, 200) << h.raw.substr(0, 300);
  ASSERT_EQ(h.body["metrics"].size(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    const json& m = h.body["metrics"][i];
    EXPECT_EQ(m["value"].get<double>(), 1.0 / (i + 1));
    EXPECT_EQ(m["step"], i);
    EXPECT_EQ(m["timestamp"], 5000 + i);
  }
  Answer paged =
      Get("metrics/get-history", {{"run_id", run}, {"metric_key", "loss"}, {"max_results", "300"}});
  ASSERT_EQ(paged.body["metrics"].size(), 300u);
  EXPECT_FALSE(paged.body.value("next_page_token", "").empty());
  Answer got = Get("runs/get", {{"run_id", run}});
  EXPECT_EQ(got.body["run"]["data"]["metrics"][0]["step"], 999);
}

TEST_F(MlflowHandlersTest, LogBatchLimits) {
  std::string run = NewRun("0");
  json metrics = json::array();
  for (int i = 0; i < 1001; ++i) metrics.push_back({{"key", "m"}, {"value", 1}, {"timestamp", i}});
  ExpectError(Post("runs/log-batch", {{"run_id", run}, {"metrics", metrics}}), 400,
              "INVALID_PARAMETER_VALUE", "at most 1000 metrics");
  json params = json::array();
  for (int i = 0; i < 101; ++i)
    params.push_back({{"key", "p" + std::to_string(i)}, {"value", "v"}});
  ExpectError(Post("runs/log-batch", {{"run_id", run}, {"params", params}}), 400,
              "INVALID_PARAMETER_VALUE", "at most 100 params");
  ExpectError(
      Post("runs/log-parameter", {{"run_id", run}, {"key", std::string(251, 'k')}, {"value", "v"}}),
      400, "INVALID_PARAMETER_VALUE", "limit is 250");
  ExpectError(Post("runs/log-parameter",
                   {{"run_id", run}, {"key", "k"}, {"value", std::string(6001, 'v')}}),
              400, "INVALID_PARAMETER_VALUE", "limit is 6000");
  ExpectError(Post("runs/set-tag", {{"run_id", run}, {"key", "../x"}, {"value", "v"}}), 400,
              "INVALID_PARAMETER_VALUE", "'..'");
  ExpectError(Post("runs/log-metric", {{"run_id", run}, {"key", "m"}, {"value", 1}}), 400,
              "INVALID_PARAMETER_VALUE", "'timestamp'");
  ExpectError(
      Post("runs/log-batch", {{"run_id", run}, {"metrics", {{{"key", "m"}, {"timestamp", 1}}}}}),
      400, "INVALID_PARAMETER_VALUE", "'metrics[0].value'");
}

// Issue 28: a 15 MB run name, a timestamp of 2^63 and 1e999 were accepted or a 500.
TEST_F(MlflowHandlersTest, NamesTimesAndNumbersAreBounded) {
  std::string run = NewRun("0");
  ExpectError(Post("runs/update", {{"run_id", run}, {"run_name", std::string(8001, 'n')}}), 400,
              "INVALID_PARAMETER_VALUE", "run name of 8001 bytes");
  ExpectError(Post("runs/create", {{"experiment_id", "0"}, {"user_id", std::string(8001, 'u')}}),
              400, "INVALID_PARAMETER_VALUE", "user_id");
  ExpectError(Post("experiments/search", {{"filter", std::string(70000, ' ')}}), 400,
              "INVALID_PARAMETER_VALUE", "at most 65536");
  for (json ts : {json(-1), json(253402300800000), json(uint64_t{1} << 63)}) {
    Answer a =
        Post("runs/log-metric", {{"run_id", run}, {"key", "m"}, {"value", 1}, {"timestamp", ts}});
    EXPECT_EQ(a.status, 400) << ts.dump();
  }
  ExpectError(Post("runs/update", {{"run_id", run}, {"end_time", -5}}), 400,
              "INVALID_PARAMETER_VALUE", "end_time");
  ExpectError(Call("POST", std::string(kApi) + "runs/log-metric",
                   R"({"run_id": ")" + run + R"(", "key": "m", "value": 1e999, "timestamp": 1})"),
              400, "BAD_REQUEST", "a number is out of range");
  EXPECT_EQ(Post("runs/update", {{"run_id", run}, {"run_name", std::string(8000, 'n')}}).status,
            200);
}

TEST_F(MlflowHandlersTest, ParamsAreImmutableTagsAreNot) {
  std::string run = NewRun("0");
  json p = {{"run_id", run}, {"key", "lr"}, {"value", "0.1"}};
  ASSERT_EQ(Post("runs/log-parameter", p).status, 200);
  ASSERT_EQ(Post("runs/log-parameter", p).status, 200);  // the same value again: fine
  p["value"] = "0.2";
  ExpectError(Post("runs/log-parameter", p), 400, "INVALID_PARAMETER_VALUE", "lr");
  ASSERT_EQ(Post("runs/set-tag", {{"run_id", run}, {"key", "t"}, {"value", "1"}}).status, 200);
  ASSERT_EQ(Post("runs/set-tag", {{"run_id", run}, {"key", "t"}, {"value", "2"}}).status, 200);
  Answer got = Get("runs/get", {{"run_id", run}});
  bool found = false;
  for (const auto& t : got.body["run"]["data"]["tags"])
    found |= t["key"] == "t" && t["value"] == "2";
  EXPECT_TRUE(found) << got.raw;
  ASSERT_EQ(Post("runs/delete-tag", {{"run_id", run}, {"key", "t"}}).status, 200);
  got = Get("runs/get", {{"run_id", run}});
  for (const auto& t : got.body["run"]["data"]["tags"]) EXPECT_NE(t["key"], "t");
}

TEST_F(MlflowHandlersTest, SearchRunsFiltersOrdersAndPages) {
  std::string exp = NewExperiment("search");
  std::vector<std::string> runs;
  for (int i = 0; i < 5; ++i) {
    runs.push_back(NewRun(exp));
    ASSERT_EQ(Post("runs/log-metric",
                   {{"run_id", runs.back()}, {"key", "loss"}, {"value", i * 0.4}, {"timestamp", 1}})
                  .status,
              200);
  }
  Answer a = Post("runs/search", {{"experiment_ids", {exp}},
                                  {"filter", "metrics.loss < 1"},
                                  {"order_by", {"metrics.loss DESC"}},
                                  {"max_results", 2}});
  ASSERT_EQ(a.status, 200) << a.raw;
  ASSERT_EQ(a.body["runs"].size(), 2u);
  EXPECT_EQ(a.body["runs"][0]["info"]["run_id"], runs[2]);
  EXPECT_EQ(a.body["runs"][1]["info"]["run_id"], runs[1]);
  Answer b = Post("runs/search", {{"experiment_ids", {exp}},
                                  {"filter", "metrics.loss < 1"},
                                  {"order_by", {"metrics.loss DESC"}},
                                  {"max_results", 2},
                                  {"page_token", a.body["next_page_token"]}});
  ASSERT_EQ(b.body["runs"].size(), 1u);
  EXPECT_EQ(b.body["runs"][0]["info"]["run_id"], runs[0]);
  EXPECT_FALSE(b.body.contains("next_page_token"));
  Answer g = Get("runs/search", {{"experiment_ids", exp}, {"filter", "metrics.loss >= 1"}});
  EXPECT_EQ(g.body["runs"].size(), 2u) << g.raw;
  ExpectError(Post("runs/search", {{"experiment_ids", {exp}}, {"page_token", "garbage!"}}), 400,
              "INVALID_PARAMETER_VALUE", "page_token");
  ExpectError(Post("runs/search", {{"experiment_ids", {exp}}, {"filter", "metrics.loss < 'x"}}),
              400, "INVALID_PARAMETER_VALUE", "unterminated");
  ASSERT_EQ(Post("runs/delete", {{"run_id", runs[0]}}).status, 200);
  Answer deleted =
      Post("runs/search", {{"experiment_ids", {exp}}, {"run_view_type", "DELETED_ONLY"}});
  ASSERT_EQ(deleted.body["runs"].size(), 1u);
  Answer all = Post("runs/search", {{"experiment_ids", {exp}}, {"run_view_type", 3}});
  EXPECT_EQ(all.body["runs"].size(), 5u);
}

TEST_F(MlflowHandlersTest, BulkIntervalTakesRepeatedRunIds) {
  std::string r1 = NewRun("0"), r2 = NewRun("0");
  for (const auto& run : {r1, r2}) {
    json metrics = json::array();
    for (int i = 0; i < 100; ++i) {
      metrics.push_back({{"key", "loss"}, {"value", i}, {"timestamp", i}, {"step", i}});
    }
    ASSERT_EQ(Post("runs/log-batch", {{"run_id", run}, {"metrics", metrics}}).status, 200);
  }
  Answer a = Get("metrics/get-history-bulk-interval", {{"run_ids", r1},
                                                       {"run_ids", r2},
                                                       {"metric_key", "loss"},
                                                       {"start_step", "10"},
                                                       {"end_step", "20"},
                                                       {"max_results", "50"}});
  ASSERT_EQ(a.status, 200) << a.raw;
  ASSERT_EQ(a.body["metrics"].size(), 22u) << a.raw;
  EXPECT_EQ(a.body["metrics"][0]["run_id"], r1);
  EXPECT_EQ(a.body["metrics"][0]["step"], 10);
  EXPECT_EQ(a.body["metrics"][21]["run_id"], r2);
  ExpectError(Get("metrics/get-history-bulk-interval", {{"metric_key", "loss"}}), 400,
              "INVALID_PARAMETER_VALUE", "run_ids");
  ExpectError(Get("metrics/get-history-bulk-interval",
                  {{"run_ids", r1}, {"metric_key", "loss"}, {"start_step", "5"}}),
              400, "INVALID_PARAMETER_VALUE", "both");
  ExpectError(Get("metrics/get-history-bulk-interval",
                  {{"run_ids", r1}, {"metric_key", "loss"}, {"max_results", "x"}}),
              400, "INVALID_PARAMETER_VALUE", "'max_results'");
}

TEST_F(MlflowHandlersTest, NonFiniteValuesRoundTripAsStrings) {
  std::string run = NewRun("0");
  ASSERT_EQ(Post("runs/log-batch",
                 {{"run_id", run},
                  {"metrics",
                   {{{"key", "m"}, {"value", "NaN"}, {"timestamp", 1}},
                    {{"key", "m"}, {"value", "-Infinity"}, {"timestamp", 2}, {"step", "1"}}}}})
                .status,
            200);
  Answer h = Get("metrics/get-history", {{"run_id", run}, {"metric_key", "m"}});
  ASSERT_EQ(h.body["metrics"].size(), 2u) << h.raw;
  EXPECT_EQ(h.body["metrics"][0]["value"], "NaN");
  EXPECT_EQ(h.body["metrics"][1]["value"], "-Infinity");
}

}  // namespace
}  // namespace ferry::tracker::mlflow
