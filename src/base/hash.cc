#include "base/hash.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "base/strings.h"

namespace ferry {

namespace {
template <size_t N>
std::array<uint8_t, N> Digest(const EVP_MD* md, std::string_view data) {
  std::array<uint8_t, N> out{};
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out.data(), &len, md, nullptr);
  return out;
}
}  // namespace

Sha256Digest Sha256(std::string_view data) { return Digest<32>(EVP_sha256(), data); }

std::string Sha256Hex(std::string_view data) { return HexEncode(Sha256(data)); }

Md5Digest Md5(std::string_view data) { return Digest<16>(EVP_md5(), data); }

bool Sha256IsHardwareAccelerated() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return false;
  return (ebx & (1u << 29)) != 0;  // CPUID.(EAX=7,ECX=0):EBX.SHA
#elif defined(__aarch64__)
  return (::getauxval(AT_HWCAP) & HWCAP_SHA2) != 0;
#else
  return false;
#endif
}

Sha256Digest HmacSha256(std::span<const uint8_t> key, std::string_view data) {
  Sha256Digest out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &len);
  return out;
}

Md5Stream::Md5Stream() : ctx_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_md5(), nullptr);
}
Md5Stream::~Md5Stream() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }
void Md5Stream::Update(std::string_view data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size());
}
Md5Digest Md5Stream::Final() {
  Md5Digest out{};
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), out.data(), &len);
  return out;
}

HashStream::HashStream(Kind kind) : ctx_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), kind == Kind::kSha1 ? EVP_sha1() : EVP_sha256(),
                    nullptr);
}
HashStream::~HashStream() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }
void HashStream::Update(std::string_view data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size());
}
std::string HashStream::FinalHex() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), out, &len);
  return HexEncode(std::span<const uint8_t>(out, len));
}

std::string Base64Encode(std::span<const uint8_t> bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), bytes.data(),
                          static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

}  // namespace ferry
