#include "aws/credential_chain.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "base/redact.h"
#include "http/testing/local_http_server.h"

namespace ferry::aws {
namespace {

using http::testing::LocalHttpServer;
using http::testing::ServerRequest;
using http::testing::ServerResponse;

class CredentialChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ferry-chain-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    env_ = std::make_shared<MapEnvironment>(
        MapEnvironment({{"HOME", dir_.string()}, {"AWS_EC2_METADATA_DISABLED", "true"}}));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Result<Credentials> Resolve() {
    return MakeDefaultCredentialsChain({.env = env_})->GetCredentials();
  }
  std::string Write(const std::string& name, const std::string& text) {
    auto p = dir_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

  std::filesystem::path dir_;
  std::shared_ptr<MapEnvironment> env_;
};

std::string Future(int seconds) {
  return FormatIso8601(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
}

TEST_F(CredentialChainTest, EnvironmentComesFirst) {
  env_->Set("AWS_ACCESS_KEY_ID", "AKIDENV");
  env_->Set("AWS_SECRET_ACCESS_KEY", "envsecret123");
  env_->Set("AWS_SESSION_TOKEN", "envtoken123");
  Write(".aws/credentials", "[default]\naws_access_key_id=AKIDFILE\naws_secret_access_key=x\n");
  auto c = Resolve();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "AKIDENV");
  EXPECT_EQ(c->session_token, "envtoken123");
  EXPECT_EQ(c->source, "environment variables");
}

TEST_F(CredentialChainTest, HalfSetEnvironmentIsAnError) {
  env_->Set("AWS_ACCESS_KEY_ID", "AKIDENV");
  auto c = Resolve();
  EXPECT_EQ(c.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(c.status().message().find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
}

TEST_F(CredentialChainTest, NamedProfileFromSharedFiles) {
  Write(".aws/credentials",
        "[default]\naws_access_key_id=AKIDDEF\naws_secret_access_key=defsecret\n"
        "[ci]\naws_access_key_id=AKIDCI\naws_secret_access_key=cisecret\n");
  env_->Set("AWS_PROFILE", "ci");
  auto c = Resolve();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "AKIDCI");
  EXPECT_NE(c->source.find("'ci'"), std::string::npos);
}

TEST_F(CredentialChainTest, MissingNamedProfileIsAnError) {
  env_->Set("AWS_PROFILE", "nope");
  auto c = Resolve();
  EXPECT_EQ(c.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(c.status().message().find("'nope' not found"), std::string::npos);
}

TEST_F(CredentialChainTest, AProfileNamedByTheUrlComesBeforeTheEnvironment) {
  env_->Set("AWS_ACCESS_KEY_ID", "AKIDENV");
  env_->Set("AWS_SECRET_ACCESS_KEY", "envsecret123");
  Write(".aws/credentials",
        "[nas]\naws_access_key_id=AKIDNAS\naws_secret_access_key=nassecret\n[bare]\nregion=x\n");
  auto resolve = [&](std::string profile, bool first) {
    return MakeDefaultCredentialsChain({.env = env_, .profile = profile, .profile_first = first})
        ->GetCredentials();
  };
  EXPECT_EQ(resolve("nas", false)->access_key_id, "AKIDENV");  // --profile nas: AWS CLI order
  EXPECT_EQ(resolve("nas", true)->access_key_id, "AKIDNAS");   // nas:s3://...
  EXPECT_EQ(resolve("bare", true)->access_key_id, "AKIDENV");  // no keys in it: environment
}

TEST_F(CredentialChainTest, WebIdentityExchangesTokenWithSts) {
  LocalHttpServer sts([](const ServerRequest& r) {
    if (r.body.find("Action=AssumeRoleWithWebIdentity") == std::string::npos ||
        r.body.find("WebIdentityToken=jwt-token-value") == std::string::npos) {
      return ServerResponse{
          400, {}, "<ErrorResponse><Error><Code>Bad</Code></Error></ErrorResponse>"};
    }
    return ServerResponse{200, {}, R"(<AssumeRoleWithWebIdentityResponse>
<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIAWEB</AccessKeyId>
<SecretAccessKey>websecret123</SecretAccessKey><SessionToken>webtoken123</SessionToken>
<Expiration>)" + Future(3600) + R"(</Expiration></Credentials>
<AssumedRoleUser><Arn>arn:aws:sts::1:assumed-role/trainer/s</Arn></AssumedRoleUser>
</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>)"};
  });
  env_->Set("AWS_WEB_IDENTITY_TOKEN_FILE", Write("token", "jwt-token-value\n"));
  env_->Set("AWS_ROLE_ARN", "arn:aws:iam::1:role/trainer");
  env_->Set("AWS_ENDPOINT_URL_STS", sts.base_url());
  auto c = Resolve();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "ASIAWEB");
  EXPECT_EQ(c->identity, "arn:aws:sts::1:assumed-role/trainer/s");
  EXPECT_TRUE(c->expiration.has_value());
  EXPECT_EQ(Redact("jwt-token-value"), "[REDACTED]");
}

TEST_F(CredentialChainTest, ContainerEndpointWithTokenFile) {
  LocalHttpServer ecs([](const ServerRequest& r) {
    auto it = r.headers.find("authorization");
    if (it == r.headers.end() || it->second != "container-auth-token") {
      return ServerResponse{401, {}, ""};
    }
    return ServerResponse{200,
                          {},
                          R"({"AccessKeyId":"ASIAECS","SecretAccessKey":"ecssecret123",
      "Token":"ecstoken123","Expiration":")" +
                              Future(3600) + R"("})"};
  });
  env_->Set("AWS_CONTAINER_CREDENTIALS_FULL_URI", ecs.base_url() + "/creds");
  env_->Set("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", Write("ecs-token", "container-auth-token"));
  auto c = Resolve();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "ASIAECS");
  EXPECT_EQ(c->session_token, "ecstoken123");
}

TEST_F(CredentialChainTest, ImdsV2UsesSessionToken) {
  LocalHttpServer imds([](const ServerRequest& r) {
    if (r.method == "PUT" && r.target == "/latest/api/token")
      return ServerResponse{200, {}, "imds-session-tok"};
    auto it = r.headers.find("x-aws-ec2-metadata-token");
    if (it == r.headers.end() || it->second != "imds-session-tok")
      return ServerResponse{401, {}, ""};
    if (r.target == "/latest/meta-data/iam/security-credentials/")
      return ServerResponse{200, {}, "gpu-node\n"};
    if (r.target == "/latest/meta-data/iam/security-credentials/gpu-node") {
      return ServerResponse{200,
                            {},
                            R"({"Code":"Success","AccessKeyId":"ASIAIMDS",
        "SecretAccessKey":"imdssecret123","Token":"imdstoken123","Expiration":")" +
                                Future(3600) + R"("})"};
    }
    return ServerResponse{404, {}, ""};
  });
  env_->Set("AWS_EC2_METADATA_DISABLED", "false");
  env_->Set("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.base_url());
  auto c = Resolve();
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->access_key_id, "ASIAIMDS");
  EXPECT_EQ(c->identity, "instance role gpu-node");
}

