#include "tracker/artifacts/artifact_path.h"

#include <gtest/gtest.h>

namespace ferry::tracker::artifacts {
namespace {

TEST(ArtifactPathTest, AcceptsRelativePathsAndDropsATrailingSlash) {
  EXPECT_EQ(*CleanArtifactPath("model/weights.bin"), "model/weights.bin");
  EXPECT_EQ(*CleanArtifactPath("dir/"), "dir");
  EXPECT_EQ(*CleanArtifactPath("", true), "");
  EXPECT_EQ(*CleanArtifactPath("a..b/c.d"), "a..b/c.d");
}

TEST(ArtifactPathTest, RejectsTraversalInEveryForm) {
  for (const char* bad : {"", "/etc/passwd", "../x", "a/../../x", "a/./b", "a//b", "..", ".",
                          "a\\..\\b", "a/\x01", ".ferry-mpu/x", ".ferry-mpu"}) {
    auto r = CleanArtifactPath(bad);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ArtifactPathTest, JoinsOntoTheRoot) {
  EXPECT_EQ(JoinKey("tracker/artifacts", "a/b"), "tracker/artifacts/a/b");
  EXPECT_EQ(JoinKey("", "a"), "a");
  EXPECT_EQ(JoinKey("root", ""), "root");
}

}  // namespace
}  // namespace ferry::tracker::artifacts
