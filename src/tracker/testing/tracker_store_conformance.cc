// Experiments and runs (metrics are in tracker_store_conformance_metrics.cc).
#include "tracker/testing/tracker_store_conformance.h"

#include <gmock/gmock.h>

#include <algorithm>
#include <set>

namespace ferry::tracker::testing {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

void TrackerStoreConformanceTest::SetUp() {
  store_ = GetParam().make();
  ASSERT_NE(store_, nullptr);
}

std::string TrackerStoreConformanceTest::NewExperiment(const std::string& name,
                                                       std::vector<Tag> tags) {
  auto id = store_->CreateExperiment(name, "mem://artifacts/" + name, tags);
  EXPECT_TRUE(id.ok()) << id.status().ToString();
  return id.ok() ? *id : "";
}

RunInfo TrackerStoreConformanceTest::NewRun(const std::string& experiment_id, int64_t start_time) {
  auto run = store_->CreateRun({.experiment_id = experiment_id,
                                .user_id = "alice",
                                .start_time = start_time,
                                .artifact_root = "s3://bucket/root"});
  EXPECT_TRUE(run.ok()) << run.status().ToString();
  return run.ok() ? *run : RunInfo{};
}

void TrackerStoreConformanceTest::Log(const std::string& run_id,
                                      const std::vector<MetricPoint>& metrics,
                                      const std::vector<Param>& params,
                                      const std::vector<Tag>& tags) {
  Status s = store_->LogBatch(run_id, metrics, params, tags);
  ASSERT_TRUE(s.ok()) << s.ToString();
}

std::vector<MetricPoint> TrackerStoreConformanceTest::History(const std::string& run_id,
                                                              const std::string& key,
                                                              int page_size) {
  std::vector<MetricPoint> out;
  std::string token;
  for (int pages = 0; pages < 100000; ++pages) {
    auto page = store_->GetMetricHistory(run_id, key, page_size, token);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok()) break;
    EXPECT_LE(page->items.size(), static_cast<size_t>(page_size));
    out.insert(out.end(), page->items.begin(), page->items.end());
    token = page->next_page_token;
    if (token.empty()) break;
  }
  return out;
}

namespace {

std::vector<std::string> Names(const std::vector<Experiment>& v) {
  std::vector<std::string> out;
  for (const auto& e : v) out.push_back(e.name);
  return out;
}

}  // namespace

TEST_P(TrackerStoreConformanceTest, DefaultExperimentExists) {
  auto e = store_->GetExperiment("0");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->name, "Default");
  EXPECT_EQ(e->stage, LifecycleStage::kActive);
  auto by_name = store_->GetExperimentByName("Default");
  ASSERT_TRUE(by_name.ok());
  EXPECT_EQ(by_name->id, "0");
}

TEST_P(TrackerStoreConformanceTest, CreatedExperimentReadsBack) {
  std::string id = NewExperiment("exp", {{"team", "vision"}, {"a", "1"}});
  EXPECT_NE(id, "0");
  auto e = store_->GetExperiment(id);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->id, id);
  EXPECT_EQ(e->name, "exp");
  EXPECT_EQ(e->artifact_location, "mem://artifacts/exp");
  EXPECT_EQ(e->stage, LifecycleStage::kActive);
  EXPECT_GT(e->creation_time, 0);
  EXPECT_THAT(e->tags, ElementsAre(Tag{"a", "1"}, Tag{"team", "vision"}));
  EXPECT_NE(NewExperiment("other"), id);
}

