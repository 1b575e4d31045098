#include "base/hash.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif
#include <openssl/evp.h>

#include <algorithm>
#include <initializer_list>

#include "base/strings.h"

namespace ferry {

namespace {

// OpenSSL 3 looks a digest up by name on every call that names it with EVP_sha256() (a fetch:
// a lock and a table search), and EVP_Digest/HMAC() allocate a context each time: ~20 µs for
// a SigV4 signature's few hundred bytes, 5% of a small-object download's CPU. The digests are
// fetched once per process and each thread reuses one context.
const EVP_MD* Fetched(const char* name) {
  const EVP_MD* md = EVP_MD_fetch(nullptr, name, nullptr);  // kept for the process's life
  return md;
}
const EVP_MD* Sha256Md() {
  static const EVP_MD* md = Fetched("SHA256");
  return md;
}
const EVP_MD* Md5Md() {
  static const EVP_MD* md = Fetched("MD5");
  return md;
}

class ThreadCtx {
 public:
  ThreadCtx() : ctx_(EVP_MD_CTX_new()) {}
  ~ThreadCtx() { EVP_MD_CTX_free(ctx_); }
  ThreadCtx(const ThreadCtx&) = delete;
  ThreadCtx& operator=(const ThreadCtx&) = delete;
  EVP_MD_CTX* get() { return ctx_; }

 private:
  EVP_MD_CTX* ctx_;
};

EVP_MD_CTX* ThisThreadsCtx() {
  thread_local ThreadCtx ctx;
  return ctx.get();
}

// The digest of the concatenation of `parts` with `md` (a fetched one, or the legacy table's
// when the fetch failed), in this thread's context.
template <size_t N>
std::array<uint8_t, N> Digest(const EVP_MD* md, const EVP_MD* fallback,
                              std::initializer_list<std::string_view> parts) {
  std::array<uint8_t, N> out{};
  unsigned int len = 0;
  EVP_MD_CTX* ctx = ThisThreadsCtx();
  EVP_DigestInit_ex2(ctx, md ? md : fallback, nullptr);
  for (std::string_view p : parts) EVP_DigestUpdate(ctx, p.data(), p.size());
  EVP_DigestFinal_ex(ctx, out.data(), &len);
  return out;
}

Sha256Digest Sha256Of(std::initializer_list<std::string_view> parts) {
  return Digest<32>(Sha256Md(), EVP_sha256(), parts);
}

std::string_view View(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace

Sha256Digest Sha256(std::string_view data) { return Sha256Of({data}); }

std::string Sha256Hex(std::string_view data) { return HexEncode(Sha256(data)); }

Md5Digest Md5(std::string_view data) { return Digest<16>(Md5Md(), EVP_md5(), {data}); }

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

// HMAC (RFC 2104) over the thread's SHA-256 context: H((K ^ opad) || H((K ^ ipad) || data)),
// K being the key zero-padded to the 64-byte block (or its digest when longer).
Sha256Digest HmacSha256(std::span<const uint8_t> key, std::string_view data) {
  constexpr size_t kBlock = 64;
  std::array<uint8_t, kBlock> k{};
  if (key.size() > kBlock) {
    Sha256Digest d = Sha256Of({View(key)});
    std::copy(d.begin(), d.end(), k.begin());
  } else {
    std::copy(key.begin(), key.end(), k.begin());
  }
  std::array<uint8_t, kBlock> ipad, opad;
  for (size_t i = 0; i < kBlock; ++i) {
    ipad[i] = k[i] ^ 0x36;
    opad[i] = k[i] ^ 0x5c;
  }
  Sha256Digest inner = Sha256Of({View(ipad), data});
  return Sha256Of({View(opad), View(inner)});
}

Md5Stream::Md5Stream() : ctx_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), Md5Md() ? Md5Md() : EVP_md5(), nullptr);
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

std::optional<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  for (size_t i = 0; i < text.size() - pad; ++i) {
    const char c = text[i];
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '+' || c == '/';
    if (!ok) return std::nullopt;  // EVP_DecodeBlock would skip whitespace and accept '-'
  }
  std::string out(text.size() / 4 * 3, '\0');
  if (text.empty()) return out;
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  out.resize(static_cast<size_t>(n) - pad);  // EVP_DecodeBlock counts the padding as zeros
  return out;
}

}  // namespace ferry
