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
  EXPECT_NE(ParseUrl("s3://b/a%00b").status().message().find("NUL"), std::string::npos);
  EXPECT_NE(ParseUrl("s3://b/" + std::string(1025, 'k')).status().message().find("1024"),
            std::string::npos);
}

TEST(UrlTest, UnknownSchemesAreErrors) {
  auto u = ParseUrl("gs://bucket/key");
  EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(u.status().message().find("unknown URL scheme 'gs'"), std::string::npos);
}

TEST(UrlTest, HttpUrlsKeepThePathAsKeyAndTheQueryApart) {
  auto u = ParseUrl("https://host:8443/a/b?x=1&sig=S#frag");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->scheme, Scheme::kHttps);
  EXPECT_EQ(u->bucket, "host:8443");
  EXPECT_EQ(u->key, "a/b");
  EXPECT_EQ(u->query, "x=1&sig=S");
  EXPECT_EQ(KeyBaseName(u->key), "b");  // ferry cp URL dir/ names the file "b"
  auto userinfo = ParseUrl("https://user:Pa55w0rdPa55w0rd@host/f");
  ASSERT_FALSE(userinfo.ok());
  EXPECT_EQ(userinfo.status().message().find("Pa55w0rd"), std::string::npos);
}

TEST(UrlTest, KnownSchemeWithoutSlashesIsAnErrorNotALocalPath) {
  for (const char* typo : {"s3:/b/typo/", "s3:b/k", "S3:/b", "https:/h/f", "http:h", "file:rel"}) {
    auto u = ParseUrl(typo);
    ASSERT_FALSE(u.ok()) << typo;
    EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(u.status().message().find("malformed URL"), std::string::npos) << typo;
  }
  // RFC 8089's short form is a file URL; other colons are ordinary path characters.
  EXPECT_EQ(ParseUrl("file:/data/a%20b")->key, "data/a b");
  EXPECT_EQ(ParseUrl("./s3:/b", "/w")->key, "w/s3:/b");
  EXPECT_EQ(ParseUrl("gs:/x", "/w")->key, "w/gs:/x");
  EXPECT_EQ(ParseUrl("ckpt:step1", "/w")->key, "w/ckpt:step1");
}

TEST(UrlTest, RedactUrlDropsQueriesAndUserinfo) {
  EXPECT_EQ(RedactUrl("https://u:p@h/f?X-Amz-Signature=s"), "https://h/f");
  EXPECT_EQ(RedactUrl("s3://b/k?endpoint=http://u:p@h:1"), "s3://b/k?endpoint=http://h:1");
  EXPECT_EQ(RedactUrl("/local/a?b"), "/local/a?b");
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
