#pragma once
// The composition root: the one module that knows the concrete backends (local, s3, http,
// https) and registers them with their shared dependencies: one HTTP client (connection reuse
// across stores) and one credential chain per profile. Only the binaries' wiring links it
// (apps via cli, the Python module); everything else sees stores through storage/store.h and
// storage/registry.h. This header names no backend type and no AWS type (the layering check in
// cmake/layering.cmake keeps it so).

#include <chrono>
#include <cstdint>
#include <memory>

#include "base/environment.h"
#include "base/retry.h"
#include "storage/registry.h"
#include "storage/s3/s3_store.h"
#include "storage/url.h"

namespace ferry::backends {

struct BackendOptions {
  std::shared_ptr<const Environment> env;  // required
  bool trace_http = false;                 // redacted HTTP header trace at trace log level
  RetryPolicy retry;                       // retry.throttle_budget: FERRY_THROTTLE_BUDGET (seconds)
                                           // retry.cancel also aborts transfers in flight
  // The minimum-progress rule of object transfers (http::ClientOptions): under
  // low_speed_limit bytes/s averaged over low_speed_time is a stall, retried from the first
  // undelivered byte. FERRY_LOW_SPEED_LIMIT (bytes/s, "1K" style) and FERRY_LOW_SPEED_TIME
  // (seconds) override them.
  uint64_t low_speed_limit = 1024;
  std::chrono::seconds low_speed_time{30};
  uint64_t part_size = 8ull << 20;
  int upload_concurrency = 4;
  // FERRY_DIRECT_IO=auto|off: big local files written in parallel parts go past the page cache
  // on ext4/xfs (storage::LocalStoreOptions::direct_io).
  bool direct_io = true;
  // FERRY_S3_BODY_CHECKSUM=auto|sha256|md5 (storage::S3StoreOptions::body_check).
  storage::S3StoreOptions::BodyCheck body_check = storage::S3StoreOptions::BodyCheck::kAuto;
  // The global flags --profile, --endpoint-url, --region and --no-sign-request: the S3 settings
  // of s3:// URLs written without a "PROFILE:" prefix ("" = not given; then AWS_PROFILE,
  // AWS_ENDPOINT_URL(_S3), AWS_REGION and the profile decide, as in the AWS CLI). A
  // "PROFILE:s3://..." URL ignores them: its settings come from that profile
  // (docs/configuration.md).
  struct S3Flags {
    std::string profile;
    std::string endpoint_url;
    std::string region;
    bool no_sign_request = false;
  } s3;
};

// Applies the FERRY_* transfer settings of `options.env` (above) to `options`. A malformed value
// is an error naming the variable (kInvalidArgument).
Status ApplyEnvironmentOverrides(BackendOptions& options);

// Checks the global S3 flags (options.s3) before any work: --endpoint-url is http(s)://host[:port]
// and a --profile exists in the shared config or credentials file. The error names the flag.
Status CheckS3Flags(const BackendOptions& options);

// Registers the backends. If ApplyEnvironmentOverrides fails, opening an s3/http(s) URL fails
// with its error (local paths still work, unless FERRY_DIRECT_IO is the malformed one).
void RegisterDefaultBackends(storage::StoreRegistry& registry, BackendOptions options);

// Creates the bucket an s3:// URL names (`ferry mb`); an existing bucket owned by the caller is
// not an error. Other URLs: kInvalidArgument.
Status CreateBucket(const storage::ParsedUrl& url, const BackendOptions& options);

}  // namespace ferry::backends
