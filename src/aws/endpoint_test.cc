#include "aws/endpoint.h"

#include <gtest/gtest.h>

namespace ferry::aws {
namespace {

MapEnvironment NoFiles() {
  return MapEnvironment(
      {{"AWS_CONFIG_FILE", "/nonexistent"}, {"AWS_SHARED_CREDENTIALS_FILE", "/nonexistent"}});
}

TEST(EndpointTest, DefaultsToVirtualHostedAws) {
  auto env = NoFiles();
  auto ep = ResolveS3Endpoint(env, {.bucket = "data"});
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->region, "us-east-1");
  EXPECT_FALSE(ep->path_style);
  EXPECT_EQ(ep->ObjectUrl("data", "a%20b"), "https://data.s3.us-east-1.amazonaws.com/a%20b");
}

TEST(EndpointTest, CustomEndpointFromEnvironmentUsesPathStyle) {
  auto env = NoFiles();
  env.Set("AWS_ENDPOINT_URL", "http://127.0.0.1:7480/");
  env.Set("AWS_REGION", "ceph");
  auto ep = ResolveS3Endpoint(env, {.bucket = "data"});
  ASSERT_TRUE(ep.ok());
  EXPECT_TRUE(ep->path_style);
  EXPECT_EQ(ep->region, "ceph");
  EXPECT_EQ(ep->ObjectUrl("data", "k"), "http://127.0.0.1:7480/data/k");
}

TEST(EndpointTest, ServiceSpecificAndParameterOverridesWin) {
  auto env = NoFiles();
  env.Set("AWS_ENDPOINT_URL", "http://generic:1");
  env.Set("AWS_ENDPOINT_URL_S3", "http://s3specific:2");
  auto ep = ResolveS3Endpoint(env, {.bucket = "data"});
  EXPECT_EQ(ep->authority, "s3specific:2");
  ep = ResolveS3Endpoint(env,
                         {.bucket = "data", .endpoint = "http://param:3", .addressing = "virtual"});
  EXPECT_EQ(ep->authority, "data.param:3");
  EXPECT_FALSE(ep->path_style);
}

TEST(EndpointTest, UserinfoIsRefusedWithoutEchoingIt) {
  auto env = NoFiles();
  for (const char* e : {"http://user:S3cretPassw0rd@127.0.0.1:7480", "user:S3cretPassw0rd@host",
                        "https://u:S3cretPassw0rd@h/path?x=S3cretPassw0rd"}) {
    auto r = ResolveS3Endpoint(env, {.bucket = "b", .endpoint = e});
    ASSERT_FALSE(r.ok()) << e;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().find("S3cretPassw0rd"), std::string::npos)
        << r.status().message();
  }
}

TEST(EndpointTest, RejectsBadInput) {
  auto env = NoFiles();
  EXPECT_EQ(ResolveS3Endpoint(env, {.bucket = "a"}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ResolveS3Endpoint(env, {.bucket = "ok-bucket", .endpoint = "localhost:9000"}).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ResolveS3Endpoint(env, {.bucket = "ok-bucket", .addressing = "sideways"}).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateBucketName("bad/name").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::aws
