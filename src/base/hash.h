#pragma once
// Digests used by SigV4 and integrity checks (OpenSSL lives behind this file alone).

#include <array>
#include <cstdint>
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

std::string Base64Encode(std::span<const uint8_t> bytes);

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

inline std::span<const uint8_t> AsBytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

}  // namespace ferry
