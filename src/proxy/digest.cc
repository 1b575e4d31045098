#include "proxy/digest.h"

#include <cctype>
#include <string>

namespace ferry::proxy {

std::string_view DigestAlgorithmName(DigestAlgorithm algorithm) {
  switch (algorithm) {
    case DigestAlgorithm::kSha256:
      return "sha256";
    case DigestAlgorithm::kGitBlobSha1:
      return "git-sha1";
  }
  return "unknown";
}

Result<Digest> Digest::Parse(DigestAlgorithm algorithm, std::string_view hex) {
  size_t want = algorithm == DigestAlgorithm::kSha256 ? 64 : 40;
  std::string name(DigestAlgorithmName(algorithm));
  if (hex.size() != want) {
    return InvalidArgument("digest " + name + ":" + std::string(hex.substr(0, 80)) + ": expected " +
                           std::to_string(want) + " hex digits, got " + std::to_string(hex.size()));
  }
  Digest d{algorithm, std::string(hex)};
  for (char& c : d.hex) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) {
      return InvalidArgument("digest " + name + ":" + std::string(hex) + ": not hexadecimal");
    }
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return d;
}

Result<Digest> Digest::FromString(std::string_view text) {
  size_t colon = text.find(':');
  if (colon != std::string_view::npos) {
    std::string_view algo = text.substr(0, colon);
    if (algo == "sha256") return Parse(DigestAlgorithm::kSha256, text.substr(colon + 1));
    if (algo == "git-sha1") return Parse(DigestAlgorithm::kGitBlobSha1, text.substr(colon + 1));
  }
  return InvalidArgument("digest '" + std::string(text.substr(0, 100)) +
                         "': expected sha256:<hex> or git-sha1:<hex>");
}

std::string Digest::ToString() const {
  return std::string(DigestAlgorithmName(algorithm)) + ":" + hex;
}

BlobHasher::BlobHasher(DigestAlgorithm algorithm, uint64_t size)
    : algorithm_(algorithm),
      stream_(algorithm == DigestAlgorithm::kSha256 ? HashStream::Kind::kSha256
                                                    : HashStream::Kind::kSha1) {
  if (algorithm == DigestAlgorithm::kGitBlobSha1) {
    std::string header = "blob " + std::to_string(size);
    header.push_back('\0');
    stream_.Update(header);
  }
}

void BlobHasher::Update(std::string_view data) {
  stream_.Update(data);
  bytes_ += data.size();
}

Digest BlobHasher::Finish() { return Digest{algorithm_, stream_.FinalHex()}; }

}  // namespace ferry::proxy
