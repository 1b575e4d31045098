#pragma once
// Access to the RGW that the ctest fixture started (tests/tools/rgw.sh writes its env file and
// FERRY_RGW_ENV names it). Tests fail, never skip, when it is missing.

#include <map>
#include <memory>
#include <string>

#include "storage/s3/s3_store.h"

namespace ferry::testing {

struct RgwEnv {
  std::string endpoint, access_key, secret_key, region, bucket;
};

// Reads the env file; aborts the test binary with a clear message when absent.
const RgwEnv& Rgw();

// S3 store options for the test bucket (path style unless `virtual_host`).
storage::S3StoreOptions RgwStoreOptions(const std::string& bucket = "", bool virtual_host = false,
                                        const std::string& secret_override = "");

}  // namespace ferry::testing
