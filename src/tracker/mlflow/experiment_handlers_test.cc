// Experiments, errors and request parsing of the MLflow handlers (docs/semantics/mlflow.md).
#include <gtest/gtest.h>

#include "tracker/mlflow/mlflow_test_util.h"

namespace ferry::tracker::mlflow {
namespace {

TEST_F(MlflowHandlersTest, CreateAndGetExperiment) {
  std::string id = NewExperiment("exp-a");
  Answer a = Get("experiments/get", {{"experiment_id", id}});
  ASSERT_EQ(a.status, 200) << a.raw;
  const json& e = a.body["experiment"];
  EXPECT_EQ(e["name"], "exp-a");
  EXPECT_EQ(e["experiment_id"], id);
  EXPECT_EQ(e["artifact_location"], "mlflow-artifacts:/" + id);
  EXPECT_EQ(e["lifecycle_stage"], "active");
  EXPECT_TRUE(e["creation_time"].is_number_integer());  // int64 as a number, as MLflow sends it
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

TEST_F(MlflowHandlersTest, UnknownEndpointsAreEndpointNotFoundAsMlflowAnswersThem) {
  // MLflow's own answer to an endpoint it lacks, which clients know, not a bare 404.
  ExpectError(Post("logged-models/nonsense/deeper/path", json::object()), 404, "ENDPOINT_NOT_FOUND",
              "POST /api/2.0/mlflow/logged-models/nonsense/deeper/path");
  ExpectError(Call("GET", "/ajax-api/2.0/mlflow/registered-models/frobnicate", ""), 404,
              "ENDPOINT_NOT_FOUND", "registered-models/frobnicate");
  ExpectError(Call("DELETE", "/api/3.0/mlflow/traces", ""), 404, "ENDPOINT_NOT_FOUND", "traces");
  // The routes that exist still win.
  EXPECT_EQ(Get("experiments/search", {{"max_results", "5"}}).status, 200);
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

TEST_F(MlflowHandlersTest, RetentionTagsAreCheckedWhenSet) {
  std::string id = NewExperiment("retained");
  auto set = [&](const std::string& key, const std::string& value) {
    return Post("experiments/set-experiment-tag",
                {{"experiment_id", id}, {"key", key}, {"value", value}});
  };
  EXPECT_EQ(set("ferry.retention.keep_last", "2").status, 200);
  EXPECT_EQ(set("ferry.retention.goal", "max").status, 200);
  ExpectError(set("ferry.retention.keep_last", "abc"), 400, "INVALID_PARAMETER_VALUE",
              "ferry.retention.keep_last");
  ExpectError(set("ferry.retention.goal", "lowest"), 400, "INVALID_PARAMETER_VALUE",
              "'min' or 'max'");
  ExpectError(set("ferry.retention.keep", "1"), 400, "INVALID_PARAMETER_VALUE",
              "not a retention setting");
  ExpectError(
      Post("experiments/create",
           {{"name", "bad-policy"},
            {"tags", json::array({{{"key", "ferry.retention.keep_best"}, {"value", "-1"}}})}}),
      400, "INVALID_PARAMETER_VALUE", "ferry.retention.keep_best");
}

TEST_F(MlflowHandlersTest, SearchesReadEverythingElseThatPostsWrites) {
  using server::Access;
  for (const char* prefix : {"/api/2.0/mlflow/", "/ajax-api/2.0/mlflow/"}) {
    std::string p = prefix;
    EXPECT_EQ(router_.AccessFor("POST", p + "runs/search"), Access::kRead);
    EXPECT_EQ(router_.AccessFor("POST", p + "experiments/search"), Access::kRead);
    EXPECT_EQ(router_.AccessFor("GET", p + "runs/get"), Access::kRead);
    EXPECT_EQ(router_.AccessFor("POST", p + "runs/log-batch"), Access::kWrite);
    EXPECT_EQ(router_.AccessFor("POST", p + "experiments/set-experiment-tag"), Access::kWrite);
    EXPECT_EQ(router_.AccessFor("POST", p + "runs/delete"), Access::kWrite);
  }
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
