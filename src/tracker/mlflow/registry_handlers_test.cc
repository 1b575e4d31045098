// The Model Registry's REST API, called as mlflow/store/model_registry/rest_store.py calls it.
#include "tracker/mlflow/mlflow_test_util.h"

namespace ferry::tracker::mlflow {
namespace {

class RegistryTest : public MlflowHandlersTest {
 protected:
  Answer Do(const std::string& method, const std::string& endpoint, const json& body) {
    return Call(method, std::string(kApi) + endpoint, body.dump());
  }
  // A logged model of a new run, as MLflow 3's log_model leaves it.
  std::pair<std::string, std::string> LoggedModel(const std::string& exp) {
    std::string run = NewRun(exp);
    Answer m =
        Post("logged-models", {{"experiment_id", exp}, {"name", "model"}, {"source_run_id", run}});
    EXPECT_EQ(m.status, 200) << m.raw;
    return {run, m.body["model"]["info"].value("model_id", "")};
  }
};

TEST_F(RegistryTest, RegisterVersionsAliasesStagesAndDownloadUrisAsMlflow3DoesIt) {
  std::string exp = NewExperiment("registry");
  auto [run, model_id] = LoggedModel(exp);
  // mlflow.register_model("runs:/<run>/model", "churn"): create (RESOURCE_ALREADY_EXISTS is
  // fine the second time), then a version whose source is the logged model.
  Answer created = Post("registered-models/create",
                        {{"name", "churn"}, {"tags", {{{"key", "team"}, {"value", "ml"}}}}});
  ASSERT_EQ(created.status, 200) << created.raw;
  EXPECT_EQ(created.body["registered_model"]["name"], "churn");
  EXPECT_TRUE(created.body["registered_model"]["creation_timestamp"].is_number_integer());
  ExpectError(Post("registered-models/create", {{"name", "churn"}}), 400, "RESOURCE_ALREADY_EXISTS",
              "churn");
  Answer v1 = Post("model-versions/create", {{"name", "churn"},
                                             {"source", "models:/" + model_id},
                                             {"run_id", run},
                                             {"model_id", model_id}});
  ASSERT_EQ(v1.status, 200) << v1.raw;
  EXPECT_EQ(v1.body["model_version"]["version"], "1");
  EXPECT_EQ(v1.body["model_version"]["status"], "READY");
  EXPECT_EQ(v1.body["model_version"]["current_stage"], "None");
  Answer uri = Get("model-versions/get-download-uri", {{"name", "churn"}, {"version", "1"}});
  EXPECT_EQ(uri.body["artifact_uri"],
            "mlflow-artifacts:/" + exp + "/models/" + model_id + "/artifacts")
      << uri.raw;
  // A runs:/ source (MLflow 2 clients) points into the run's artifacts.
  std::string run2 = NewRun(exp);
  Answer v2 = Post("model-versions/create",
                   {{"name", "churn"}, {"source", "runs:/" + run2 + "/model"}, {"run_id", run2}});
  ASSERT_EQ(v2.body["model_version"]["version"], "2");
  Answer uri2 = Get("model-versions/get-download-uri", {{"name", "churn"}, {"version", "2"}});
  EXPECT_EQ(uri2.body["artifact_uri"],
            "mlflow-artifacts:/" + exp + "/" + run2 + "/artifacts/model");

  // models:/churn@champion: set the alias, resolve it, move it.
  ASSERT_EQ(
      Post("registered-models/alias", {{"name", "churn"}, {"alias", "champion"}, {"version", "1"}})
          .status,
      200);
  Answer by_alias = Get("registered-models/alias", {{"name", "churn"}, {"alias", "champion"}});
  ASSERT_EQ(by_alias.status, 200) << by_alias.raw;
  EXPECT_EQ(by_alias.body["model_version"]["version"], "1");
  EXPECT_EQ(by_alias.body["model_version"]["aliases"], json::parse(R"(["champion"])"));
  Post("registered-models/alias", {{"name", "churn"}, {"alias", "champion"}, {"version", "2"}});
  EXPECT_EQ(Get("registered-models/alias", {{"name", "churn"}, {"alias", "champion"}})
                .body["model_version"]["version"],
            "2");
  ExpectError(
      Post("registered-models/alias", {{"name", "churn"}, {"alias", "latest"}, {"version", "1"}}),
      400, "INVALID_PARAMETER_VALUE", "reserved");
  ExpectError(
      Post("registered-models/alias", {{"name", "churn"}, {"alias", "x"}, {"version", "9"}}), 404,
      "RESOURCE_DOES_NOT_EXIST", "version=9");

  // Stages: archive_existing_versions moves the other Production version to Archived.
  Post("model-versions/transition-stage",
       {{"name", "churn"}, {"version", "1"}, {"stage", "production"}});
  Answer t2 = Post("model-versions/transition-stage", {{"name", "churn"},
                                                       {"version", "2"},
                                                       {"stage", "Production"},
                                                       {"archive_existing_versions", true}});
  ASSERT_EQ(t2.status, 200) << t2.raw;
  EXPECT_EQ(Get("model-versions/get", {{"name", "churn"}, {"version", "1"}})
                .body["model_version"]["current_stage"],
            "Archived");
  Answer latest = Post("registered-models/get-latest-versions",
                       {{"name", "churn"}, {"stages", {"Production"}}});
  ASSERT_EQ(latest.body["model_versions"].size(), 1u) << latest.raw;
  EXPECT_EQ(latest.body["model_versions"][0]["version"], "2");
  ExpectError(Post("model-versions/transition-stage",
                   {{"name", "churn"}, {"version", "2"}, {"stage", "Live"}}),
              400, "INVALID_PARAMETER_VALUE", "Live");

  // The registered model shows its aliases and latest versions; search finds it.
  Answer got = Get("registered-models/get", {{"name", "churn"}});
  EXPECT_EQ(got.body["registered_model"]["aliases"],
            json::parse(R"([{"alias":"champion","version":"2"}])"));
  EXPECT_EQ(got.body["registered_model"]["latest_versions"].size(), 2u) << got.raw;
  Post("registered-models/create", {{"name", "fraud"}});
  Answer found = Get("registered-models/search", {{"filter", "name LIKE 'ch%'"}});
  ASSERT_EQ(found.body["registered_models"].size(), 1u) << found.raw;
  Answer versions =
      Get("model-versions/search", {{"filter", "name = 'churn' AND run_id = '" + run + "'"}});
  ASSERT_EQ(versions.body["model_versions"].size(), 1u) << versions.raw;
  EXPECT_EQ(versions.body["model_versions"][0]["version"], "1");

  // Tags, description, rename (versions and aliases follow), delete.
  ASSERT_EQ(Post("model-versions/set-tag",
                 {{"name", "churn"}, {"version", "2"}, {"key", "v"}, {"value", "ok"}})
                .status,
            200);
  ASSERT_EQ(Do("PATCH", "model-versions/update",
               {{"name", "churn"}, {"version", "2"}, {"description", "best"}})
                .body["model_version"]["description"],
            "best");
  Answer renamed = Post("registered-models/rename", {{"name", "churn"}, {"new_name", "churn-v2"}});
  ASSERT_EQ(renamed.status, 200) << renamed.raw;
  ExpectError(Get("registered-models/get", {{"name", "churn"}}), 404, "RESOURCE_DOES_NOT_EXIST",
              "churn");
  Answer moved = Get("registered-models/alias", {{"name", "churn-v2"}, {"alias", "champion"}});
  EXPECT_EQ(moved.body["model_version"]["version"], "2") << moved.raw;
  EXPECT_EQ(moved.body["model_version"]["tags"][0]["value"], "ok");
  ASSERT_EQ(Do("DELETE", "model-versions/delete", {{"name", "churn-v2"}, {"version", "2"}}).status,
            200);
  ExpectError(Get("registered-models/alias", {{"name", "churn-v2"}, {"alias", "champion"}}), 404,
              "RESOURCE_DOES_NOT_EXIST", "champion");
  Answer v3 =
      Post("model-versions/create", {{"name", "churn-v2"}, {"source", "s3://bucket/model"}});
  EXPECT_EQ(v3.body["model_version"]["version"], "3");  // numbers are never reused
  ASSERT_EQ(Do("DELETE", "registered-models/delete", {{"name", "churn-v2"}}).status, 200);
  ExpectError(Get("model-versions/get", {{"name", "churn-v2"}, {"version", "3"}}), 404,
              "RESOURCE_DOES_NOT_EXIST", "churn-v2");
}

TEST_F(RegistryTest, BadNamesSourcesAndVersionsAreRefusedNamingTheThing) {
  ExpectError(Post("registered-models/create", json::object()), 400, "INVALID_PARAMETER_VALUE",
              "name");
  ExpectError(Post("registered-models/create", {{"name", "a\nb"}}), 400, "INVALID_PARAMETER_VALUE",
              "control character");
  Post("registered-models/create", {{"name", "m"}});
  ExpectError(Post("model-versions/create", {{"name", "m"}}), 400, "INVALID_PARAMETER_VALUE",
              "source");
  ExpectError(Post("model-versions/create", {{"name", "nope"}, {"source", "s3://b/x"}}), 404,
              "RESOURCE_DOES_NOT_EXIST", "nope");
  ExpectError(Post("model-versions/create", {{"name", "m"}, {"source", "s3://b/../etc"}}), 400,
              "INVALID_PARAMETER_VALUE", "..");
  ExpectError(Post("model-versions/create", {{"name", "m"}, {"source", "models:/m-0123"}}), 404,
              "RESOURCE_DOES_NOT_EXIST", "m-0123");
  ExpectError(Get("model-versions/get", {{"name", "m"}, {"version", "one"}}), 400,
              "INVALID_PARAMETER_VALUE", "one");
  ExpectError(Get("registered-models/search", {{"filter", "metrics.x > 1"}}), 400,
              "INVALID_PARAMETER_VALUE", "no metrics");
}

}  // namespace
}  // namespace ferry::tracker::mlflow
