#include "aws/endpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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

// A config file with two endpoints, as docs/configuration.md shows.
class ProfileEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ferry-endpoint-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "config") << "[default]\nregion = eu-west-1\n"
                                      "[profile nas]\nendpoint_url = http://nas:7480\n"
                                      "region = ceph\ns3 =\n  addressing_style = virtual\n"
                                      "[profile lab]\ns3 =\n  endpoint_url = http://lab:9000\n";
    env_.Set("AWS_CONFIG_FILE", (dir_ / "config").string());
    env_.Set("AWS_SHARED_CREDENTIALS_FILE", (dir_ / "none").string());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  MapEnvironment env_;
};

TEST_F(ProfileEndpointTest, ProfileSetsEndpointRegionAndAddressing) {
  auto ep = ResolveS3Endpoint(env_, {.bucket = "data", .profile = "nas"});
  ASSERT_TRUE(ep.ok()) << ep.status().ToString();
  EXPECT_EQ(ep->authority, "data.nas:7480");
  EXPECT_EQ(ep->region, "ceph");
  EXPECT_FALSE(ep->path_style);
  ep = ResolveS3Endpoint(env_, {.bucket = "data", .profile = "lab"});
  EXPECT_EQ(ep->authority, "lab:9000");  // s3.endpoint_url
  EXPECT_EQ(ep->region, "us-east-1");
}

TEST_F(ProfileEndpointTest, EnvironmentBeatsAProfileUnlessTheUrlNamedIt) {
  env_.Set("AWS_ENDPOINT_URL", "http://env:1");
  env_.Set("AWS_REGION", "env-region");
  // --profile nas / AWS_PROFILE=nas: the AWS CLI's order, the environment first.
  auto ep = ResolveS3Endpoint(env_, {.bucket = "data", .profile = "nas"});
  EXPECT_EQ(ep->authority, "data.env:1");
  EXPECT_EQ(ep->region, "env-region");
  // nas:s3://data/...: the profile first.
  ep = ResolveS3Endpoint(env_, {.bucket = "data", .profile = "nas", .profile_first = true});
  EXPECT_EQ(ep->authority, "data.nas:7480");
  EXPECT_EQ(ep->region, "ceph");
  // What the named profile leaves unset still comes from the environment.
  ep = ResolveS3Endpoint(env_, {.bucket = "data", .profile = "lab", .profile_first = true});
  EXPECT_EQ(ep->authority, "lab:9000");
  EXPECT_EQ(ep->region, "env-region");
  // --endpoint-url beats everything.
  ep = ResolveS3Endpoint(env_, {.bucket = "data", .endpoint = "http://flag:2", .profile = "nas"});
  EXPECT_EQ(ep->authority, "data.flag:2");
}

TEST_F(ProfileEndpointTest, AMistypedProfileIsAnErrorNamingIt) {
  for (bool first : {false, true}) {
    auto ep = ResolveS3Endpoint(env_, {.bucket = "data", .profile = "nsa", .profile_first = first});
    ASSERT_FALSE(ep.ok());
    EXPECT_EQ(ep.status().code(), StatusCode::kNotFound);
    EXPECT_NE(ep.status().message().find("AWS profile 'nsa' not found in"), std::string::npos)
        << ep.status().message();
  }
  EXPECT_EQ(ResolveS3Endpoint(env_, {.bucket = "data"})->region, "eu-west-1");  // [default]
  env_.Set("AWS_PROFILE", "typo");
  EXPECT_FALSE(ResolveS3Endpoint(env_, {.bucket = "data"}).ok());
}

}  // namespace
}  // namespace ferry::aws
