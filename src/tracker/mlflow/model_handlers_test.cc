// MLflow 3's logged models and run inputs/outputs, called as MLflow 3's rest_store.py calls them.
#include "tracker/mlflow/mlflow_test_util.h"

namespace ferry::tracker::mlflow {
namespace {

TEST_F(MlflowHandlersTest, LoggedModelsAreCreatedFinalizedSearchedAndDeletedAsMlflow3LogsThem) {
  std::string exp = NewExperiment("models");
  std::string run = NewRun(exp);
  // mlflow.pytorch.log_model(model, name="model"): create, upload, finalize, log-outputs.
  Answer created = Post("logged-models", {{"experiment_id", exp},
                                          {"name", "model"},
                                          {"model_type", "pytorch"},
                                          {"source_run_id", run},
                                          {"params", {{{"key", "lr"}, {"value", "0.1"}}}},
                                          {"tags", {{{"key", "mlflow.user"}, {"value", "al"}}}}});
  ASSERT_EQ(created.status, 200) << created.raw;
  const json& info = created.body["model"]["info"];
  std::string id = info.value("model_id", "");
  EXPECT_TRUE(id.starts_with("m-") && id.size() == 34) << id;
  EXPECT_EQ(info["experiment_id"], exp);
  EXPECT_EQ(info["status"], "LOGGED_MODEL_PENDING");
  EXPECT_EQ(info["artifact_uri"], "mlflow-artifacts:/" + exp + "/models/" + id + "/artifacts");
  EXPECT_TRUE(info["creation_timestamp_ms"].is_number_integer());
  EXPECT_EQ(info["source_run_id"], run);
  EXPECT_EQ(created.body["model"]["data"]["params"][0]["value"], "0.1");

  Answer ready = Call("PATCH", std::string(kApi) + "logged-models/" + id,
                      json{{"model_id", id}, {"status", "LOGGED_MODEL_READY"}}.dump());
  ASSERT_EQ(ready.status, 200) << ready.raw;
  EXPECT_EQ(ready.body["model"]["info"]["status"], "LOGGED_MODEL_READY");
  ASSERT_EQ(
      Post("runs/outputs", {{"run_id", run}, {"models", {{{"model_id", id}, {"step", 0}}}}}).status,
      200);
  Answer got_run = Get("runs/get", {{"run_id", run}});
  EXPECT_EQ(got_run.body["run"]["outputs"]["model_outputs"][0]["model_id"], id) << got_run.raw;

  // MLflow 3's list_artifacts(run_id, "model") looks the model up by name in the run's
  // experiment, page by page.
  Post("logged-models", {{"experiment_id", exp}, {"name", "other"}});
  Answer found =
      Post("logged-models/search", {{"experiment_ids", {exp}}, {"filter", "name = 'model'"}});
  ASSERT_EQ(found.status, 200) << found.raw;
  ASSERT_EQ(found.body["models"].size(), 1u) << found.raw;
  EXPECT_EQ(found.body["models"][0]["info"]["model_id"], id);
  EXPECT_FALSE(found.body.contains("next_page_token"));
  Answer by_status =
      Post("logged-models/search",
           {{"experiment_ids", {exp}}, {"filter", "status = 'READY' AND params.lr = '0.1'"}});
  EXPECT_EQ(by_status.body["models"].size(), 1u) << by_status.raw;
  Answer page1 =
      Post("logged-models/search", {{"experiment_ids", {exp}},
                                    {"max_results", 1},
                                    {"order_by", {{{"field_name", "name"}, {"ascending", true}}}}});
  ASSERT_EQ(page1.body["models"].size(), 1u);
  EXPECT_EQ(page1.body["models"][0]["info"]["name"], "model");
  Answer page2 =
      Post("logged-models/search", {{"experiment_ids", {exp}},
                                    {"max_results", 1},
                                    {"order_by", {{{"field_name", "name"}, {"ascending", true}}}},
                                    {"page_token", page1.body["next_page_token"]}});
  EXPECT_EQ(page2.body["models"][0]["info"]["name"], "other") << page2.raw;
  EXPECT_EQ(Post("logged-models/search", {{"experiment_ids", {"999"}}}).body["models"].size(), 0u);
  ExpectError(
      Post("logged-models/search", {{"experiment_ids", {exp}}, {"filter", "metrics.acc > 1"}}), 400,
      "INVALID_PARAMETER_VALUE", "does not keep metrics of logged models");
  ExpectError(Post("logged-models/search", json::object()), 400, "INVALID_PARAMETER_VALUE",
              "experiment_ids");

  // Tags, params.
  ASSERT_EQ(Call("PATCH", std::string(kApi) + "logged-models/" + id + "/tags",
                 json{{"tags", {{{"key", "stage"}, {"value", "dev"}}}}}.dump())
                .status,
            200);
  ASSERT_EQ(
      Call("DELETE", std::string(kApi) + "logged-models/" + id + "/tags/mlflow.user", "").status,
      200);
  ExpectError(Post("logged-models/" + id + "/params",
                   {{"model_id", id}, {"params", {{{"key", "lr"}, {"value", "0.2"}}}}}),
              400, "INVALID_PARAMETER_VALUE", "immutable");
  ASSERT_EQ(Post("logged-models/" + id + "/params",
                 {{"model_id", id}, {"params", {{{"key", "bs"}, {"value", "64"}}}}})
                .status,
            200);
  Answer after = Get("logged-models/" + id, {});
  ASSERT_EQ(after.status, 200) << after.raw;
  EXPECT_EQ(after.body["model"]["info"]["tags"], json::parse(R"([{"key":"stage","value":"dev"}])"));
  EXPECT_EQ(after.body["model"]["data"]["params"].size(), 2u);

  // Finalize takes MLflow's numbers too; anything but READY/UPLOAD_FAILED is refused.
  ExpectError(Call("PATCH", std::string(kApi) + "logged-models/" + id, R"({"status": 1})"), 400,
              "INVALID_PARAMETER_VALUE", "LOGGED_MODEL_READY");
  EXPECT_EQ(Call("PATCH", std::string(kApi) + "logged-models/" + id, R"({"status": 3})")
                .body["model"]["info"]["status"],
            "LOGGED_MODEL_UPLOAD_FAILED");

  // Delete: gone for get and search.
  ASSERT_EQ(Call("DELETE", std::string(kApi) + "logged-models/" + id, "").status, 200);
  ExpectError(Get("logged-models/" + id, {}), 404, "RESOURCE_DOES_NOT_EXIST", id);
  EXPECT_EQ(Post("logged-models/search", {{"experiment_ids", {exp}}, {"filter", "name = 'model'"}})
                .body["models"]
                .size(),
            0u);
}

TEST_F(MlflowHandlersTest, LoggedModelsRefuseUnknownExperimentsRunsAndBadBodies) {
  std::string exp = NewExperiment("refusals");
  ExpectError(Post("logged-models", {{"name", "m"}}), 400, "INVALID_PARAMETER_VALUE",
              "experiment_id");
  ExpectError(Post("logged-models", {{"experiment_id", "424242"}}), 404, "RESOURCE_DOES_NOT_EXIST",
              "424242");
  ExpectError(Post("logged-models", {{"experiment_id", exp}, {"source_run_id", "feedbeef"}}), 404,
              "RESOURCE_DOES_NOT_EXIST", "feedbeef");
  ExpectError(Post("logged-models", {{"experiment_id", exp}, {"tags", {{{"key", ""}}}}}), 400,
              "INVALID_PARAMETER_VALUE", "");
  ExpectError(Get("logged-models/m-00000000000000000000000000000000", {}), 404,
              "RESOURCE_DOES_NOT_EXIST", "not found");
  ExpectError(Post("runs/outputs",
                   {{"run_id", NewRun(exp)}, {"models", {{{"model_id", "m-x"}, {"step", 1}}}}}),
              404, "RESOURCE_DOES_NOT_EXIST", "m-x");
  // A name is made up when none is given, as MLflow does.
  Answer unnamed = Post("logged-models", {{"experiment_id", exp}});
  ASSERT_EQ(unnamed.status, 200) << unnamed.raw;
  EXPECT_FALSE(unnamed.body["model"]["info"].value("name", "").empty());
}

TEST_F(MlflowHandlersTest, DatasetInputsAreLoggedOnceAndShownByGetAndSearch) {
  std::string exp = NewExperiment("datasets");
  std::string run = NewRun(exp);
  json dataset = {{"name", "train"},
                  {"digest", "8b5c4a"},
                  {"source_type", "local"},
                  {"source", R"({"uri": "/data/train.parquet"})"},
                  {"schema", R"({"mlflow_colspec": []})"},
                  {"profile", R"({"num_rows": 3})"}};
  json input = {{"tags", {{{"key", "mlflow.data.context"}, {"value", "training"}}}},
                {"dataset", dataset}};
  ASSERT_EQ(Post("runs/log-inputs", {{"run_id", run}, {"datasets", {input}}}).status, 200);
  json again = input;
  again["tags"] = {{{"key", "mlflow.data.context"}, {"value", "eval"}}};
  ASSERT_EQ(Post("runs/log-inputs", {{"run_id", run}, {"datasets", {input, again}}}).status, 200);
  Answer got = Get("runs/get", {{"run_id", run}});
  const json& inputs = got.body["run"]["inputs"]["dataset_inputs"];
  ASSERT_EQ(inputs.size(), 1u) << got.raw;
  EXPECT_EQ(inputs[0]["dataset"], dataset);
  EXPECT_EQ(inputs[0]["tags"].size(), 2u);
  Answer searched = Post("runs/search", {{"experiment_ids", {exp}}});
  EXPECT_EQ(searched.body["runs"][0]["inputs"]["dataset_inputs"].size(), 1u) << searched.raw;
  // A run without inputs answers {} as before.
  std::string plain = NewRun(exp);
  EXPECT_EQ(Get("runs/get", {{"run_id", plain}}).body["run"]["inputs"], json::object());

  json no_source = input;
  no_source["dataset"].erase("source");
  ExpectError(Post("runs/log-inputs", {{"run_id", run}, {"datasets", {no_source}}}), 400,
              "INVALID_PARAMETER_VALUE", "datasets[0].dataset.source");
  ExpectError(Post("runs/log-inputs", {{"run_id", "cafe"}, {"datasets", {input}}}), 404,
              "RESOURCE_DOES_NOT_EXIST", "cafe");
  ASSERT_EQ(Post("runs/delete", {{"run_id", plain}}).status, 200);
  ExpectError(Post("runs/log-inputs", {{"run_id", plain}, {"datasets", {input}}}), 400,
              "INVALID_PARAMETER_VALUE", "active");
}

}  // namespace
}  // namespace ferry::tracker::mlflow
