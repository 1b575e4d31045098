#include "tracker/retention/checkpoint_retention.h"

#include <gtest/gtest.h>

#include "server/http_types.h"
#include "storage/memory/memory_store.h"
#include "tracker/memory/memory_tracker_store.h"

namespace ferry::tracker::retention {
namespace {

// "mlflow-artifacts:/<path>" -> "<path>", as ferry serve maps served URIs.
std::optional<std::string> Served(std::string_view uri) {
  constexpr std::string_view kScheme = "mlflow-artifacts:/";
  if (!uri.starts_with(kScheme)) return std::nullopt;
  return std::string(uri.substr(kScheme.size()));
}

class CheckpointRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = MakeMemoryTrackerStore();
    repo_ = std::make_shared<artifacts::ArtifactRepo>(storage::MakeMemoryStore(), "arts");
    retention_ = std::make_shared<CheckpointRetention>(store_, repo_, RetentionOptions{&Served});
    exp_ = *store_->CreateExperiment("e", "", {});
    CreateRunRequest req;
    req.experiment_id = exp_;
    req.artifact_root = "mlflow-artifacts:/" + exp_;
    run_ = store_->CreateRun(req)->run_id;
    root_ = exp_ + "/" + run_ + "/artifacts";
  }

  void Policy(const std::string& setting, const std::string& value) {
    ASSERT_TRUE(store_->SetExperimentTag(exp_, {"ferry.retention." + setting, value}).ok());
  }
  void Loss(int64_t step, double v) {
    ASSERT_TRUE(store_->LogBatch(run_, {{"eval_loss", v, step, step}}, {}, {}).ok());
  }
  // Uploads one file of checkpoint `name`, as the PUT handler does.
  void Upload(const std::string& name, const std::string& file = "model.bin") {
    std::string path = root_ + "/checkpoints/" + name + "/" + file;
    retention_->Started(path);
    auto body = server::StringBodyReader("bytes of " + name);
    bool ok = repo_->Put(path, *body, {}).ok();
    retention_->Finished(path, ok);
  }
  std::vector<std::string> Remaining() {
    std::vector<std::string> out;
    auto listed = repo_->List(root_ + "/checkpoints");
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    for (const auto& e : *listed) out.push_back(e.path);
    return out;
  }
  std::string Record() {
    auto run = store_->GetRun(run_);
    EXPECT_TRUE(run.ok());
    for (const Tag& t : run->tags) {
      if (t.key == kRetentionDeletedTag) return t.value;
    }
    return "";
  }

  std::shared_ptr<TrackerStore> store_;
  std::shared_ptr<artifacts::ArtifactRepo> repo_;
  std::shared_ptr<CheckpointRetention> retention_;
  std::string exp_, run_, root_;
};

TEST_F(CheckpointRetentionTest, AppliesAfterEachUploadAndRecordsDeletions) {
  Policy("keep_last", "2");
  Policy("keep_best", "1");
  Policy("metric", "eval_loss");
  const double losses[] = {0.9, 0.2, 0.5, 0.6, 0.7};
  for (int i = 0; i < 5; ++i) {
    Loss((i + 1) * 100, losses[i]);
    Upload("checkpoint-" + std::to_string((i + 1) * 100));
  }
  EXPECT_EQ(Remaining(),
            (std::vector<std::string>{"checkpoint-200", "checkpoint-400", "checkpoint-500"}));
  EXPECT_EQ(Record(), "checkpoints/checkpoint-100,checkpoints/checkpoint-300");
}

TEST_F(CheckpointRetentionTest, APolicyChangeIsAppliedToTheExperimentsRuns) {
  for (int i = 1; i <= 4; ++i) Upload("step_" + std::to_string(i));
  EXPECT_EQ(Remaining().size(), 4u);  // no policy: nothing goes
  Policy("keep_last", "1");
  ASSERT_TRUE(retention_->ApplyToExperiment(exp_).ok());
  EXPECT_EQ(Remaining(), (std::vector<std::string>{"step_4"}));
}

