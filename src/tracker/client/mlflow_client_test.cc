#include "tracker/client/mlflow_client.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "base/hash.h"
#include "http/testing/local_http_server.h"

namespace ferry::tracker::client {
namespace {

using http::testing::LocalHttpServer;
using http::testing::ServerRequest;
using http::testing::ServerResponse;
using nlohmann::json;

std::unique_ptr<MlflowClient> ClientFor(const LocalHttpServer& server, std::string token = "") {
  auto c = MlflowClient::Create({.url = server.base_url() + "/", .token = std::move(token)});
  EXPECT_TRUE(c.ok());
  return std::move(*c);
}

TEST(MlflowClientTest, CreatesTheExperimentWhenThereIsNone) {
  LocalHttpServer server([](const ServerRequest& r) -> ServerResponse {
    if (r.target.starts_with("/api/2.0/mlflow/experiments/get-by-name")) {
      return {.status = 404,
              .body = R"({"error_code":"RESOURCE_DOES_NOT_EXIST","message":"no such"})"};
    }
    if (r.target == "/api/2.0/mlflow/experiments/create") {
      return {.body = R"({"experiment_id":"7"})"};
    }
    return {.status = 500};
  });
  auto client = ClientFor(server);
  auto id = client->GetOrCreateExperiment("my exp");
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, "7");
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_EQ(reqs[0].target, "/api/2.0/mlflow/experiments/get-by-name?experiment_name=my%20exp");
  EXPECT_EQ(json::parse(reqs[1].body)["name"], "my exp");
}

TEST(MlflowClientTest, ADeadlineCutsCallsShortAndOnePastItFailsAtOnce) {
  LocalHttpServer server([](const ServerRequest&) -> ServerResponse {
    std::this_thread::sleep_for(std::chrono::seconds(3));  // a server that thinks for long
    return {.body = R"({"experiment_id":"7"})"};
  });
  auto client = ClientFor(server);
  const auto t0 = std::chrono::steady_clock::now();
  client->SetDeadline(t0 + std::chrono::milliseconds(300));
  Status s = client->UpdateRun("r1", "FINISHED", 1);
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.ToString();
  EXPECT_TRUE(IsRetryable(s));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  s = client->UpdateRun("r1", "FINISHED", 1);  // the deadline has passed: not even sent
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("no time left"), std::string::npos) << s.message();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

TEST(MlflowClientTest, CreateRunSendsTagsAndTheToken) {
  LocalHttpServer server([](const ServerRequest&) -> ServerResponse {
    return {.body = R"({"run":{"info":{"run_id":"r1","experiment_id":"7","status":"RUNNING",
             "artifact_uri":"mlflow-artifacts:/7/r1/artifacts","start_time":"1700000000000"}}})"};
  });
  auto client = ClientFor(server, "s3cret-token");
  auto run = client->CreateRun("7", "name", 1700000000000, {{"ferry.attempt", "0"}});
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->run_id, "r1");
  EXPECT_EQ(run->artifact_uri, "mlflow-artifacts:/7/r1/artifacts");
  EXPECT_EQ(run->start_time_ms, 1700000000000);
  auto req = server.requests().at(0);
  EXPECT_EQ(req.headers["authorization"], "Bearer s3cret-token");
  json body = json::parse(req.body);
  EXPECT_EQ(body["tags"][0]["key"], "ferry.attempt");
  EXPECT_EQ(body["run_name"], "name");
}

TEST(MlflowClientTest, LogMetricsSplitsIntoCallsOfAtMostAThousand) {
  LocalHttpServer server([](const ServerRequest&) -> ServerResponse { return {.body = "{}"}; });
  auto client = ClientFor(server);
  std::vector<MetricPoint> points(2500, MetricPoint{.key = "k", .value = 1.5, .timestamp_ms = 5});
  size_t sent = 0;
  ASSERT_TRUE(client->LogMetrics("r1", points, &sent).ok());
  EXPECT_EQ(sent, 2500u);
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 3u);
  EXPECT_EQ(json::parse(reqs[0].body)["metrics"].size(), 1000u);
  EXPECT_EQ(json::parse(reqs[2].body)["metrics"].size(), 500u);
}

TEST(MlflowClientTest, AFailedBatchSaysHowManyPointsWereAcknowledged) {
  int calls = 0;
  LocalHttpServer server([&calls](const ServerRequest&) -> ServerResponse {
    if (++calls == 2) return {.status = 503, .body = "busy"};
    return {.body = "{}"};
  });
  auto client = ClientFor(server);
  std::vector<MetricPoint> points(1500, MetricPoint{.key = "k"});
  size_t sent = 0;
  Status s = client->LogMetrics("r1", points, &sent);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(IsRetryable(s));
  EXPECT_EQ(sent, 1000u);
}

TEST(MlflowClientTest, UploadArtifactPutsUnderTheRunsRootWithItsSha256) {
  LocalHttpServer server([](const ServerRequest&) -> ServerResponse { return {.body = "{}"}; });
  auto client = ClientFor(server);
  ASSERT_TRUE(
      client->UploadArtifact("mlflow-artifacts:/7/r1/artifacts", "ferry/output.log", "hi\n").ok());
  auto req = server.requests().at(0);
  EXPECT_EQ(req.method, "PUT");
  EXPECT_EQ(req.target, "/api/2.0/mlflow-artifacts/artifacts/7/r1/artifacts/ferry/output.log");
  EXPECT_EQ(req.headers["x-ferry-sha256"], Sha256Hex("hi\n"));
  EXPECT_EQ(req.body, "hi\n");
}

TEST(MlflowClientTest, ErrorsNameTheCallAndMlflowsCode) {
  LocalHttpServer server([](const ServerRequest&) -> ServerResponse {
    return {.status = 400,
            .body = R"({"error_code":"INVALID_PARAMETER_VALUE","message":"bad status\nmore"})"};
  });
  auto client = ClientFor(server, "tok");
  Status s = client->UpdateRun("r1", "DONE", 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("MLflow POST runs/update at http://127.0.0.1:"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("HTTP 400 INVALID_PARAMETER_VALUE: bad status"), std::string::npos);
  EXPECT_EQ(s.message().find("more"), std::string::npos);
  EXPECT_EQ(s.message().find("tok"), std::string::npos);
}

TEST(MlflowClientTest, UnreachableServerIsRetryable) {
  auto client = MlflowClient::Create({.url = "http://127.0.0.1:1"});
  ASSERT_TRUE(client.ok());
  auto run = (*client)->GetRun("r1");
  EXPECT_TRUE(IsRetryable(run.status())) << run.status().ToString();
}

TEST(MlflowClientTest, ArtifactRootForms) {
  EXPECT_EQ(*ArtifactRoot("mlflow-artifacts:/1/r/artifacts"), "1/r/artifacts");
  EXPECT_EQ(*ArtifactRoot("mlflow-artifacts://host:5000/1/r/artifacts/"), "1/r/artifacts");
  EXPECT_FALSE(ArtifactRoot("s3://b/1/r/artifacts").ok());
  EXPECT_FALSE(MlflowClient::Create({.url = "ftp://x"}).ok());
}

}  // namespace
}  // namespace ferry::tracker::client
