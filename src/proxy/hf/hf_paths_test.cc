#include "proxy/hf/hf_paths.h"

#include <gtest/gtest.h>

namespace ferry::proxy::hf {
namespace {

TEST(ParseResolvePathTest, ReadsRepoTypesAndOneOrTwoPartIds) {
  auto a = ParseResolvePath("org/model/resolve/main/nested/vocab.txt");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->repo.Key(), "models/org/model");
  EXPECT_EQ(a->revision, "main");
  EXPECT_EQ(a->path, "nested/vocab.txt");
  auto b = ParseResolvePath("datasets/org/data/resolve/v1.0/train.parquet");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->repo.Key(), "datasets/org/data");
  EXPECT_EQ(b->repo.ResolvePrefix(), "datasets/");
  auto c = ParseResolvePath("gpt2/resolve/main/config.json");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->repo.id, "gpt2");
}

TEST(ParseResolvePathTest, RefusesTraversalAndOddNames) {
  for (const char* bad : {"org/m/resolve/main", "org/m/resolve/main/", "org/m/resolve/main/a//b",
                          "org/m/resolve/main/../x", "../m/resolve/main/x", "org/.m/resolve/main/x",
                          "a/b/c/resolve/main/x", "org/m/tree/main/x", "org/m/resolve/main/a\\b"}) {
    EXPECT_FALSE(ParseResolvePath(bad)) << bad;
  }
}

TEST(ParseApiPathTest, ReadsTheEndpointsThatArePassedThrough) {
  auto info = ParseApiPath("models/org/m");
  ASSERT_TRUE(info);
  EXPECT_EQ(info->tail, "");
  auto rev = ParseApiPath("models/org/m/revision/main");
  ASSERT_TRUE(rev);
  EXPECT_EQ(rev->revision, "main");
  EXPECT_EQ(rev->tail, "revision/main");
  auto tree = ParseApiPath("datasets/org/d/tree/0123456789abcdef0123456789abcdef01234567/data");
  ASSERT_TRUE(tree);
  EXPECT_TRUE(IsCommitId(tree->revision));
  EXPECT_EQ(tree->tail, "tree/0123456789abcdef0123456789abcdef01234567/data");
  auto legacy = ParseApiPath("models/gpt2/revision/main");
  ASSERT_TRUE(legacy);
  EXPECT_EQ(legacy->repo.id, "gpt2");
  auto pi = ParseApiPath("models/org/m/paths-info/main");
  ASSERT_TRUE(pi);
  EXPECT_EQ(pi->tail, "paths-info/main");
  for (const char* bad : {"users/x", "models", "models/org/m/commits/main", "models/org/m/tree",
                          "models/org/m/revision/main/extra", "models/org/m/tree/main/../x"}) {
    EXPECT_FALSE(ParseApiPath(bad)) << bad;
  }
}

TEST(IsCommitIdTest, FortyLowerHexDigits) {
  EXPECT_TRUE(IsCommitId("0123456789abcdef0123456789abcdef01234567"));
  EXPECT_FALSE(IsCommitId("main"));
  EXPECT_FALSE(IsCommitId("0123456789ABCDEF0123456789abcdef01234567"));
}

}  // namespace
}  // namespace ferry::proxy::hf
