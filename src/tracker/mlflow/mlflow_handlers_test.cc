// The MLflow handlers through the router, with request values over the MemoryTrackerStore: what
// docs/semantics/mlflow.md promises, without sockets.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "tracker/memory/memory_tracker_store.h"
#include "tracker/mlflow/mlflow_routes.h"

namespace ferry::tracker::mlflow {
namespace {

using nlohmann::json;
using Query = std::vector<std::pair<std::string, std::string>>;

struct Answer {
  int status = 0;
  json body;
  std::string raw;
};

class MlflowHandlersTest : public ::testing::Test {
 protected:
  MlflowHandlersTest() {
    auto added = MlflowRoutes(MakeMemoryTrackerStore(), MlflowOptions{})(router_);
    EXPECT_TRUE(added.ok()) << added.ToString();
  }

  Answer Call(std::string method, std::string path, std::string body, Query query = {}) {
    server::Request r;
    r.method = std::move(method);
    r.path = std::move(path);
    r.body = std::move(body);
    r.query = std::move(query);
    server::Response resp = router_.Dispatch(std::move(r));
    Answer a{resp.status, json::parse(resp.body, nullptr, false), resp.body};
    return a;
  }
  Answer Post(const std::string& endpoint, const json& body, const std::string& prefix = kApi) {
    return Call("POST", prefix + endpoint, body.dump());
  }
  Answer Get(const std::string& endpoint, Query query, const std::string& prefix = kApi) {
    return Call("GET", prefix + endpoint, "", std::move(query));
  }

  std::string NewExperiment(const std::string& name) {
    Answer a = Post("experiments/create", {{"name", name}});
    EXPECT_EQ(a.status, 200) << a.raw;
    return a.body.value("experiment_id", "");
  }
  std::string NewRun(const std::string& experiment_id) {
    Answer a = Post("runs/create",
                    {{"experiment_id", experiment_id}, {"start_time", 1000}, {"user_id", "alice"}});
    EXPECT_EQ(a.status, 200) << a.raw;
    return a.body["run"]["info"].value("run_id", "");
  }
  static void ExpectError(const Answer& a, int status, const std::string& code,
                          const std::string& message_part) {
    EXPECT_EQ(a.status, status) << a.raw;
    EXPECT_EQ(a.body.value("error_code", ""), code) << a.raw;
    EXPECT_NE(a.body.value("message", "").find(message_part), std::string::npos) << a.raw;
    EXPECT_EQ(a.raw.find('\n'), std::string::npos);
  }

