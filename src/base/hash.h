#pragma once
// Digests used by SigV4 and integrity checks (OpenSSL lives behind this file alone).

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace ferry {

using Sha256Digest = std::array<uint8_t, 32>;
using Md5Digest = std::array<uint8_t, 16>;

Sha256Digest Sha256(std::string_view data);
std::string Sha256Hex(std::string_view data);
Sha256Digest HmacSha256(std::span<const uint8_t> key, std::string_view data);
Md5Digest Md5(std::string_view data);
// Whether this CPU computes SHA-256 in hardware (x86 SHA extensions, Arm SHA2): then SHA-256 is
// 2-3x faster than MD5, which has no such instructions.
bool Sha256IsHardwareAccelerated();

std::string Base64Encode(std::span<const uint8_t> bytes);
// The bytes of standard (RFC 4648 section 4) base64 text with its '=' padding; nullopt for
// anything else (a length that is not a multiple of 4, a character outside the alphabet).
std::optional<std::string> Base64Decode(std::string_view text);

// Incremental MD5, for data that does not fit in memory at once.
class Md5Stream final {
 public:
  Md5Stream();
  ~Md5Stream();
  Md5Stream(const Md5Stream&) = delete;
  Md5Stream& operator=(const Md5Stream&) = delete;
  void Update(std::string_view data);
  Md5Digest Final();

 private:
  void* ctx_;  // EVP_MD_CTX, kept opaque so OpenSSL stays behind hash.cc
};

// Incremental SHA-1 or SHA-256 (content addresses: Hugging Face LFS sha256, git blob ids, PyPI
// sha256), for data that does not fit in memory. Not thread-safe; one stream per hash.
class HashStream final {
 public:
  enum class Kind { kSha1, kSha256 };
  explicit HashStream(Kind kind);
  ~HashStream();
  HashStream(const HashStream&) = delete;
  HashStream& operator=(const HashStream&) = delete;
  void Update(std::string_view data);
  // Lower-case hex of the digest; the stream cannot be updated afterwards.
  std::string FinalHex();

 private:
  void* ctx_;  // EVP_MD_CTX
};

inline std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace ferry
