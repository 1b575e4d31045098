#pragma once
// Registers Ferry's backends (local, s3, http, https) with their shared dependencies: one HTTP
// client (connection reuse across stores) and one credential chain per profile.

#include <memory>

#include "base/environment.h"
#include "base/retry.h"
#include "storage/registry.h"
#include "storage/s3/s3_store.h"

namespace ferry::storage {

struct BackendOptions {
  std::shared_ptr<const Environment> env;  // required
  bool trace_http = false;                 // redacted HTTP header trace at trace log level
  RetryPolicy retry;
  uint64_t part_size = 8ull << 20;
  int upload_concurrency = 4;
};

void RegisterDefaultBackends(StoreRegistry& registry, BackendOptions options);

// The S3 settings an s3:// URL resolves to: endpoint, region and addressing (URL parameters,
// environment, profile) and the credential chain. `http` may be null (a client is made).
Result<S3StoreOptions> ResolveS3Options(const ParsedUrl& url, const BackendOptions& options,
                                        std::shared_ptr<http::Client> http = nullptr);

}  // namespace ferry::storage
