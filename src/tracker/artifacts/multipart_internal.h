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

  // Opens the direct upload's PartWriter unless it is open: a new one while resume_token is
  // empty (Create), else the one the token names (the first part or Complete after a restart).
  Status OpenWriter(storage::Store& store) REQUIRES(mu) {
    if (writer) return Status();
    FERRY_ASSIGN_OR_RETURN(
        writer, store.NewPartWriter(
                    key, {.size = size, .part_size = sub_size, .resume_token = resume_token}));
    if (resume_token.empty()) resume_token = writer->resume_token();
    return Status();
  }

  uint64_t PartLength(int number) const {
    return number < num_parts ? part_size : size - static_cast<uint64_t>(num_parts - 1) * part_size;
  }
};

}  // namespace ferry::tracker::artifacts
