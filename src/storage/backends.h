#pragma once
// Registers Ferry's backends (local, s3, http, https) with their shared dependencies: one HTTP
// client (connection reuse across stores) and one credential chain per profile.

#include <chrono>
#include <cstdint>
#include <memory>

#include "base/environment.h"
#include "base/retry.h"
#include "storage/registry.h"
#include "storage/s3/s3_store.h"

namespace ferry::storage {

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
};

// Applies the FERRY_* transfer settings of `options.env` (above) to `options`. A malformed value
// is an error naming the variable (kInvalidArgument).
Status ApplyEnvironmentOverrides(BackendOptions& options);

// Registers the backends. If ApplyEnvironmentOverrides fails, opening an s3/http(s) URL fails
// with its error (local paths still work).
void RegisterDefaultBackends(StoreRegistry& registry, BackendOptions options);

// The S3 settings an s3:// URL resolves to: endpoint, region and addressing (URL parameters,
// environment, profile) and the credential chain. `http` may be null (a client is made). The
// FERRY_* overrides of the environment apply.
Result<S3StoreOptions> ResolveS3Options(const ParsedUrl& url, const BackendOptions& options,
                                        std::shared_ptr<http::Client> http = nullptr);

}  // namespace ferry::storage
