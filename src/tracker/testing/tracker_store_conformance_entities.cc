// MLflow 3's logged models, run inputs/outputs and the Model Registry (tracker/logged_models.h,
// tracker/run_io.h, tracker/registry.h) on each backend: their rules are shared code over
// TrackerStore::Transact, so this checks that each backend's documents carry them whole.
#include <gmock/gmock.h>

#include "tracker/logged_models.h"
#include "tracker/registry.h"
#include "tracker/run_io.h"
#include "tracker/testing/tracker_store_conformance.h"

namespace ferry::tracker::testing {

TEST_P(TrackerStoreConformanceTest, LoggedModelsKeepTheirRulesOnEveryBackend) {
  std::string exp = NewExperiment("lm");
  RunInfo run = NewRun(exp);
  auto m = CreateLoggedModel(*store_, {.experiment_id = exp,
                                       .experiment_artifact_location = "s3://b/" + exp + "/",
                                       .name = "model",
                                       .source_run_id = run.run_id,
                                       .params = {{"lr", "0.1"}},
                                       .tags = {{"t", "1"}},
                                       .now_ms = 5});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->artifact_uri, "s3://b/" + exp + "/models/" + m->model_id + "/artifacts");
  ASSERT_TRUE(FinalizeLoggedModel(*store_, m->model_id, LoggedModelStatus::kReady, 6).ok());
  EXPECT_EQ(LogLoggedModelParams(*store_, m->model_id, {{"lr", "0.2"}}, 7).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(SetLoggedModelTags(*store_, m->model_id, {{"a", "x"}}, 8).ok());
  auto got = GetLoggedModel(*store_, m->model_id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, LoggedModelStatus::kReady);
  EXPECT_EQ(got->updated_ms, 8);
  EXPECT_THAT(got->tags, ::testing::ElementsAre(Tag{"a", "x"}, Tag{"t", "1"}));
  auto page = SearchLoggedModels(*store_, {.experiment_ids = {exp}, .filter = "tags.a = 'x'"});
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 1u);
  ASSERT_TRUE(
      LogRunOutputs(*store_, run.run_id,
                    nlohmann::json::parse(R"([{"model_id":")" + m->model_id + R"(","step":3}])"))
          .ok());
  auto io = GetRunIo(*store_, {run.run_id});
  ASSERT_TRUE(io.ok());
  EXPECT_EQ((*io)[run.run_id].outputs["model_outputs"][0]["step"], 3);
  ASSERT_TRUE(DeleteLoggedModel(*store_, m->model_id).ok());
  EXPECT_EQ(GetLoggedModel(*store_, m->model_id).status().code(), StatusCode::kNotFound);
}

TEST_P(TrackerStoreConformanceTest, TheModelRegistryKeepsItsRulesOnEveryBackend) {
  ASSERT_TRUE(CreateRegisteredModel(*store_, "reg", {{"k", "v"}}, "d", 1).ok());
  EXPECT_EQ(CreateRegisteredModel(*store_, "reg", {}, "", 2).status().code(),
            StatusCode::kAlreadyExists);
  for (int i = 1; i <= 3; ++i) {
    auto v = CreateModelVersion(*store_, {.name = "reg", .source = "s3://b/m", .now_ms = 10 + i});
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(v->version, i);
  }
  ASSERT_TRUE(SetRegisteredModelAlias(*store_, "reg", "champion", "2", 20).ok());
  ASSERT_TRUE(TransitionModelVersionStage(*store_, "reg", "1", "staging", false, 21).ok());
  ASSERT_TRUE(TransitionModelVersionStage(*store_, "reg", "3", "Staging", true, 22).ok());
  EXPECT_EQ(GetModelVersion(*store_, "reg", "1")->current_stage, "Archived");
  ASSERT_TRUE(RenameRegisteredModel(*store_, "reg", "reg2", 23).ok());
  auto by_alias = GetModelVersionByAlias(*store_, "reg2", "champion");
  ASSERT_TRUE(by_alias.ok()) << by_alias.status().ToString();
  EXPECT_EQ(by_alias->version, 2);
  ASSERT_TRUE(DeleteModelVersion(*store_, "reg2", "2").ok());
  EXPECT_EQ(GetModelVersionByAlias(*store_, "reg2", "champion").status().code(),
            StatusCode::kNotFound);
  auto v4 = CreateModelVersion(*store_, {.name = "reg2", .source = "s3://b/m", .now_ms = 30});
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->version, 4);
  auto versions = SearchModelVersions(*store_, {.filter = "name = 'reg2'"});
  ASSERT_TRUE(versions.ok());
  EXPECT_EQ(versions->items.size(), 3u);
  ASSERT_TRUE(DeleteRegisteredModel(*store_, "reg2").ok());
  EXPECT_EQ(GetModelVersion(*store_, "reg2", "4").status().code(), StatusCode::kNotFound);
  auto models = SearchRegisteredModels(*store_, {});
  ASSERT_TRUE(models.ok());
  EXPECT_TRUE(models->items.empty());
}

}  // namespace ferry::tracker::testing