TEST_F(CheckpointRetentionTest, NeverDeletesACheckpointBeingUploaded) {
  Policy("keep_last", "1");
  Upload("checkpoint-1");
  std::string slow = root_ + "/checkpoints/checkpoint-1/optimizer.pt";
  retention_->Started(slow);  // a second file of checkpoint-1 still on its way
  Upload("checkpoint-2");
  EXPECT_EQ(Remaining(), (std::vector<std::string>{"checkpoint-1", "checkpoint-2"}));
  retention_->Finished(slow, /*published=*/false);
  Upload("checkpoint-3");
  EXPECT_EQ(Remaining(), (std::vector<std::string>{"checkpoint-3"}));
}

TEST_F(CheckpointRetentionTest, LeavesFilesDeletedRunsAndOtherPathsAlone) {
  Policy("keep_last", "1");
  auto body = server::StringBodyReader("x");
  ASSERT_TRUE(repo_->Put(root_ + "/checkpoints/notes.txt", *body, {}).ok());
  Upload("c-1");
  Upload("c-2");
  EXPECT_EQ(Remaining(), (std::vector<std::string>{"c-2", "notes.txt"}));
  // A path that looks like a run's but names no run: nothing happens, no error.
  retention_->Finished("9/nope/artifacts/checkpoints/c-1/x", true);
  ASSERT_TRUE(store_->SetRunStage(run_, LifecycleStage::kDeleted).ok());
  EXPECT_TRUE(retention_->ApplyToRun(run_).ok());
}

TEST_F(CheckpointRetentionTest, HuggingFaceTrainersLayoutAtTheRoot) {
  // MLflowCallback logs "checkpoint-STEP/" at the run's artifact root; other directories there
  // are not checkpoints.
  Policy("keep_last", "1");
  for (const char* path : {"model/MLmodel", "checkpoint-10/artifacts/model.safetensors",
                           "checkpoint-20/artifacts/model.safetensors", "checkpoint-20/MLmodel"}) {
    std::string full = root_ + "/" + path;
    retention_->Started(full);
    auto body = server::StringBodyReader(path);
    bool ok = repo_->Put(full, *body, {}).ok();
    retention_->Finished(full, ok);
  }
  std::vector<std::string> names;
  auto listed = repo_->List(root_);
  ASSERT_TRUE(listed.ok());
  for (const auto& e : *listed) names.push_back(e.path);
  EXPECT_EQ(names, (std::vector<std::string>{"checkpoint-20", "model"}));
  EXPECT_EQ(Record(), "checkpoint-10");
}

TEST(CheckpointDirsOfTest, FindsEachCandidate) {
  EXPECT_EQ(CheckpointDirsOf("1/r/artifacts/checkpoints/c-5/model.bin"),
            (std::vector<std::string>{"1/r/artifacts/checkpoints/c-5"}));
  EXPECT_EQ(CheckpointDirsOf("1/r/artifacts/checkpoints/c-5/sub/checkpoints/x/y"),
            (std::vector<std::string>{"1/r/artifacts/checkpoints/c-5",
                                      "1/r/artifacts/checkpoints/c-5/sub/checkpoints/x"}));
  EXPECT_EQ(CheckpointDirsOf("1/r/artifacts/checkpoint-500/artifacts/model.bin"),
            (std::vector<std::string>{"1/r/artifacts/checkpoint-500"}));
  EXPECT_EQ(CheckpointDirsOf("1/r/artifacts/checkpoints/checkpoint-5/x"),
            (std::vector<std::string>{"1/r/artifacts/checkpoints/checkpoint-5"}));
  EXPECT_TRUE(CheckpointDirsOf("1/r/artifacts/checkpoints/file.bin").empty());
  EXPECT_TRUE(CheckpointDirsOf("1/r/artifacts/checkpoint-5").empty());  // a file
  EXPECT_TRUE(CheckpointDirsOf("1/r/artifacts/model/c-5/x").empty());
}

TEST(RootsOfTest, BothLayouts) {
  EXPECT_EQ(RootsOf("1/r/artifacts/checkpoints/step_5"),
            (std::vector<std::string>{"1/r/artifacts"}));
  EXPECT_EQ(RootsOf("1/r/artifacts/checkpoint-5"), (std::vector<std::string>{"1/r/artifacts"}));
  EXPECT_EQ(RootsOf("1/r/artifacts/checkpoints/checkpoint-5"),
            (std::vector<std::string>{"1/r/artifacts", "1/r/artifacts/checkpoints"}));
}

}  // namespace
}  // namespace ferry::tracker::retention
