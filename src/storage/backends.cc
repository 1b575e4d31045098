#include "storage/backends.h"

#include "aws/credential_chain.h"
#include "aws/endpoint.h"
#include "http/http_client.h"
#include "storage/local/local_store.h"
#include "storage/s3/s3_store.h"
#include "storage/web/http_store.h"

namespace ferry::storage {

void RegisterDefaultBackends(StoreRegistry& registry, BackendOptions options) {
  auto opts = std::make_shared<BackendOptions>(std::move(options));
  http::ClientOptions http_opts{.trace = opts->trace_http};
  // Like the AWS CLI: AWS_CA_BUNDLE names the PEM bundle for TLS verification.
  http_opts.ca_bundle = opts->env->GetOr("AWS_CA_BUNDLE", "");
  auto s3_http = std::make_shared<http::Client>(http_opts);
  http_opts.follow_redirects = true;
  http_opts.ca_bundle.clear();
  auto web_http = std::make_shared<http::Client>(http_opts);

  registry.Register(Scheme::kLocal, [](const ParsedUrl&) -> Result<std::shared_ptr<Store>> {
    return MakeLocalStore("/");
  });

  registry.Register(
      Scheme::kS3, [opts, s3_http](const ParsedUrl& url) -> Result<std::shared_ptr<Store>> {
        auto get = [&](const char* name) {
          auto it = url.params.find(name);
          return it == url.params.end() ? std::string() : it->second;
        };
        aws::S3EndpointInput in{.bucket = url.bucket,
                                .endpoint = get("endpoint"),
                                .region = get("region"),
                                .addressing = get("addressing"),
                                .profile = get("profile")};
        auto ep = aws::ResolveS3Endpoint(*opts->env, in);
        if (!ep.ok()) return ep.status();
        auto creds = aws::MakeDefaultCredentialsChain(
            {.env = opts->env, .profile = in.profile, .anonymous = get("anonymous") == "true"});
        return MakeS3Store({.bucket = url.bucket,
                            .endpoint = *ep,
                            .credentials = creds,
                            .http = s3_http,
                            .retry = opts->retry,
                            .part_size = opts->part_size,
                            .upload_concurrency = opts->upload_concurrency});
      });

  auto web = [opts, web_http](const ParsedUrl& url) -> Result<std::shared_ptr<Store>> {
    std::string scheme = url.scheme == Scheme::kHttp ? "http" : "https";
    return MakeHttpStore(
        {.origin = scheme + "://" + url.bucket, .http = web_http, .retry = opts->retry});
  };
  registry.Register(Scheme::kHttp, web);
  registry.Register(Scheme::kHttps, web);
}

}  // namespace ferry::storage
