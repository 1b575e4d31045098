#pragma once
// Internal to tracker/artifacts: one multipart upload's state in memory (multipart.h).

#include <memory>
#include <set>
#include <string>

#include "base/mutex.h"
#include "storage/store.h"
#include "tracker/artifacts/multipart.h"

namespace ferry::tracker::artifacts {

struct MultipartUploads::Upload {
  std::string id, path, key;  // key: the artifact's key in the store
  int num_parts = 0;
  bool direct = false;
  uint64_t size = 0, part_size = 0;
  uint64_t sub_size = kSubPartSize;  // direct: the PartWriter's part size
  std::string resume_token;
  Mutex mu;
  std::unique_ptr<storage::PartWriter> writer GUARDED_BY(mu);  // direct; opened on demand
  std::set<int> writing GUARDED_BY(mu);                        // parts being received now
  bool finishing GUARDED_BY(mu) = false;                       // Complete or Abort running

  uint64_t PartLength(int number) const {
    return number < num_parts ? part_size : size - static_cast<uint64_t>(num_parts - 1) * part_size;
  }
};

}  // namespace ferry::tracker::artifacts