TEST_P(TrackerStoreConformanceTest, ExperimentNamesAreUniqueDeletedOnesIncluded) {
  std::string id = NewExperiment("taken");
  EXPECT_EQ(store_->CreateExperiment("taken", "", {}).status(), StatusCode::kAlreadyExists);
  ASSERT_TRUE(store_->SetExperimentStage(id, LifecycleStage::kDeleted).ok());
  EXPECT_EQ(store_->CreateExperiment("taken", "", {}).status(), StatusCode::kAlreadyExists);
  std::string other = NewExperiment("other");
  EXPECT_EQ(store_->RenameExperiment(other, "taken"), StatusCode::kAlreadyExists);
  EXPECT_EQ(store_->CreateExperiment("", "", {}).status(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CreateExperiment("x", "", {{"", "v"}}).status(), StatusCode::kInvalidArgument);
}

TEST_P(TrackerStoreConformanceTest, UnknownExperimentsAreNotFound) {
  EXPECT_EQ(store_->GetExperiment("987654").status(), StatusCode::kNotFound);
  EXPECT_EQ(store_->GetExperiment("not-a-number").status(), StatusCode::kNotFound);
  EXPECT_EQ(store_->GetExperimentByName("nope").status(), StatusCode::kNotFound);
  EXPECT_EQ(store_->RenameExperiment("987654", "x"), StatusCode::kNotFound);
  EXPECT_EQ(store_->SetExperimentStage("987654", LifecycleStage::kDeleted), StatusCode::kNotFound);
  EXPECT_EQ(store_->SetExperimentTag("987654", {"k", "v"}), StatusCode::kNotFound);
}

TEST_P(TrackerStoreConformanceTest, DeletedExperimentIsStillFoundByIdAndName) {
  std::string id = NewExperiment("gone");
  ASSERT_TRUE(store_->SetExperimentStage(id, LifecycleStage::kDeleted).ok());
  EXPECT_EQ(store_->GetExperiment(id)->stage, LifecycleStage::kDeleted);
  EXPECT_EQ(store_->GetExperimentByName("gone")->stage, LifecycleStage::kDeleted);
  EXPECT_EQ(store_->RenameExperiment(id, "back"), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->SetExperimentTag(id, {"k", "v"}), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->CreateRun({.experiment_id = id}).status(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(store_->SetExperimentStage(id, LifecycleStage::kActive).ok());
  EXPECT_EQ(store_->GetExperiment(id)->stage, LifecycleStage::kActive);
}

TEST_P(TrackerStoreConformanceTest, RenameAndTagExperiment) {
  std::string id = NewExperiment("before");
  ASSERT_TRUE(store_->RenameExperiment(id, "after").ok());
  ASSERT_TRUE(store_->RenameExperiment(id, "after").ok());  // its own name: fine
  EXPECT_EQ(store_->GetExperiment(id)->name, "after");
  EXPECT_EQ(store_->GetExperimentByName("before").status(), StatusCode::kNotFound);
  EXPECT_EQ(store_->RenameExperiment(id, ""), StatusCode::kInvalidArgument);
  ASSERT_TRUE(store_->SetExperimentTag(id, {"k", "1"}).ok());
  ASSERT_TRUE(store_->SetExperimentTag(id, {"k", "2"}).ok());
  EXPECT_THAT(store_->GetExperiment(id)->tags, ElementsAre(Tag{"k", "2"}));
  EXPECT_EQ(store_->SetExperimentTag(id, {"", "v"}), StatusCode::kInvalidArgument);
}

TEST_P(TrackerStoreConformanceTest, DeletingAnExperimentDeletesAndRestoresItsRuns) {
  std::string id = NewExperiment("cascade");
  RunInfo run = NewRun(id);
  ASSERT_TRUE(store_->SetExperimentStage(id, LifecycleStage::kDeleted).ok());
  EXPECT_EQ(store_->GetRun(run.run_id)->info.stage, LifecycleStage::kDeleted);
  EXPECT_EQ(store_->LogBatch(run.run_id, {{"m", 1, 1, 1}}, {}, {}),
            StatusCode::kFailedPrecondition);
  ASSERT_TRUE(store_->SetExperimentStage(id, LifecycleStage::kActive).ok());
  EXPECT_EQ(store_->GetRun(run.run_id)->info.stage, LifecycleStage::kActive);
}

TEST_P(TrackerStoreConformanceTest, SearchExperimentsByViewNameAndTag) {
  std::string a = NewExperiment("vision-a", {{"team", "cv"}});
  std::string b = NewExperiment("vision_b", {{"team", "cv"}, {"prod", "1"}});
  std::string c = NewExperiment("Speech", {{"team", "asr"}});
  ASSERT_TRUE(store_->SetExperimentStage(c, LifecycleStage::kDeleted).ok());
  auto search = [&](ExperimentQuery q) {
    auto page = store_->SearchExperiments(q);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    auto names = Names(page.ok() ? page->items : std::vector<Experiment>{});
    std::sort(names.begin(), names.end());
    return names;
  };
  EXPECT_THAT(search({}), ElementsAre("Default", "vision-a", "vision_b"));
  EXPECT_THAT(search({.view = ViewType::kDeletedOnly}), ElementsAre("Speech"));
  EXPECT_THAT(search({.view = ViewType::kAll}),
              ElementsAre("Default", "Speech", "vision-a", "vision_b"));
  EXPECT_THAT(search({.name_like = "vision%"}), ElementsAre("vision-a", "vision_b"));
  EXPECT_THAT(search({.name_like = "vision_a"}), ElementsAre("vision-a"));  // '_': one char
  EXPECT_THAT(search({.name_like = "%B"}), ElementsAre());                  // case-sensitive
  EXPECT_THAT(search({.name_like = "%b"}), ElementsAre("vision_b"));
  EXPECT_THAT(search({.view = ViewType::kAll, .name_like = "%ee%"}), ElementsAre("Speech"));
  EXPECT_THAT(search({.tags_equal = {{"team", "cv"}}}), ElementsAre("vision-a", "vision_b"));
  EXPECT_THAT(search({.tags_equal = {{"team", "cv"}, {"prod", "1"}}}), ElementsAre("vision_b"));
  EXPECT_THAT(search({.tags_equal = {{"team", "c"}}}), ElementsAre());
  (void)a;
  (void)b;
}

TEST_P(TrackerStoreConformanceTest, SearchExperimentsPagesInCreationOrderNewestFirst) {
  for (int i = 0; i < 7; ++i) NewExperiment("e" + std::to_string(i));
  std::vector<Experiment> seen;
  std::string token;
  int pages = 0;
  do {
    auto page = store_->SearchExperiments({.max_results = 3, .page_token = token});
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    EXPECT_LE(page->items.size(), 3u);
    seen.insert(seen.end(), page->items.begin(), page->items.end());
    token = page->next_page_token;
    ++pages;
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(seen.size(), 8u);  // Default too
  for (size_t i = 1; i < seen.size(); ++i) {
    const auto& x = seen[i - 1];
    const auto& y = seen[i];
    EXPECT_TRUE(x.creation_time > y.creation_time ||
                (x.creation_time == y.creation_time && std::stoll(x.id) < std::stoll(y.id)))
        << x.id << " before " << y.id;
  }
  std::set<std::string> ids;
  for (const auto& e : seen) ids.insert(e.id);
  EXPECT_EQ(ids.size(), 8u);
  EXPECT_EQ(store_->SearchExperiments({.max_results = 0}).status(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->SearchExperiments({.page_token = "garbage!"}).status(),
            StatusCode::kInvalidArgument);
}

TEST_P(TrackerStoreConformanceTest, CreateRunFillsIdNameAndArtifactUri) {
  std::set<std::string> ids;
  for (int i = 0; i < 50; ++i) {
    RunInfo run = NewRun("0", 1234);
    ASSERT_EQ(run.run_id.size(), 32u);
    EXPECT_TRUE(std::all_of(run.run_id.begin(), run.run_id.end(), [](char c) {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    })) << run.run_id;
    ids.insert(run.run_id);
    EXPECT_FALSE(run.run_name.empty());
    EXPECT_EQ(run.artifact_uri, "s3://bucket/root/" + run.run_id + "/artifacts");
    EXPECT_EQ(run.experiment_id, "0");
    EXPECT_EQ(run.user_id, "alice");
    EXPECT_EQ(run.start_time, 1234);
    EXPECT_EQ(run.status, RunStatus::kRunning);
    EXPECT_EQ(run.stage, LifecycleStage::kActive);
    EXPECT_FALSE(run.end_time.has_value());
  }
  EXPECT_EQ(ids.size(), 50u);
}

TEST_P(TrackerStoreConformanceTest, RunNameAndItsTagAgree) {
  auto named = store_->CreateRun({.experiment_id = "0", .run_name = "mine", .artifact_root = "/r"});
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->run_name, "mine");
  auto run = store_->GetRun(named->run_id);
  EXPECT_THAT(run->tags, ElementsAre(Tag{"mlflow.runName", "mine"}));
  auto from_tag = store_->CreateRun(
      {.experiment_id = "0", .tags = {{"mlflow.runName", "tagged"}}, .artifact_root = "/r"});
  ASSERT_TRUE(from_tag.ok());
  EXPECT_EQ(from_tag->run_name, "tagged");
  EXPECT_EQ(store_
                ->CreateRun({.experiment_id = "0",
                             .run_name = "a",
                             .tags = {{"mlflow.runName", "b"}},
                             .artifact_root = "/r"})
                .status(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(store_->UpdateRun(named->run_id, {.run_name = "renamed"}).ok());
  EXPECT_THAT(store_->GetRun(named->run_id)->tags, ElementsAre(Tag{"mlflow.runName", "renamed"}));
  Log(named->run_id, {}, {}, {{"mlflow.runName", "by-tag"}});
  EXPECT_EQ(store_->GetRun(named->run_id)->info.run_name, "by-tag");
}

TEST_P(TrackerStoreConformanceTest, CreateRunNeedsAnActiveExperimentAndValidTags) {
  EXPECT_EQ(store_->CreateRun({.experiment_id = "424242"}).status(), StatusCode::kNotFound);
  EXPECT_EQ(store_->CreateRun({.experiment_id = "0", .tags = {{"", "v"}}}).status(),
            StatusCode::kInvalidArgument);
}

TEST_P(TrackerStoreConformanceTest, UpdateRunChangesStatusEndTimeAndName) {
  RunInfo run = NewRun();
  auto updated = store_->UpdateRun(
      run.run_id, {.status = RunStatus::kFinished, .end_time = 5000, .run_name = "done"});
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->status, RunStatus::kFinished);
  EXPECT_EQ(updated->end_time, 5000);
  EXPECT_EQ(updated->run_name, "done");
  auto got = store_->GetRun(run.run_id);
  EXPECT_EQ(got->info.status, RunStatus::kFinished);
  EXPECT_EQ(got->info.end_time, 5000);
  EXPECT_EQ(got->info.run_name, "done");
  auto partial = store_->UpdateRun(run.run_id, {.status = RunStatus::kFailed});
  EXPECT_EQ(partial->end_time, 5000);
  EXPECT_EQ(partial->run_name, "done");
  EXPECT_EQ(store_->UpdateRun("0123456789abcdef0123456789abcdef", {}).status(),
            StatusCode::kNotFound);
}

TEST_P(TrackerStoreConformanceTest, DeleteAndRestoreRun) {
  RunInfo run = NewRun();
  ASSERT_TRUE(store_->SetRunStage(run.run_id, LifecycleStage::kDeleted).ok());
  auto got = store_->GetRun(run.run_id);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->info.stage, LifecycleStage::kDeleted);
  ASSERT_TRUE(store_->SetRunStage(run.run_id, LifecycleStage::kActive).ok());
  EXPECT_EQ(store_->GetRun(run.run_id)->info.stage, LifecycleStage::kActive);
  EXPECT_EQ(store_->SetRunStage("nope", LifecycleStage::kDeleted), StatusCode::kNotFound);
  EXPECT_EQ(store_->GetRun("nope").status(), StatusCode::kNotFound);
}

TEST_P(TrackerStoreConformanceTest, WritesToDeletedOrUnknownRunsFail) {
  RunInfo run = NewRun();
  Log(run.run_id, {{"m", 1, 1, 1}}, {}, {{"t", "v"}});
  ASSERT_TRUE(store_->SetRunStage(run.run_id, LifecycleStage::kDeleted).ok());
  EXPECT_EQ(store_->LogBatch(run.run_id, {{"m", 2, 2, 2}}, {}, {}),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->LogBatch(run.run_id, {}, {{"p", "1"}}, {}), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->UpdateRun(run.run_id, {.status = RunStatus::kKilled}).status(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->DeleteTag(run.run_id, "t"), StatusCode::kFailedPrecondition);
  const std::string unknown = "ffffffffffffffffffffffffffffffff";
  EXPECT_EQ(store_->LogBatch(unknown, {{"m", 1, 1, 1}}, {}, {}), StatusCode::kNotFound);
  EXPECT_EQ(store_->DeleteTag(unknown, "t"), StatusCode::kNotFound);
  EXPECT_EQ(store_->GetMetricHistory(unknown, "m", 10, "").status(), StatusCode::kNotFound);
  // Reads of the deleted run still work.
  EXPECT_EQ(History(run.run_id, "m").size(), 1u);
}

TEST_P(TrackerStoreConformanceTest, ParamsAreImmutable) {
  RunInfo run = NewRun();
  Log(run.run_id, {}, {{"lr", "0.1"}, {"bs", "32"}});
  Log(run.run_id, {}, {{"lr", "0.1"}});  // the same value again: fine
  EXPECT_EQ(
      store_->LogBatch(run.run_id, {{"m", 1, 1, 1}}, {{"new", "x"}, {"lr", "0.2"}}, {{"t", "v"}}),
      StatusCode::kInvalidArgument);
  // Nothing of the refused batch was written.
  auto got = store_->GetRun(run.run_id);
  EXPECT_THAT(got->params, ElementsAre(Param{"bs", "32"}, Param{"lr", "0.1"}));
  EXPECT_TRUE(got->latest_metrics.empty());
  EXPECT_EQ(got->tags.size(), 1u);  // mlflow.runName only
  // Two values for one key in one batch.
  EXPECT_EQ(store_->LogBatch(run.run_id, {}, {{"x", "1"}, {"x", "2"}}, {}),
            StatusCode::kInvalidArgument);
  Log(run.run_id, {}, {{"y", "1"}, {"y", "1"}});
  EXPECT_EQ(store_->LogBatch(run.run_id, {}, {{"", "1"}}, {}), StatusCode::kInvalidArgument);
}

TEST_P(TrackerStoreConformanceTest, TagsAreSetOverwrittenAndDeleted) {
  RunInfo run = NewRun();
  Log(run.run_id, {}, {}, {{"a", "1"}, {"b", "2"}});
  Log(run.run_id, {}, {}, {{"a", "3"}});
  ASSERT_TRUE(store_->DeleteTag(run.run_id, "b").ok());
  EXPECT_THAT(store_->GetRun(run.run_id)->tags,
              ElementsAre(Tag{"a", "3"}, Tag{"mlflow.runName", run.run_name}));
  EXPECT_EQ(store_->DeleteTag(run.run_id, "b"), StatusCode::kNotFound);
}

TEST_P(TrackerStoreConformanceTest, ScanRunsByExperimentAndView) {
  std::string e1 = NewExperiment("e1");
  std::string e2 = NewExperiment("e2");
  RunInfo a = NewRun(e1, 100);
  RunInfo b = NewRun(e1, 300);
  RunInfo c = NewRun(e2, 200);
  RunInfo d = NewRun(e1, 50);
  ASSERT_TRUE(store_->SetRunStage(d.run_id, LifecycleStage::kDeleted).ok());
  Log(b.run_id, {{"loss", 0.5, 10, 1}, {"loss", 0.25, 20, 2}}, {{"lr", "1"}}, {{"t", "x"}});
  auto ids = [&](RunScan scan) {
    auto runs = store_->ScanRuns(scan);
    EXPECT_TRUE(runs.ok()) << runs.status().ToString();
    std::vector<std::string> out;
    for (const auto& r : runs.ok() ? *runs : std::vector<tracker::Run>{})
      out.push_back(r.info.run_id);
    return out;
  };
  EXPECT_THAT(ids({.experiment_ids = {e1}}), ElementsAre(b.run_id, a.run_id));
  EXPECT_THAT(ids({.experiment_ids = {e1}, .view = ViewType::kDeletedOnly}), ElementsAre(d.run_id));
  EXPECT_THAT(ids({.experiment_ids = {e1}, .view = ViewType::kAll}),
              ElementsAre(b.run_id, a.run_id, d.run_id));
  EXPECT_THAT(ids({.experiment_ids = {e1, e2}}), ElementsAre(b.run_id, c.run_id, a.run_id));
  EXPECT_THAT(ids({.experiment_ids = {"999"}}), ElementsAre());
  EXPECT_THAT(ids({}), ElementsAre());
  auto runs = store_->ScanRuns({.experiment_ids = {e1}});
  const tracker::Run& rb = (*runs)[0];
  EXPECT_THAT(rb.params, ElementsAre(Param{"lr", "1"}));
  EXPECT_THAT(rb.tags, UnorderedElementsAre(Tag{"t", "x"}, Tag{"mlflow.runName", b.run_name}));
  EXPECT_THAT(rb.latest_metrics, ElementsAre(MetricPoint{"loss", 0.25, 20, 2}));
}

}  // namespace ferry::tracker::testing
