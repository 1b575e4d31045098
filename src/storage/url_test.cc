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

TEST(UrlTest, S3KeysAreLiteral) {
  // As in aws-cli, s5cmd and rclone: no percent-decoding, no query, no fragment.
  auto u = ParseUrl("s3://bucket/dir/a b+c%25.tar?endpoint=http://127.0.0.1:7480&region=ceph");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->scheme, Scheme::kS3);
  EXPECT_EQ(u->bucket, "bucket");
  EXPECT_EQ(u->key, "dir/a b+c%25.tar?endpoint=http://127.0.0.1:7480&region=ceph");
  EXPECT_EQ(u->profile, "");
  EXPECT_EQ(ParseUrl("s3://bucket")->key, "");
  EXPECT_EQ(ParseUrl("s3://bucket/")->key, "");
  EXPECT_TRUE(ParseUrl("s3://bucket/prefix/")->trailing_slash);
  for (std::string key :
       {"q?mark", "a%20b", "100%.txt", "h#sh", "a%20b?x.txt", " lead", "trail ", "unicodé/日本.bin",
        "a//double", "x?colour=blue", "%zz", "k#frag?q=1", "tab\there", "../up", "./dot", "a\nb"}) {
    auto p = ParseUrl("s3://b-1/" + key);
    ASSERT_TRUE(p.ok()) << key << ": " << p.status().ToString();
    EXPECT_EQ(p->key, key);
    EXPECT_EQ(p->bucket, "b-1");
  }
}

TEST(UrlTest, S3UrlsRejectMalformedInput) {
  EXPECT_EQ(ParseUrl("s3:///key").status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ParseUrl("s3:///key").status().message().find("no bucket name"), std::string::npos);
  EXPECT_NE(ParseUrl(std::string("s3://b/a\0b", 10)).status().message().find("NUL"),
            std::string::npos);
  EXPECT_TRUE(ParseUrl("s3://b/" + std::string(1024, 'k')).ok());
  EXPECT_NE(ParseUrl("s3://b/" + std::string(1025, 'k')).status().message().find("1024"),
            std::string::npos);
  auto userinfo = ParseUrl("s3://AKIAX:Pa55w0rdPa55w0rd@bucket/k");
  ASSERT_FALSE(userinfo.ok());
  EXPECT_EQ(userinfo.status().message().find("Pa55w0rd"), std::string::npos);
}

TEST(UrlTest, ProfilePrefixNamesTheProfileOfAnS3Url) {
  auto u = ParseUrl("nas:s3://bucket/a b?c#d");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->scheme, Scheme::kS3);
  EXPECT_EQ(u->profile, "nas");
  EXPECT_EQ(u->bucket, "bucket");
  EXPECT_EQ(u->key, "a b?c#d");
  EXPECT_EQ(ParseUrl("Prod-EU.2:S3://b/k")->profile, "Prod-EU.2");
  // Only for s3://; other schemes say so.
  auto http = ParseUrl("nas:https://h/f");
  ASSERT_FALSE(http.ok());
  EXPECT_NE(http.status().message().find("only to s3:// URLs"), std::string::npos);
  // Not a profile name: an unknown scheme, as before.
  EXPECT_NE(ParseUrl("a b:s3://b/k").status().message().find("unknown URL scheme"),
            std::string::npos);
  EXPECT_FALSE(ParseUrl("-x:s3://b/k").ok());
  // A local path that starts like one is written with ./ (a '/' before "://" makes it a path).
  EXPECT_EQ(ParseUrl("./nas:s3://b/k", "/w")->scheme, Scheme::kLocal);
  EXPECT_EQ(ParseUrl("./nas:s3://b/k", "/w")->key, "w/nas:s3:/b/k");
  EXPECT_FALSE(ParseUrl("s3:/b/x://y").ok());  // still the typo of a known scheme
  EXPECT_FALSE(IsUrlProfileName(""));
  EXPECT_FALSE(IsUrlProfileName("-rf"));
  EXPECT_TRUE(IsUrlProfileName("default"));
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
  EXPECT_EQ(RedactUrl("s3://u:p@b/k"), "s3://b/k");
  // An s3 key is literal: its '?', '#', "://" and '@' are shown as they are.
  EXPECT_EQ(RedactUrl("s3://b/k?x=1#y"), "s3://b/k?x=1#y");
  EXPECT_EQ(RedactUrl("s3://b/see http://me@x/"), "s3://b/see http://me@x/");
  EXPECT_EQ(RedactUrl("nas:s3://b/k@v"), "nas:s3://b/k@v");
  EXPECT_EQ(RedactUrl("/local/a?b"), "/local/a?b");
}

TEST(UrlTest, FormatS3UrlRoundTripsEveryKey) {
  for (std::string key : {"a b/100%?#", "a%20b?x.txt", " x ", "日本", "", "d/", "k?endpoint=x"}) {
    auto url = FormatS3Url("bkt", key);
    EXPECT_EQ(url, "s3://bkt/" + key);
    auto back = ParseUrl(url);
    ASSERT_TRUE(back.ok()) << key;
    EXPECT_EQ(back->key, key);
    auto with_profile = ParseUrl(FormatS3Url("bkt", key, "nas"));
    ASSERT_TRUE(with_profile.ok()) << key;
    EXPECT_EQ(with_profile->key, key);
    EXPECT_EQ(with_profile->profile, "nas");
  }
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
