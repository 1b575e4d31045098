#include "tracker/store_checks.h"

#include <gtest/gtest.h>

namespace ferry::tracker::checks {
namespace {

TEST(StoreChecks, CreateRunTakesTheNameTagAndRefusesADisagreeingOne) {
  CreateRunRequest req;
  req.tags = {{"mlflow.runName", "warm-start"}, {"team", "nlp"}};
  auto tag = CreateRunNameTag(req);
  ASSERT_TRUE(tag.ok());
  EXPECT_EQ(*tag, "warm-start");
  std::mt19937_64 rng(1);
  EXPECT_EQ(ChooseRunName(req, *tag, rng), "warm-start");

  req.run_name = "other";
  auto bad = CreateRunNameTag(req);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("differs from tag mlflow.runName"), std::string::npos);

  req.tags.push_back({"", "x"});
  EXPECT_EQ(CreateRunNameTag(req).status().message(), "CreateRun: a tag key is empty");
}

TEST(StoreChecks, ARunWithoutANameGetsAGeneratedOne) {
  std::mt19937_64 rng(7);
  std::string name = ChooseRunName(CreateRunRequest{}, "", rng);
  EXPECT_EQ(std::count(name.begin(), name.end(), '-'), 2) << name;
}

TEST(StoreChecks, BatchKeysNameWhatIsEmpty) {
  EXPECT_TRUE(BatchKeys({{"loss", 1, 0, 0}}, {{"lr", "1"}}, {{"t", "v"}}).ok());
  EXPECT_EQ(BatchKeys({{"", 1, 0, 0}}, {}, {}).message(), "LogBatch: a metric key is empty");
  EXPECT_EQ(BatchKeys({}, {{"", "1"}}, {}).message(), "LogBatch: a param key is empty");
  EXPECT_EQ(BatchKeys({}, {}, {{"", "1"}}).message(), "LogBatch: a tag key is empty");
}

TEST(StoreChecks, ParamsAreImmutableWithinABatchAndAgainstWhatIsStored) {
  int lookups = 0;
  StoredParam stored = [&](const std::string& key) -> Result<std::optional<std::string>> {
    ++lookups;
    if (key == "lr") return std::optional<std::string>("0.1");
    return std::optional<std::string>();
  };
  auto ok = NewParams("r1", {{"lr", "0.1"}, {"bs", "8"}, {"bs", "8"}}, stored);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 2u);
  EXPECT_EQ(lookups, 2);  // once per key

  auto again = NewParams("r1", {{"bs", "8"}, {"bs", "16"}}, stored);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().message(),
            "LogBatch: param 'bs' of run 'r1' already has another value (params are immutable)");
  EXPECT_FALSE(NewParams("r1", {{"lr", "0.2"}}, stored).ok());

  StoredParam failing = [](const std::string&) -> Result<std::optional<std::string>> {
    return Status(StatusCode::kUnavailable, "database gone");
  };
  EXPECT_EQ(NewParams("r1", {{"lr", "1"}}, failing).status().code(), StatusCode::kUnavailable);
}

TEST(StoreChecks, OffsetTokensAndMaxResults) {
  EXPECT_EQ(*OffsetToken("SearchExperiments", ""), 0u);
  EXPECT_EQ(*OffsetToken("SearchExperiments", "25"), 25u);
  EXPECT_EQ(OffsetToken("SearchExperiments", "-1").status().message(),
            "SearchExperiments: invalid page token '-1'");
  EXPECT_TRUE(MaxResults("X", 1).ok());
  EXPECT_EQ(MaxResults("X", 0).message(), "X: max_results must be >= 1");
}

TEST(StoreChecks, ExperimentFiltersViewsAndRunOrder) {
  Experiment e{.id = "1", .name = "bert-base", .tags = {{"team", "nlp"}}};
  ExperimentQuery q;
  q.name_like = "bert%";
  q.tags_equal = {{"team", "nlp"}};
  EXPECT_TRUE(ExperimentMatches(e, q));
  q.tags_equal = {{"team", "cv"}};
  EXPECT_FALSE(ExperimentMatches(e, q));

  EXPECT_TRUE(InView(LifecycleStage::kActive, ViewType::kActiveOnly));
  EXPECT_FALSE(InView(LifecycleStage::kDeleted, ViewType::kActiveOnly));
  EXPECT_TRUE(InView(LifecycleStage::kDeleted, ViewType::kDeletedOnly));
  EXPECT_TRUE(InView(LifecycleStage::kDeleted, ViewType::kAll));

  std::vector<tracker::Run> runs(3);
  runs[0].info = {.run_id = "b", .start_time = 5};
  runs[1].info = {.run_id = "a", .start_time = 5};
  runs[2].info = {.run_id = "c", .start_time = 9};
  SortRuns(runs);
  EXPECT_EQ(runs[0].info.run_id, "c");
  EXPECT_EQ(runs[1].info.run_id, "a");
  EXPECT_EQ(runs[2].info.run_id, "b");

  Status d = Deleted("SetExperimentTag", "experiment", "4");
  EXPECT_EQ(d.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(d.message(), "SetExperimentTag: experiment '4' is deleted");
}

}  // namespace
}  // namespace ferry::tracker::checks
