#pragma once
// Registers Ferry's backends (local, s3, http, https) with their shared dependencies: one HTTP
// client (connection reuse across stores) and one credential chain per profile.

#include <memory>

#include "base/environment.h"
#include "base/retry.h"
#include "storage/registry.h"

namespace ferry::storage {

struct BackendOptions {
  std::shared_ptr<const Environment> env;  // required
  bool trace_http = false;                 // redacted HTTP header trace at trace log level
  RetryPolicy retry;
  uint64_t part_size = 8ull << 20;
  int upload_concurrency = 4;
};

void RegisterDefaultBackends(StoreRegistry& registry, BackendOptions options);

}  // namespace ferry::storage
