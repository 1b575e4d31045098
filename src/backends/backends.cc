#include "backends/backends.h"

#include "aws/credential_chain.h"
#include "aws/endpoint.h"
#include "aws/shared_config.h"
#include "base/strings.h"
#include "http/http_client.h"
#include "storage/local/local_store.h"
#include "storage/s3/s3_store.h"
#include "storage/web/http_store.h"

namespace ferry::backends {

using storage::ParsedUrl;
using storage::Scheme;
using storage::Store;

namespace {

http::ClientOptions S3HttpOptions(const BackendOptions& options) {
  // Like the AWS CLI: AWS_CA_BUNDLE names the PEM bundle for TLS verification.
  return http::ClientOptions{.low_speed_time = options.low_speed_time,
                             .low_speed_limit = options.low_speed_limit,
                             .ca_bundle = options.env->GetOr("AWS_CA_BUNDLE", ""),
                             .trace = options.trace_http,
                             .cancel = options.retry.cancel};
}

http::ClientOptions WebHttpOptions(const BackendOptions& options) {
  return http::ClientOptions{.low_speed_time = options.low_speed_time,
                             .low_speed_limit = options.low_speed_limit,
                             .follow_redirects = true,
                             .trace = options.trace_http,
                             .cancel = options.retry.cancel};
}

// A whole number of seconds in [min, max] from variable `name`; `out` is kept when unset.
template <typename Duration>
Status ReadSeconds(const Environment& env, const char* name, uint64_t min, uint64_t max,
                   Duration& out) {
  auto v = env.Get(name);
  if (!v) return Status();
  auto n = ParseUint64(*v);
  if (!n || *n < min || *n > max) {
    return InvalidArgument(std::string(name) + "='" + *v + "': expected a whole number of seconds" +
                           " from " + std::to_string(min) + " to " + std::to_string(max));
  }
  out = std::chrono::duration_cast<Duration>(std::chrono::seconds(*n));
  return Status();
}

// FERRY_DIRECT_IO=auto|off: LocalStoreOptions::direct_io.
Status ReadDirectIo(const Environment& env, bool& out) {
  auto v = env.Get("FERRY_DIRECT_IO");
  if (!v) return Status();
  if (*v != "auto" && *v != "off") {
    return InvalidArgument("FERRY_DIRECT_IO='" + *v + "': expected auto or off");
  }
  out = *v == "auto";
  return Status();
}

// The S3 settings an s3:// URL resolves to: endpoint, region and addressing (the URL's profile
// prefix, else the global flags; environment; profile) and the credential chain. `http` may be null
// (a client is made). The FERRY_* overrides of the environment apply.
Result<storage::S3StoreOptions> ResolveS3Options(const ParsedUrl& url, const BackendOptions& given,
                                                 std::shared_ptr<http::Client> http = nullptr) {
  BackendOptions options = given;
  FERRY_RETURN_IF_ERROR(ApplyEnvironmentOverrides(options));
  const bool prefixed = !url.profile.empty();
  aws::S3EndpointInput in{.bucket = url.bucket,
                          .endpoint = prefixed ? "" : options.s3.endpoint_url,
                          .region = prefixed ? "" : options.s3.region,
                          .profile = prefixed ? url.profile : options.s3.profile,
                          .profile_first = prefixed};
  FERRY_ASSIGN_OR_RETURN(aws::S3Endpoint ep, aws::ResolveS3Endpoint(*options.env, in));
  if (!http) http = std::make_shared<http::Client>(S3HttpOptions(options));
  return storage::S3StoreOptions{.bucket = url.bucket,
                                 .url_profile = url.profile,
                                 .endpoint = std::move(ep),
                                 .credentials = aws::MakeDefaultCredentialsChain(
                                     {.env = options.env,
                                      .profile = in.profile,
                                      .profile_first = prefixed,
                                      .anonymous = !prefixed && options.s3.no_sign_request}),
                                 .http = std::move(http),
                                 .retry = options.retry,
                                 .part_size = options.part_size,
                                 .upload_concurrency = options.upload_concurrency,
                                 .body_check = options.body_check};
}

}  // namespace

Status ApplyEnvironmentOverrides(BackendOptions& options) {
  const Environment& env = *options.env;
  FERRY_RETURN_IF_ERROR(ReadDirectIo(env, options.direct_io));
  if (auto v = env.Get("FERRY_LOW_SPEED_LIMIT")) {
    auto n = ParseByteSize(*v);
    if (!n) {
      return InvalidArgument("FERRY_LOW_SPEED_LIMIT='" + *v +
                             "': expected bytes per second, e.g. 1024 or 1K (0 turns it off)");
    }
    options.low_speed_limit = *n;
  }
  FERRY_RETURN_IF_ERROR(ReadSeconds(env, "FERRY_LOW_SPEED_TIME", 1, 3600, options.low_speed_time));
  FERRY_RETURN_IF_ERROR(
      ReadSeconds(env, "FERRY_THROTTLE_BUDGET", 0, 86400, options.retry.throttle_budget));
  if (auto v = env.Get("FERRY_S3_BODY_CHECKSUM")) {
    using B = storage::S3StoreOptions::BodyCheck;
    if (*v == "auto") {
      options.body_check = B::kAuto;
    } else if (*v == "sha256") {
      options.body_check = B::kSha256;
    } else if (*v == "md5") {
      options.body_check = B::kMd5;
    } else if (*v == "chunked") {
      options.body_check = B::kChunked;
    } else {
      return InvalidArgument("FERRY_S3_BODY_CHECKSUM='" + *v +
                             "': expected auto, chunked, sha256 or md5");
    }
  }
  return Status();
}

Status CheckS3Flags(const BackendOptions& options) {
  if (!options.s3.endpoint_url.empty()) {
    FERRY_RETURN_IF_ERROR(
        aws::ParseEndpointUrl(options.s3.endpoint_url).status().WithContext("--endpoint-url"));
  }
  if (!options.s3.profile.empty()) {
    FERRY_RETURN_IF_ERROR(aws::LoadSharedConfig(*options.env, options.s3.profile)
                              .CheckFound()
                              .WithContext("--profile"));
  }
  return Status();
}

void RegisterDefaultBackends(storage::StoreRegistry& registry, BackendOptions options) {
  Status env_status = ApplyEnvironmentOverrides(options);
  auto opts = std::make_shared<BackendOptions>(std::move(options));
  auto s3_http = std::make_shared<http::Client>(S3HttpOptions(*opts));
  auto web_http = std::make_shared<http::Client>(WebHttpOptions(*opts));

  bool direct_io = opts->direct_io;
  Status local_status = ReadDirectIo(*opts->env, direct_io);  // the one setting of local paths
  registry.Register(Scheme::kLocal,
                    [direct_io, local_status](const ParsedUrl&) -> Result<std::shared_ptr<Store>> {
                      FERRY_RETURN_IF_ERROR(local_status);
                      return storage::MakeLocalStore("/", {.direct_io = direct_io});
                    });
  registry.Register(
      Scheme::kS3,
      [opts, s3_http, env_status](const ParsedUrl& url) -> Result<std::shared_ptr<Store>> {
        FERRY_RETURN_IF_ERROR(env_status);
        FERRY_ASSIGN_OR_RETURN(storage::S3StoreOptions s3, ResolveS3Options(url, *opts, s3_http));
        return storage::MakeS3Store(std::move(s3));
      });
  auto web = [opts, web_http, env_status](const ParsedUrl& url) -> Result<std::shared_ptr<Store>> {
    FERRY_RETURN_IF_ERROR(env_status);
    std::string scheme = url.scheme == Scheme::kHttp ? "http" : "https";
    return storage::MakeHttpStore({.origin = scheme + "://" + url.bucket,
                                   .query = url.query,
                                   .http = web_http,
                                   .retry = opts->retry});
  };
  registry.Register(Scheme::kHttp, web);
  registry.Register(Scheme::kHttps, web);
}

Status CreateBucket(const ParsedUrl& url, const BackendOptions& options) {
  if (url.scheme != Scheme::kS3) return InvalidArgument("only s3:// URLs name buckets");
  FERRY_ASSIGN_OR_RETURN(auto s3, ResolveS3Options(url, options));
  return storage::CreateS3Bucket(s3);
}

}  // namespace ferry::backends