  static constexpr const char* kApi = "/api/2.0/mlflow/";
  server::Router router_;
};

TEST_F(MlflowHandlersTest, CreateAndGetExperiment) {
  std::string id = NewExperiment("exp-a");
  Answer a = Get("experiments/get", {{"experiment_id", id}});
  ASSERT_EQ(a.status, 200) << a.raw;
  const json& e = a.body["experiment"];
  EXPECT_EQ(e["name"], "exp-a");
  EXPECT_EQ(e["experiment_id"], id);
  EXPECT_EQ(e["artifact_location"], "mlflow-artifacts:/" + id);
  EXPECT_EQ(e["lifecycle_stage"], "active");
  EXPECT_TRUE(e["creation_time"].is_string());  // int64 as a string
  Answer by_name = Get("experiments/get-by-name", {{"experiment_name", "exp-a"}});
  EXPECT_EQ(by_name.body["experiment"]["experiment_id"], id);
  Answer dflt = Get("experiments/get", {{"experiment_id", "0"}});
  EXPECT_EQ(dflt.body["experiment"]["name"], "Default");
}

TEST_F(MlflowHandlersTest, ErrorsAreMlflowBodies) {
  NewExperiment("dup");
  ExpectError(Post("experiments/create", {{"name", "dup"}}), 400, "RESOURCE_ALREADY_EXISTS", "dup");
  ExpectError(Get("experiments/get-by-name", {{"experiment_name", "nope"}}), 404,
              "RESOURCE_DOES_NOT_EXIST", "Could not find experiment with name 'nope'");
  ExpectError(Get("experiments/get", {{"experiment_id", "999"}}), 404, "RESOURCE_DOES_NOT_EXIST",
              "999");
  ExpectError(Get("runs/get", {{"run_id", "0123456789abcdef0123456789abcdef"}}), 404,
              "RESOURCE_DOES_NOT_EXIST", "Run with id=0123456789abcdef0123456789abcdef not found");
  ExpectError(Post("experiments/create", json::object()), 400, "INVALID_PARAMETER_VALUE", "'name'");
  ExpectError(Post("experiments/create", {{"name", json::array({"x"})}}), 400,
              "INVALID_PARAMETER_VALUE", "parameter 'name'");
}

TEST_F(MlflowHandlersTest, MalformedJsonIsBadRequestOnOneLine) {
  ExpectError(Call("POST", "/api/2.0/mlflow/experiments/create", "{\"name\": \n"), 400,
              "BAD_REQUEST", "malformed JSON body");
  ExpectError(Call("POST", "/api/2.0/mlflow/runs/log-batch", "[1,2]"), 400, "BAD_REQUEST",
              "expected a JSON object");
  ExpectError(Post("runs/log-batch", {{"run_id", "x"}, {"metrics", "nope"}}), 400,
              "INVALID_PARAMETER_VALUE", "'metrics'");
}

TEST_F(MlflowHandlersTest, HostileBodiesAreAnsweredNotCrashedOn) {
  std::string deep = std::string(200000, '[') + std::string(200000, ']');
  ExpectError(Call("POST", "/api/2.0/mlflow/runs/log-batch", deep), 400, "BAD_REQUEST",
              "nested deeper than 32 levels");
  std::string nested = "{\"run_id\": \"x\", \"metrics\": " + deep + "}";
  ExpectError(Call("POST", "/api/2.0/mlflow/runs/log-batch", nested), 400, "BAD_REQUEST",
              "nested deeper");
  ExpectError(Call("POST", "/api/2.0/mlflow/runs/log-batch", std::string("{\"a\": \"\xff\xfe\"}")),
              400, "BAD_REQUEST", "malformed JSON body");
  ExpectError(Call("POST", "/api/2.0/mlflow/experiments/create", std::string(1 << 20, '{')), 400,
              "BAD_REQUEST", "malformed JSON body");
}

TEST_F(MlflowHandlersTest, AjaxPrefixAndUnknownFields) {
  Answer a = Post("experiments/create", {{"name", "ajax"}, {"surprise", {{"x", 1}}}},
                  "/ajax-api/2.0/mlflow/");
  ASSERT_EQ(a.status, 200) << a.raw;
  Answer b = Get("experiments/get-by-name", {{"experiment_name", "ajax"}}, "/ajax-api/2.0/mlflow/");
  EXPECT_EQ(b.status, 200);
}

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
  EXPECT_EQ(got.body["run"]["info"]["start_time"], "1000");
  Answer up = Post("runs/update", {{"run_uuid", run}, {"status", "FINISHED"}, {"end_time", 2000}});
  ASSERT_EQ(up.status, 200) << up.raw;
  EXPECT_EQ(up.body["run_info"]["status"], "FINISHED");
  EXPECT_EQ(up.body["run_info"]["end_time"], "2000");
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
    EXPECT_EQ(m["step"], std::to_string(i));
    EXPECT_EQ(m["timestamp"], std::to_string(5000 + i));
  }
  Answer paged =
      Get("metrics/get-history", {{"run_id", run}, {"metric_key", "loss"}, {"max_results", "300"}});
  ASSERT_EQ(paged.body["metrics"].size(), 300u);
  EXPECT_FALSE(paged.body.value("next_page_token", "").empty());
  Answer got = Get("runs/get", {{"run_id", run}});
  EXPECT_EQ(got.body["run"]["data"]["metrics"][0]["step"], "999");
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

TEST_F(MlflowHandlersTest, SearchAndListExperiments) {
  NewExperiment("alpha-1");
  std::string b = NewExperiment("beta-1");
  NewExperiment("alpha-2");
  ASSERT_EQ(Post("experiments/set-experiment-tag",
                 {{"experiment_id", b}, {"key", "team"}, {"value", "x"}})
                .status,
            200);
  Answer a = Post("experiments/search", {{"filter", "name LIKE 'alpha%'"}, {"order_by", {"name"}}});
  ASSERT_EQ(a.status, 200) << a.raw;
  ASSERT_EQ(a.body["experiments"].size(), 2u);
  EXPECT_EQ(a.body["experiments"][0]["name"], "alpha-1");
  Answer t = Get("experiments/search", {{"filter", "tags.team = 'x'"}});
  ASSERT_EQ(t.body["experiments"].size(), 1u) << t.raw;
  EXPECT_EQ(t.body["experiments"][0]["experiment_id"], b);
  Answer p = Get("experiments/search", {{"max_results", "2"}});
  EXPECT_EQ(p.body["experiments"].size(), 2u);
  EXPECT_TRUE(p.body.contains("next_page_token"));
  ASSERT_EQ(Post("experimentsset-experiment-tag",  // npm mlflow 2.0.7's path
                 {{"experiment_id", b}, {"key", "k2"}, {"value", "v"}})
                .status,
            200);
  ASSERT_EQ(Post("experiments/delete", {{"experiment_id", b}}).status, 200);
  EXPECT_EQ(Get("experiments/list", {}).body["experiments"].size(), 3u);  // with Default
  EXPECT_EQ(Get("experiments/list", {{"view_type", "DELETED_ONLY"}}).body["experiments"].size(),
            1u);
  ASSERT_EQ(Post("experiments/restore", {{"experiment_id", b}}).status, 200);
  ASSERT_EQ(Post("experiments/update", {{"experiment_id", b}, {"new_name", "gamma"}}).status, 200);
  EXPECT_EQ(Get("experiments/get", {{"experiment_id", b}}).body["experiment"]["name"], "gamma");
  ExpectError(Get("experiments/search", {{"filter", "metrics.x > 1"}}), 400,
              "INVALID_PARAMETER_VALUE", "experiments have no metrics");
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
  EXPECT_EQ(a.body["metrics"][0]["step"], "10");
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

TEST_F(MlflowHandlersTest, ServerInfoAndDeletedRuns) {
  Answer a = Get("server-info", {}, "/api/3.0/mlflow/");
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(a.body["store_type"], "SqlStore");
  std::string run = NewRun("0");
  ASSERT_EQ(Post("runs/delete", {{"run_id", run}}).status, 200);
  Answer logged = Post("runs/set-tag", {{"run_id", run}, {"key", "k"}, {"value", "v"}});
  EXPECT_EQ(logged.status, 400) << logged.raw;
  Answer wrong_method = Call("GET", "/api/2.0/mlflow/runs/create", "");
  EXPECT_EQ(wrong_method.status, 405);
}

}  // namespace
}  // namespace ferry::tracker::mlflow
