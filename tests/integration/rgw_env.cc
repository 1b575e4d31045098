#include "rgw_env.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "aws/credentials.h"
#include "base/environment.h"
#include "http/http_client.h"

namespace ferry::testing {

const RgwEnv& Rgw() {
  static RgwEnv env = [] {
    const char* path = std::getenv("FERRY_RGW_ENV");
    std::ifstream in(path ? path : "");
    if (!in) {
      std::fprintf(stderr,
                   "FERRY_RGW_ENV does not name an RGW env file; run via ctest "
                   "(the rgw fixture starts the server)\n");
      std::abort();
    }
    std::map<std::string, std::string> kv;
    std::string line;
    while (std::getline(in, line)) {
      auto eq = line.find('=');
      if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return RgwEnv{kv["FERRY_TEST_S3_ENDPOINT"], kv["FERRY_TEST_S3_ACCESS_KEY"],
                  kv["FERRY_TEST_S3_SECRET_KEY"], kv["FERRY_TEST_S3_REGION"],
                  kv["FERRY_TEST_S3_BUCKET"]};
  }();
  return env;
}

storage::S3StoreOptions RgwStoreOptions(const std::string& bucket, bool virtual_host,
                                        const std::string& secret_override) {
  const RgwEnv& r = Rgw();
  std::string b = bucket.empty() ? r.bucket : bucket;
  MapEnvironment env(
      {{"AWS_CONFIG_FILE", "/nonexistent"}, {"AWS_SHARED_CREDENTIALS_FILE", "/nonexistent"}});
  // Virtual-hosted addressing needs a name: RGW's rgw_dns_name is "localhost", and libcurl
  // resolves "BUCKET.localhost" to loopback by itself.
  std::string endpoint = r.endpoint;
  if (virtual_host) {
    if (auto pos = endpoint.find("127.0.0.1"); pos != std::string::npos) {
      endpoint.replace(pos, 9, "localhost");
    }
  }
  auto ep = aws::ResolveS3Endpoint(env, {.bucket = b,
                                         .endpoint = endpoint,
                                         .region = r.region,
                                         .addressing = virtual_host ? "virtual" : "path"});
  if (!ep.ok()) {
    std::fprintf(stderr, "bad RGW endpoint: %s\n", ep.status().ToString().c_str());
    std::abort();
  }
  aws::Credentials creds{
      .access_key_id = r.access_key,
      .secret_access_key = secret_override.empty() ? r.secret_key : secret_override,
      .source = "test"};
  return storage::S3StoreOptions{
      .bucket = b,
      .endpoint = *ep,
      .credentials = std::make_shared<aws::StaticCredentialsProvider>(creds),
      .http = std::make_shared<http::Client>(),
      .retry = RetryPolicy{.max_attempts = 3, .base_delay = std::chrono::milliseconds(20)},
      .part_size = 5ull << 20};
}

}  // namespace ferry::testing
