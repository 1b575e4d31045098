#include "storage/url.h"

#include <gtest/gtest.h>

namespace ferry::storage {
namespace {

TEST(UrlTest, LocalPathsAreLiteralAndMadeAbsolute) {
  auto u = ParseUrl("data/100%.txt", "/work");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->scheme, Scheme::kLocal);
  EXPECT_EQ(u->key, "work/data/100%.txt");
  EXPECT_EQ(ParseUrl("/a//b/./c/../d/")->key, "a/b/d/");
  EXPECT_TRUE(ParseUrl("/a/b/")->trailing_slash);
  EXPECT_EQ(ParseUrl("/")->key, "");
}

TEST(UrlTest, FileUrlsAreDecoded) {
  EXPECT_EQ(ParseUrl("file:///tmp/a%20b")->key, "tmp/a b");
  EXPECT_EQ(ParseUrl("file://localhost/tmp/x")->key, "tmp/x");
  EXPECT_EQ(ParseUrl("file://otherhost/tmp/x").status().code(), StatusCode::kInvalidArgument);
}

TEST(UrlTest, S3UrlsDecodeKeysAndTakeKnownParameters) {
  auto u = ParseUrl("s3://bucket/dir/a b+c%25.tar?endpoint=http://127.0.0.1:7480&region=ceph");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->scheme, Scheme::kS3);
  EXPECT_EQ(u->bucket, "bucket");
  EXPECT_EQ(u->key, "dir/a b+c%.tar");
  EXPECT_EQ(u->params["endpoint"], "http://127.0.0.1:7480");
  EXPECT_EQ(u->params["region"], "ceph");
  EXPECT_EQ(ParseUrl("s3://bucket")->key, "");
  EXPECT_TRUE(ParseUrl("s3://bucket/prefix/")->trailing_slash);
  EXPECT_EQ(ParseUrl("s3://b/q%3Fmark")->key, "q?mark");
}

TEST(UrlTest, S3UrlsRejectMalformedInput) {
  auto bad_escape = ParseUrl("s3://bucket/100%.txt");
  EXPECT_EQ(bad_escape.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_escape.status().message().find("%25"), std::string::npos);
  auto unknown = ParseUrl("s3://bucket/k?colour=blue");
  EXPECT_NE(unknown.status().message().find("unknown parameter 'colour'"), std::string::npos);
  EXPECT_EQ(ParseUrl("s3:///key").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseUrl("s3://b/k?anonymous=maybe").status().code(), StatusCode::kInvalidArgument);
  auto secret = ParseUrl("s3://b/k?secret_key=abc");
  EXPECT_NE(secret.status().message().find("never taken from URLs"), std::string::npos);
}

TEST(UrlTest, UnknownSchemesAreErrors) {
  auto u = ParseUrl("gs://bucket/key");
  EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(u.status().message().find("unknown URL scheme 'gs'"), std::string::npos);
}

TEST(UrlTest, HttpUrlsKeepPathAndQuery) {
  auto u = ParseUrl("https://host:8443/a/b?x=1");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->scheme, Scheme::kHttps);
  EXPECT_EQ(u->bucket, "host:8443");
  EXPECT_EQ(u->key, "a/b?x=1");
}

TEST(UrlTest, FormatS3UrlEscapesWhatParsingDecodes) {
  std::string key = "a b/100%?#";
  auto url = FormatS3Url("bkt", key);
  EXPECT_EQ(url, "s3://bkt/a b/100%25%3F%23");
  EXPECT_EQ(ParseUrl(url)->key, key);
}

TEST(UrlTest, KeyHelpers) {
  EXPECT_EQ(KeyBaseName("a/b/c"), "c");
  EXPECT_EQ(KeyBaseName("a/b/"), "b");
  EXPECT_EQ(DirectoryPrefix("a/b"), "a/b/");
  EXPECT_EQ(DirectoryPrefix("a/b/"), "a/b/");
  EXPECT_EQ(DirectoryPrefix(""), "");
}

}  // namespace
}  // namespace ferry::storage
