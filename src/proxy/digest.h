#pragma once
// Content addresses of cached blobs and the streaming hashers that check them.
//
// A blob is named by the digest its upstream publishes: Hugging Face LFS files and PyPI
// distributions by SHA-256 of the content, small (non-LFS) Hub files by their git blob id, the
// SHA-1 of "blob <size>\0" followed by the content. The cache only publishes bytes whose digest
// matches the name, so a key in the cache is a proof of its content.

#include <compare>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "base/hash.h"
#include "base/status.h"

namespace ferry::proxy {

enum class DigestAlgorithm : uint8_t {
  kSha256,      // SHA-256 of the content (LFS oid, PyPI #sha256=)
  kGitBlobSha1  // SHA-1 of "blob <size>\0" + content (git blob id, Hub ETag of small files)
};

// "sha256" or "git-sha1": the names used in cache keys and messages.
std::string_view DigestAlgorithmName(DigestAlgorithm algorithm);

struct Digest {
  DigestAlgorithm algorithm = DigestAlgorithm::kSha256;
  std::string hex;  // lower-case, 64 (sha256) or 40 (git-sha1) digits

  // Checks the length and the digits; upper-case hex is accepted and lowered.
  // kInvalidArgument otherwise.
  static Result<Digest> Parse(DigestAlgorithm algorithm, std::string_view hex);
  // The inverse of ToString(): "sha256:<hex>" or "git-sha1:<hex>".
  static Result<Digest> FromString(std::string_view text);
  std::string ToString() const;

  friend auto operator<=>(const Digest&, const Digest&) = default;
  friend bool operator==(const Digest&, const Digest&) = default;
};

// Computes a Digest over a stream of `size` bytes (size is needed up front: the git blob
// header). Not thread-safe.
class BlobHasher final {
 public:
  BlobHasher(DigestAlgorithm algorithm, uint64_t size);
  void Update(std::string_view data);
  uint64_t bytes() const { return bytes_; }
  // The digest of everything passed to Update(); call once.
  Digest Finish();

 private:
  DigestAlgorithm algorithm_;
  HashStream stream_;
  uint64_t bytes_ = 0;
};

}  // namespace ferry::proxy
