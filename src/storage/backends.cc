#include "storage/backends.h"

#include "aws/credential_chain.h"
#include "aws/endpoint.h"
#include "http/http_client.h"
#include "storage/local/local_store.h"
#include "storage/web/http_store.h"

namespace ferry::storage {

namespace {
http::ClientOptions S3HttpOptions(const BackendOptions& options) {
  // Like the AWS CLI: AWS_CA_BUNDLE names the PEM bundle for TLS verification.
  return http::ClientOptions{.ca_bundle = options.env->GetOr("AWS_CA_BUNDLE", ""),
                             .trace = options.trace_http};
}
}  // namespace

Result<S3StoreOptions> ResolveS3Options(const ParsedUrl& url, const BackendOptions& options,
                                        std::shared_ptr<http::Client> http) {
  auto get = [&](const char* name) {
    auto it = url.params.find(name);
    return it == url.params.end() ? std::string() : it->second;
  };
  aws::S3EndpointInput in{.bucket = url.bucket,
                          .endpoint = get("endpoint"),
                          .region = get("region"),
                          .addressing = get("addressing"),
                          .profile = get("profile")};
  FERRY_ASSIGN_OR_RETURN(aws::S3Endpoint ep, aws::ResolveS3Endpoint(*options.env, in));
  if (!http) http = std::make_shared<http::Client>(S3HttpOptions(options));
  return S3StoreOptions{
      .bucket = url.bucket,
      .endpoint = std::move(ep),
      .credentials = aws::MakeDefaultCredentialsChain(
          {.env = options.env, .profile = in.profile, .anonymous = get("anonymous") == "true"}),
      .http = std::move(http),
      .retry = options.retry,
      .part_size = options.part_size,
      .upload_concurrency = options.upload_concurrency};
}

void RegisterDefaultBackends(StoreRegistry& registry, BackendOptions options) {
  auto opts = std::make_shared<BackendOptions>(std::move(options));
  auto s3_http = std::make_shared<http::Client>(S3HttpOptions(*opts));
  auto web_http = std::make_shared<http::Client>(
      http::ClientOptions{.follow_redirects = true, .trace = opts->trace_http});

  registry.Register(Scheme::kLocal, [](const ParsedUrl&) -> Result<std::shared_ptr<Store>> {
    return MakeLocalStore("/");
  });
  registry.Register(
      Scheme::kS3, [opts, s3_http](const ParsedUrl& url) -> Result<std::shared_ptr<Store>> {
        FERRY_ASSIGN_OR_RETURN(S3StoreOptions s3, ResolveS3Options(url, *opts, s3_http));
        return MakeS3Store(std::move(s3));
      });
  auto web = [opts, web_http](const ParsedUrl& url) -> Result<std::shared_ptr<Store>> {
    std::string scheme = url.scheme == Scheme::kHttp ? "http" : "https";
    return MakeHttpStore({.origin = scheme + "://" + url.bucket,
                          .query = url.query,
                          .http = web_http,
                          .retry = opts->retry});
  };
  registry.Register(Scheme::kHttp, web);
  registry.Register(Scheme::kHttps, web);
}

}  // namespace ferry::storage
