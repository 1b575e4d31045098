#include "tracker/artifacts/artifact_repo.h"

#include <gtest/gtest.h>

#include "base/hash.h"
#include "storage/memory/memory_store.h"
#include "tracker/artifacts/artifacts_test_util.h"

namespace ferry::tracker::artifacts {
namespace {

using testing::Bytes;
using testing::PiecewiseBody;

class ArtifactRepoTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "local") {
      dir_ = std::make_unique<testing::TempDir>("repo");
      store_ = storage::MakeLocalStore(dir_->path());
    } else {
      store_ = storage::MakeMemoryStore();
    }
    repo_ = std::make_unique<ArtifactRepo>(store_, "tracker/artifacts");
  }
  Result<storage::ObjectInfo> Put(const std::string& path, const std::string& data,
                                  UploadChecks checks = {}, bool fail = false) {
    PiecewiseBody body(data, 300 * 1024, fail, checks.length);
    return repo_->Put(path, body, checks);
  }

  std::unique_ptr<testing::TempDir> dir_;
  std::shared_ptr<storage::Store> store_;
  std::unique_ptr<ArtifactRepo> repo_;
};

TEST_P(ArtifactRepoTest, PutStreamsTheBodyAndPublishesIt) {
  std::string data = Bytes(3 << 20);
  UploadChecks c;
  c.length = data.size();
  c.sha256_hex = Sha256Hex(data);
  c.md5_base64 = Base64Encode(Md5(data));
  auto info = Put("model/w.bin", data, c);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(*store_->ReadAll("tracker/artifacts/model/w.bin"), data);
}

TEST_P(ArtifactRepoTest, ABrokenOrWrongBodyLeavesTheOldVersion) {
  ASSERT_TRUE(Put("a.bin", "old").ok());
  std::string data = Bytes(1 << 20);
  // The client goes away mid-body.
  EXPECT_FALSE(Put("a.bin", data, {}, /*fail=*/true).ok());
  // Shorter than Content-Length.
  UploadChecks c;
  c.length = data.size() + 1;
  EXPECT_EQ(Put("a.bin", data, c).status().code(), StatusCode::kInvalidArgument);
  // A wrong checksum, each kind.
  UploadChecks sha;
  sha.sha256_hex = std::string(64, '0');
  EXPECT_EQ(Put("a.bin", data, sha).status().code(), StatusCode::kInvalidArgument);
  UploadChecks md5;
  md5.md5_base64 = Base64Encode(Md5("other"));
  EXPECT_EQ(Put("a.bin", data, md5).status().code(), StatusCode::kInvalidArgument);
  UploadChecks digest;
  digest.sha256_base64 = Base64Encode(Sha256("other"));
  EXPECT_EQ(Put("a.bin", data, digest).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*store_->ReadAll("tracker/artifacts/a.bin"), "old");
  // Nothing else became visible (no temporary files in listings).
  auto list = repo_->List("");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].path, "a.bin");
  // The right Digest passes.
  UploadChecks ok;
  ok.sha256_base64 = Base64Encode(Sha256(data));
  EXPECT_TRUE(Put("a.bin", data, ok).ok());
}

TEST_P(ArtifactRepoTest, ListsOneLevelWithSizesAndDeletesTrees) {
  ASSERT_TRUE(Put("run/metrics.json", "{}").ok());
  ASSERT_TRUE(Put("run/model/w.bin", "12345").ok());
  ASSERT_TRUE(Put("run/model/sub/x", "1").ok());
  auto top = repo_->List("run");
  ASSERT_TRUE(top.ok());
  ASSERT_EQ(top->size(), 2u);
  EXPECT_EQ((*top)[0].path, "metrics.json");
  EXPECT_EQ((*top)[0].file_size, 2u);
  EXPECT_EQ((*top)[1].path, "model");
  EXPECT_TRUE((*top)[1].is_dir);
  auto model = repo_->List("run/model/");
  ASSERT_TRUE(model.ok());
  ASSERT_EQ(model->size(), 2u);
  EXPECT_EQ((*model)[0].path, "sub");
  EXPECT_EQ((*model)[1].path, "w.bin");
  EXPECT_EQ((*model)[1].file_size, 5u);
  EXPECT_TRUE(repo_->List("nothing")->empty());
  EXPECT_EQ(repo_->List("../x").status().code(), StatusCode::kInvalidArgument);

  ASSERT_TRUE(repo_->Delete("run/model").ok());
  EXPECT_EQ(repo_->List("run")->size(), 1u);
  ASSERT_TRUE(repo_->Delete("run/metrics.json").ok());
  EXPECT_TRUE(repo_->Delete("never/was").ok());
  ASSERT_TRUE(Put("exp/run1/artifacts/a", "1").ok());
  ASSERT_TRUE(Put("exp/run2/artifacts/a", "2").ok());
  ASSERT_TRUE(repo_->DeleteTree("exp/run1").ok());
  EXPECT_EQ(store_->Stat("tracker/artifacts/exp/run1/artifacts/a").status().code(),
            StatusCode::kNotFound);
  EXPECT_TRUE(store_->Stat("tracker/artifacts/exp/run2/artifacts/a").ok());
  EXPECT_EQ(repo_->DeleteTree("").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(repo_->DeleteTree("../exp").code(), StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Stores, ArtifactRepoTest, ::testing::Values("memory", "local"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace ferry::tracker::artifacts
