#include "server/path.h"

#include <gtest/gtest.h>

namespace ferry::server {
namespace {

TEST(ParseTargetTest, DecodesPathAndQuery) {
  auto t = ParseTarget("/hf/a%20b/resolve/main/x.bin?download=true&q=a+b%26c&flag");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->path, "/hf/a b/resolve/main/x.bin");
  EXPECT_EQ(t->raw_query, "download=true&q=a+b%26c&flag");
  ASSERT_EQ(t->query.size(), 3u);
  EXPECT_EQ(t->query[1].second, "a b&c");
  EXPECT_EQ(t->query[2].first, "flag");
  EXPECT_EQ(t->query[2].second, "");
}

TEST(ParseTargetTest, KeepsRootAndTrailingSlash) {
  EXPECT_EQ(ParseTarget("/")->path, "/");
  EXPECT_EQ(ParseTarget("/simple/numpy/")->path, "/simple/numpy/");
}

TEST(ParseTargetTest, RejectsTraversalInEveryEncoding) {
  for (const char* bad :
       {"/a/../b",      "/..",     "/a/..",     "/a/%2e%2e/b",  "/a/%2E%2E/b",   "/a/.%2e/b",
        "/a/%2e./b",    "/./a",    "/a/%2fetc", "/a%2F..%2Fb",  "/a/b%5c..%5cc", "/a\\b",
        "/a/%00",       "/a/b%0a", "/a//b",     "//etc/passwd", "http://evil/x", "*",
        "evil.com:443", "",        "/a%zz",     "/a%2",         "/a#frag"}) {
    auto t = ParseTarget(bad);
    EXPECT_FALSE(t.ok()) << bad;
    if (!t.ok()) {
      EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(ParseTargetTest, AllowsDotsInsideNames) {
  EXPECT_EQ(ParseTarget("/a/..b/c..d/.hidden/x.tar.gz")->path, "/a/..b/c..d/.hidden/x.tar.gz");
}

TEST(ParseTargetTest, RejectsMalformedQueryEscape) { EXPECT_FALSE(ParseTarget("/a?x=%g1").ok()); }

}  // namespace
}  // namespace ferry::server
