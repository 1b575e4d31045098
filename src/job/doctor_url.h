#pragma once
// `ferry doctor s3://bucket/prefix`: which endpoint, region, addressing and credentials a URL
// uses, request latency, and whether (and how fast) the prefix can be listed, written, read
// back and deleted, using a probe object under PREFIX/_ferry/.

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "job/doctor_read.h"
#include "storage/registry.h"

namespace ferry::job {

struct UrlDiagnosis {
  std::string url, endpoint, region, addressing, credentials;
  double list_latency_ms = 0;  // median of 5 ListObjectsV2 calls
  bool listable = false, writable = false;
  double write_mib_s = 0, read_mib_s = 0;  // 16 MiB probe (0 when not measured)
  std::vector<std::string> errors;
  // Reading the objects already under the prefix, never writing (doctor_read.h): read-only
  // credentials get a speed too. Absent when not measured or when listing/reading failed
  // (then `errors` says why).
  std::optional<ReadProbe> read;
};

// Endpoint, region, addressing and credentials come from the store (Store::Describe()).
Result<UrlDiagnosis> DiagnoseUrl(const std::string& url, storage::StoreRegistry& registry,
                                 bool measure);

}  // namespace ferry::job
