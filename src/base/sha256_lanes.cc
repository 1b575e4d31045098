#include "base/sha256_lanes.h"

#include "base/sha256_ni.h"

#ifdef FERRY_HAVE_IPSEC_MB
#define NO_COMPAT_IMB_API_053  // the library's old names (SHA1, ...) clash with OpenSSL's
#include <intel-ipsec-mb.h>

#include <cstring>
#include <memory>
#endif

namespace ferry {

namespace {

// The messages the lanes did not take (longer than their limit, or no lanes here): four at a
// time in interleaved SHA-NI streams where the CPU has them, else OpenSSL one by one.
void HashTheRest(std::span<const std::string_view> messages, const std::vector<bool>& done,
                 std::vector<Sha256Digest>& out) {
  static const bool sha_ni = HaveSha256Ni();
  std::vector<size_t> rest;
  std::vector<std::string_view> rest_messages;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (done[i]) continue;
    if (sha_ni) {
      rest.push_back(i);
      rest_messages.push_back(messages[i]);
    } else {
      out[i] = Sha256(messages[i]);
    }
  }
  if (rest.empty()) return;
  std::vector<Sha256Digest> digests(rest.size());
  Sha256NiEach(rest_messages, digests);
  for (size_t k = 0; k < rest.size(); ++k) out[rest[k]] = digests[k];
}

}  // namespace

#ifdef FERRY_HAVE_IPSEC_MB
namespace {

struct MgrDeleter {
  void operator()(IMB_MGR* m) const { free_mb_mgr(m); }
};

// This thread's manager, initialised for the best instruction set the CPU has; nullptr when the
// library finds none worth using.
IMB_MGR* ThreadManager() {
  thread_local std::unique_ptr<IMB_MGR, MgrDeleter> mgr = [] {
    std::unique_ptr<IMB_MGR, MgrDeleter> m(alloc_mb_mgr(0));
    if (!m) return m;
    IMB_ARCH arch = IMB_ARCH_NONE;
    init_mb_mgr_auto(m.get(), &arch);
    if (imb_get_errno(m.get()) != 0 || (arch != IMB_ARCH_AVX512 && arch != IMB_ARCH_AVX2)) {
      m.reset();
    }
    return m;
  }();
  return mgr.get();
}

std::string_view ArchName(IMB_MGR* m) {
  if (!m) return "";
  return m->used_arch == IMB_ARCH_AVX512 ? "avx512" : "avx2";
}

}  // namespace

std::vector<Sha256Digest> Sha256Each(std::span<const std::string_view> messages) {
  std::vector<Sha256Digest> out(messages.size());
  std::vector<bool> done(messages.size(), false);
  if (IMB_MGR* m = ThreadManager()) {
    auto collect = [&](IMB_JOB* job) {
      for (; job != nullptr; job = IMB_GET_COMPLETED_JOB(m)) {
        auto i = static_cast<size_t>(reinterpret_cast<uintptr_t>(job->user_data));
        done[i] = job->status == IMB_STATUS_COMPLETED;
      }
    };
    for (size_t i = 0; i < messages.size(); ++i) {
      if (messages[i].size() > kSha256LaneMaxMessage) continue;
      IMB_JOB* job = IMB_GET_NEXT_JOB(m);
      std::memset(job, 0, sizeof *job);
      job->cipher_mode = IMB_CIPHER_NULL;
      job->cipher_direction = IMB_DIR_ENCRYPT;
      job->chain_order = IMB_ORDER_HASH_CIPHER;
      job->hash_alg = IMB_AUTH_SHA_256;
      job->src = reinterpret_cast<const uint8_t*>(messages[i].data());
      job->msg_len_to_hash_in_bytes = messages[i].size();
      job->auth_tag_output = out[i].data();
      job->auth_tag_output_len_in_bytes = out[i].size();
      job->user_data = reinterpret_cast<void*>(static_cast<uintptr_t>(i));
      collect(IMB_SUBMIT_JOB(m));
    }
    for (IMB_JOB* job = IMB_FLUSH_JOB(m); job != nullptr; job = IMB_FLUSH_JOB(m)) collect(job);
  }
  HashTheRest(messages, done, out);
  return out;
}

std::string_view Sha256LanesKind() { return ArchName(ThreadManager()); }

#else  // !FERRY_HAVE_IPSEC_MB

std::vector<Sha256Digest> Sha256Each(std::span<const std::string_view> messages) {
  std::vector<Sha256Digest> out(messages.size());
  HashTheRest(messages, std::vector<bool>(messages.size(), false), out);
  return out;
}

std::string_view Sha256LanesKind() { return ""; }

#endif

}  // namespace ferry
