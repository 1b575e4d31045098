#pragma once
// The artifact repository behind MLflow's artifact proxy (`mlflow server --serve-artifacts`):
// artifacts are objects below a root key of any Ferry store (a NAS directory, S3/Ceph), written
// by streaming a request body straight into a storage::Writer. An upload becomes visible only
// when it is complete and verified (Writer::Commit is the atomic publish): a client that goes
// away mid-body, a short body or a checksum mismatch leaves nothing, and an earlier version of
// the artifact stays as it was. Docs: docs/semantics/mlflow-artifacts.md.
// Thread-safety: all methods may be called concurrently.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "server/http_types.h"
#include "storage/store.h"

namespace ferry::tracker::artifacts {

// What a client declared about a body, checked against what arrived.
struct UploadChecks {
  std::optional<uint64_t> length;  // Content-Length
  std::string md5_base64;          // Content-MD5
  std::string sha256_hex;          // x-ferry-sha256 (lower-case hex)
  std::string sha256_base64;       // Digest: sha-256=<base64> (RFC 3230)
};

// The checks from request headers; InvalidArgument for a malformed checksum header.
Result<UploadChecks> ChecksFromHeaders(const server::Request& request);

// One entry of a listing, as MLflow's ListArtifacts answers it: the name below the listed
// directory, and the size of files.
struct ArtifactEntry {
  std::string path;
  bool is_dir = false;
  uint64_t file_size = 0;
};

// The checks of one body applied to its bytes as they go by: Update() each chunk in order,
// then Finish() verifies length and checksums (InvalidArgument on a mismatch) and gives the
// body's CRC32C as hex (a multipart part's ETag) when asked for at construction.
class BodyVerifier {
 public:
  BodyVerifier(const UploadChecks& checks, bool want_crc32c);
  ~BodyVerifier();
  void Update(std::string_view chunk);
  uint64_t bytes() const { return bytes_; }
  Status Finish(std::string* crc32c_hex);

 private:
  struct Hashes;
  const UploadChecks& checks_;
  std::unique_ptr<Hashes> h_;
  uint64_t bytes_ = 0;
};

// Copies `body` into `writer` through a bounded buffer, computing what `checks` asks for, then
// verifies length and checksums. Does not commit. DataLoss/InvalidArgument on a mismatch,
// the body's error when it fails. `bytes` receives the count read; `crc32c_hex`, when given,
// the body's CRC32C (a multipart part's ETag: ISA-L's CRC32C runs at memory speed, where MD5,
// S3's part ETag, held 8 parallel parts to ~0.9 GB/s per core).
Status CopyVerified(server::BodyReader& body, const UploadChecks& checks,
                    const std::function<Status(std::string_view)>& append, uint64_t* bytes,
                    std::string* crc32c_hex = nullptr);

// Stores with directories of their own (local disks, NFS; Capabilities::local_files): removes
// the empty directories left in `dir_key` after its objects were deleted, then its parents
// while they are empty, up to (not including) `stop_key`. Elsewhere: nothing.
void PruneEmptyDirectories(storage::Store& store, std::string_view dir_key,
                           std::string_view stop_key);

class ArtifactRepo final {
 public:
  // `root_key`: where artifacts live in `store` ("" = the store's root).
  ArtifactRepo(std::shared_ptr<storage::Store> store, std::string root_key);

  // Streams `body` into the artifact `path` and publishes it once complete and verified.
  Result<storage::ObjectInfo> Put(std::string_view path, server::BodyReader& body,
                                  const UploadChecks& checks);
  // The files and directories directly below `dir` ("" = the root), sorted by name.
  Result<std::vector<ArtifactEntry>> List(std::string_view dir);
  // Deletes the artifact `path` and, when it is a directory, everything below it. A missing
  // path is not an error (MLflow's delete_artifacts).
  Status Delete(std::string_view path);
  // Deletes every artifact below `prefix` (e.g. one run's "<experiment>/<run>/artifacts"): the
  // REST layer's "deleting a run deletes its artifacts". An empty prefix is refused.
  Status DeleteTree(std::string_view prefix);

  storage::Store& store() { return *store_; }
  const std::shared_ptr<storage::Store>& shared_store() const { return store_; }
  const std::string& root_key() const { return root_key_; }

 private:
  std::shared_ptr<storage::Store> store_;
  std::string root_key_;
};

}  // namespace ferry::tracker::artifacts
