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
};

// Applies the FERRY_* transfer settings of `options.env` (above) to `options`. A malformed value
// is an error naming the variable (kInvalidArgument).
Status ApplyEnvironmentOverrides(BackendOptions& options);

// Registers the backends. If ApplyEnvironmentOverrides fails, opening an s3/http(s) URL fails
// with its error (local paths still work).
void RegisterDefaultBackends(storage::StoreRegistry& registry, BackendOptions options);

// Creates the bucket an s3:// URL names (`ferry mb`); an existing bucket owned by the caller is
// not an error. Other URLs: kInvalidArgument.
Status CreateBucket(const storage::ParsedUrl& url, const BackendOptions& options);

}  // namespace ferry::backends
