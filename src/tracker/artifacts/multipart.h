#pragma once
// Multipart uploads of one artifact (MLflow's mpu/create, complete, abort), with the part
// uploads going to this server: parts arrive in parallel and in any order, a part sent again
// replaces the earlier copy, Complete() publishes the whole artifact atomically, Abort()
// discards everything, and Describe() reports the parts already stored so a client that lost
// its connection (or a restarted server) resumes with only the missing ones.
//
// Two ways to hold the parts (chosen by Create):
//  - direct: the client declared the total size and a part size that is a multiple of the
//    store's sub-part size (kSubPartSize; kLocalSubPartSize for local files), and the store has
//    part writes (local: pwrite into one temporary file; S3: a multipart upload). Each part
//    streams into storage::PartWriter sub-parts of that size (one sub-part buffered per
//    connection); Complete() is the PartWriter's commit, so the data is written once.
//  - staged (any store, any part sizes, stock MLflow clients that send only num_parts): each part
//    is an object of its own below the upload's directory, published atomically when it is
//    complete; Complete() concatenates them into a Writer and deletes them.
// State lives in the store below ROOT/.ferry-mpu/UPLOAD_ID/: upload.json (the plan and the
// PartWriter's resume token) and one part-N.json per stored part (size, CRC32C = the part's ETag),
// written after the part's data and removed before a part is sent again. So a part is reported
// only when its data is complete, and a server restart loses nothing.
// Thread-safety: all methods may be called concurrently; two uploads of the same part at once
// are refused (kAlreadyExists, HTTP 409) rather than interleaved.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "server/http_types.h"
#include "storage/store.h"
#include "tracker/artifacts/artifact_repo.h"

namespace ferry::tracker::artifacts {

// Direct parts are written to the PartWriter in pieces of this size: an S3 part must be at
// least 5 MiB, and a single buffer of this size per connection bounds memory.
inline constexpr uint64_t kSubPartSize = 8ull << 20;
// The piece size for stores of local files (pwrite at any offset): 1 MiB keeps each piece in
// the CPU's cache between the socket read, the CRC32C and the pwrite, and the buffer small.
inline constexpr uint64_t kLocalSubPartSize = 1ull << 20;
inline constexpr int kMaxParts = 10000;  // as S3
// The largest artifact an upload may declare (S3's largest object): a client's `size` is
// refused above it before anything is reserved.
inline constexpr uint64_t kMaxUploadSize = 5ull << 40;
// An upload that received nothing for this long is abandoned: it is aborted (its reserved space
// and parts freed) by the next Create, at most one sweep per kExpirySweepInterval.
inline constexpr std::chrono::hours kAbandonedUploadAge{24};
inline constexpr std::chrono::minutes kExpirySweepInterval{10};

struct MultipartPlan {
  std::string path;
  int num_parts = 0;
  std::optional<uint64_t> size;       // Ferry extension: the artifact's total size
  std::optional<uint64_t> part_size;  // Ferry extension: every part's size but the last's
};

struct PartInfo {
  int number = 0;
  uint64_t size = 0;
  std::string etag;  // CRC32C hex of the part ("" in a Complete() list: not checked)
};

struct UploadInfo {
  std::string upload_id;
  std::string path;
  int num_parts = 0;
  bool direct = false;
  std::vector<PartInfo> parts;  // stored so far, by number
};

class MultipartUploads final {
 public:
  MultipartUploads(std::shared_ptr<storage::Store> store, std::string root_key);
  ~MultipartUploads();

  Result<UploadInfo> Create(const MultipartPlan& plan);
  // Streams part `number` (1..num_parts) into the upload. InvalidArgument for a body whose
  // length is wrong for the plan (direct) or fails `checks`; NotFound for an unknown upload.
  Result<PartInfo> WritePart(std::string_view upload_id, int number, server::BodyReader& body,
                             const UploadChecks& checks);
  Result<UploadInfo> Describe(std::string_view upload_id);
  // Publishes the artifact `path` from parts 1..num_parts. `parts` (may be empty) are checked
  // against what is stored. FailedPrecondition when a part is missing or still being written.
  Result<storage::ObjectInfo> Complete(std::string_view path, std::string_view upload_id,
                                       const std::vector<PartInfo>& parts);
  Status Abort(std::string_view path, std::string_view upload_id);
  // Aborts every upload whose state had no change for `max_idle` before `now` and that has no
  // part being received; returns how many.
  Result<int> ExpireIdle(std::chrono::seconds max_idle, SystemTime now);

 private:
  struct Upload;
  Result<std::shared_ptr<Upload>> Open(std::string_view upload_id);
  // ExpireIdle(kAbandonedUploadAge) at most once per kExpirySweepInterval; failures are logged.
  void MaybeExpireIdle() EXCLUDES(mu_);
  // Complete's and Abort's start: the upload for `path`, marked finishing (no part may start);
  // kFailedPrecondition while parts are being written or another finish runs.
  Result<std::shared_ptr<Upload>> BeginFinish(std::string_view path, std::string_view upload_id);
  Result<std::vector<PartInfo>> StoredParts(const Upload& u);
  std::string Dir(std::string_view upload_id) const;
  Status Forget(const std::string& upload_id, bool delete_state);

  std::shared_ptr<storage::Store> store_;
  std::string root_key_;
  Mutex mu_;
  std::map<std::string, std::shared_ptr<Upload>, std::less<>> open_ GUARDED_BY(mu_);
  std::optional<SystemTime> last_sweep_ GUARDED_BY(mu_);
};

}  // namespace ferry::tracker::artifacts
