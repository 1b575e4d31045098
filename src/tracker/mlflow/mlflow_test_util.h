#pragma once
// The fixture of the MLflow handler tests: the routes over a MemoryTrackerStore, called with
// request values (no sockets).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "tracker/memory/memory_tracker_store.h"
#include "tracker/mlflow/mlflow_routes.h"

namespace ferry::tracker::mlflow {

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

}  // namespace ferry::tracker::mlflow
