#include "proxy/hf/hf_meta.h"

#include <gtest/gtest.h>

namespace ferry::proxy::hf {
namespace {

constexpr const char* kCommit = "0123456789abcdef0123456789abcdef01234567";
constexpr const char* kSha256 = "82977e1074bdb25eb469e688bb6dafd12a00b9ae79dec0d866193543838d5e62";
constexpr const char* kSha1 = "8e2e871357bef652084a73f7173adc5eb8859a33";

TEST(MetaFromResolveAnswerTest, LfsRedirectCarriesLinkedEtagAndSize) {
  http::Response r{.status = 302,
                   .headers = {{"x-repo-commit", kCommit},
                               {"x-linked-etag", std::string("\"") + kSha256 + "\""},
                               {"x-linked-size", "3145728"},
                               {"content-length", "0"},
                               {"x-xet-hash", "abc"}}};
  auto m = MetaFromResolveAnswer(r, "http://hub/x");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_TRUE(m->lfs);
  EXPECT_EQ(m->size, 3145728u);
  EXPECT_EQ(m->digest.ToString(), std::string("sha256:") + kSha256);
  server::Headers h = ClientHeaders(*m);
  EXPECT_EQ(h.Get("X-Linked-Size").value_or(""), "3145728");
  EXPECT_FALSE(h.Has("X-Xet-Hash"));
  EXPECT_FALSE(h.Has("Location"));
  auto back = MetaFromFields(MetaToFields(*m));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->digest, m->digest);
}

TEST(MetaFromResolveAnswerTest, SmallFileUsesWeakEtagAsGitBlobId) {
  http::Response r{.status = 200,
                   .headers = {{"x-repo-commit", kCommit},
                               {"etag", std::string("W/\"") + kSha1 + "\""},
                               {"content-length", "7"}}};
  auto m = MetaFromResolveAnswer(r, "http://hub/x");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_FALSE(m->lfs);
  EXPECT_EQ(m->digest.algorithm, DigestAlgorithm::kGitBlobSha1);
  EXPECT_EQ(m->size, 7u);
}

TEST(MetaFromResolveAnswerTest, MissingFactsAreUpstreamErrors) {
  http::Response no_commit{.status = 200, .headers = {{"etag", kSha1}, {"content-length", "1"}}};
  EXPECT_EQ(MetaFromResolveAnswer(no_commit, "u").status().code(), StatusCode::kUnavailable);
  http::Response odd_etag{
      .status = 200,
      .headers = {{"x-repo-commit", kCommit}, {"etag", "\"v1\""}, {"content-length", "1"}}};
  EXPECT_EQ(MetaFromResolveAnswer(odd_etag, "u").status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(MetaFromFields({{"commit", kCommit}}));
}

}  // namespace
}  // namespace ferry::proxy::hf