TEST_F(CredentialChainTest, NothingConfiguredNamesWhatWasTried) {
  auto c = Resolve();
  EXPECT_EQ(c.status().code(), StatusCode::kUnauthenticated);
  EXPECT_NE(c.status().message().find("no AWS credentials found"), std::string::npos);
}

TEST_F(CredentialChainTest, RefreshesBeforeExpiry) {
  int calls = 0;
  LocalHttpServer ecs([&](const ServerRequest&) {
    ++calls;
    // First answer expires within the refresh margin, so the next call must fetch again.
    std::string exp = Future(calls == 1 ? 60 : 3600);
    return ServerResponse{200,
                          {},
                          R"({"AccessKeyId":"ASIA)" + std::to_string(calls) +
                              R"(","SecretAccessKey":"s3cretvalue","Token":"t0kenvalue",
      "Expiration":")" + exp + R"("})"};
  });
  env_->Set("AWS_CONTAINER_CREDENTIALS_FULL_URI", ecs.base_url() + "/creds");
  auto chain = MakeDefaultCredentialsChain({.env = env_});
  EXPECT_EQ(chain->GetCredentials()->access_key_id, "ASIA1");
  EXPECT_EQ(chain->GetCredentials()->access_key_id, "ASIA2");
  EXPECT_EQ(chain->GetCredentials()->access_key_id, "ASIA2");  // cached now
  EXPECT_EQ(calls, 2);
}

TEST_F(CredentialChainTest, AnonymousSignsNothing) {
  auto c = MakeDefaultCredentialsChain({.env = env_, .anonymous = true})->GetCredentials();
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->anonymous);
}

}  // namespace
}  // namespace ferry::aws
