#include "job/track/run_tracker.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "http/testing/local_http_server.h"

namespace ferry::job::track {
namespace {

using http::testing::LocalHttpServer;
using http::testing::ServerRequest;
using http::testing::ServerResponse;
using nlohmann::json;

// A tracking server that knows one experiment and creates run "r1" with `artifact_uri`.
LocalHttpServer FakeServer(std::string artifact_uri) {
  return LocalHttpServer([artifact_uri](const ServerRequest& r) -> ServerResponse {
    if (r.target.starts_with("/api/2.0/mlflow/experiments/get-by-name")) {
      return {.body = R"({"experiment":{"experiment_id":"3","name":"Default"}})"};
    }
    if (r.target == "/api/2.0/mlflow/runs/create") {
      return {.body = json{{"run",
                            {{"info",
                              {{"run_id", "r1"},
                               {"experiment_id", "3"},
                               {"artifact_uri", artifact_uri},
                               {"start_time", 1}}}}}}
                          .dump()};
    }
    return {.body = "{}"};
  });
}

std::vector<ServerRequest> Calls(const LocalHttpServer& s, std::string_view prefix) {
  std::vector<ServerRequest> out;
  for (auto& r : s.requests()) {
    if (r.target.starts_with(prefix)) out.push_back(r);
  }
  return out;
}

RunPlan Plan() {
  RunPlan plan;
  plan.id = {.job = "J", .attempt = "0", .rank = "0"};
  plan.options.command = {"python3", "train.py"};
  return plan;
}

TEST(RunTrackerTest, CreatesTheRunGivesTheVariablesAndEndsIt) {
  LocalHttpServer server = FakeServer("mlflow-artifacts:/3/r1/artifacts");
  storage::StoreRegistry registry;
  MapEnvironment env;
  env.Set("MLFLOW_TRACKING_TOKEN", "tok-12345678");
  RunTracker tracker({.url = server.base_url(), .system_metrics_interval = std::chrono::seconds(0)},
                     registry, env);
  auto vars = tracker.BeforeStart(Plan());
  std::map<std::string, std::string> v(vars.begin(), vars.end());
  EXPECT_EQ(v["MLFLOW_RUN_ID"], "r1");
  EXPECT_EQ(v["MLFLOW_TRACKING_URI"], server.base_url());
  EXPECT_EQ(v["MLFLOW_EXPERIMENT_NAME"], "Default");
  EXPECT_EQ(v["PYTHONUNBUFFERED"], "1");
  ASSERT_NE(tracker.output_sink(), nullptr);
  tracker.output_sink()->Write("hello\n", false);
  tracker.Ended({.pid = 7, .exit_code = 3, .how = "exited 3"}, 3);
  auto log = Calls(server, "/api/2.0/mlflow-artifacts/artifacts/3/r1/artifacts/ferry/output.log");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].body, "hello\n");
  EXPECT_EQ(log[0].headers["authorization"], "Bearer tok-12345678");
  auto update = Calls(server, "/api/2.0/mlflow/runs/update");
  ASSERT_EQ(update.size(), 1u);
  EXPECT_EQ(json::parse(update[0].body)["status"], "FAILED");
  auto tags = Calls(server, "/api/2.0/mlflow/runs/set-tag");
  ASSERT_FALSE(tags.empty());
  EXPECT_EQ(json::parse(tags.back().body)["key"], "ferry.exit_code");
  EXPECT_EQ(json::parse(tags.back().body)["value"], "3");
}

TEST(RunTrackerTest, AnArtifactTheServerCannotTakeIsDroppedNotRetried) {
  // MLflow's own server without --serve-artifacts: the run's artifacts are not ours to PUT.
  LocalHttpServer server = FakeServer("s3://bucket/3/r1/artifacts");
  storage::StoreRegistry registry;
  MapEnvironment env;
  RunTracker tracker({.url = server.base_url(), .system_metrics_interval = std::chrono::seconds(0)},
                     registry, env);
  ASSERT_FALSE(tracker.BeforeStart(Plan()).empty());
  tracker.output_sink()->Write("x\n", false);
  auto start = std::chrono::steady_clock::now();
  tracker.Ended({.pid = 7, .exit_code = 0, .how = "exited 0"}, 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  auto update = Calls(server, "/api/2.0/mlflow/runs/update");
  ASSERT_EQ(update.size(), 1u);
  EXPECT_EQ(json::parse(update[0].body)["status"], "FINISHED");
}

TEST(RunTrackerTest, AnUnreachableServerMeansNoTrackingAndNoVariables) {
  storage::StoreRegistry registry;
  MapEnvironment env;
  env.Set("PYTHONUNBUFFERED", "0");
  RunTracker tracker({.url = "http://127.0.0.1:1"}, registry, env);
  EXPECT_TRUE(tracker.BeforeStart(Plan()).empty());
  tracker.Ended({.pid = 7, .exit_code = 0, .how = "exited 0"}, 0);  // nothing to end
}

TEST(RunTrackerTest, TrackUrlMustBeHttp) {
  EXPECT_TRUE(CheckTrackUrl("http://h:1").ok());
  EXPECT_TRUE(CheckTrackUrl("https://h").ok());
  EXPECT_EQ(CheckTrackUrl("h:1").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::job::track
