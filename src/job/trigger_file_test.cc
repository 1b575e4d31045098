#include "job/trigger_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace ferry::job {
namespace {

namespace fs = std::filesystem;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class TriggerFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ferry-trigger-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TriggerFileTest, FailedAnswerHoldsTheRedactedErrorAndTheNextOneClearsIt) {
  TriggerFile t((dir_ / "sync-now").string());
  EXPECT_FALSE(t.Requested());
  std::ofstream(t.path()) << "";
  EXPECT_TRUE(t.Requested());
  t.Answer(Status(StatusCode::kUnavailable,
                  "PutObject 's3://b/x?X-Amz-Signature=abc' failed: connection refused"));
  EXPECT_FALSE(t.Requested());
  EXPECT_EQ(Read(t.failed_path()),
            "PutObject 's3://b/x?X-Amz-Signature=[REDACTED]' failed: connection refused\n");
  std::ofstream(t.path()) << "";
  t.Answer(Status());
  EXPECT_FALSE(fs::exists(t.path()));
  EXPECT_FALSE(fs::exists(t.failed_path()));
}

TEST_F(TriggerFileTest, StaleRequestAndAnswerAreRemoved) {
  TriggerFile t((dir_ / "sync-now").string());
  std::ofstream(t.path()) << "";
  std::ofstream(t.failed_path()) << "old\n";
  t.ClearFailed();
  EXPECT_FALSE(fs::exists(t.failed_path()));
  t.RemoveStale();
  EXPECT_FALSE(t.Requested());
  t.RemoveStale();  // nothing there: fine
}

}  // namespace
}  // namespace ferry::job
