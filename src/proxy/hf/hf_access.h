#pragma once
// Who may be served a cached file of a repo without asking upstream (the gated/private rule of
// docs/semantics/hf.md):
//  - anyone, once an anonymous request for the repo succeeded upstream (a public repo; kept in
//    the DocCache so it holds after a restart and offline);
//  - otherwise only a client whose token upstream accepted for that repo within the TTL. Only
//    the SHA-256 of a token is kept, in memory (never written anywhere).
// Everyone else is sent upstream, which answers 401/403 GatedRepo to the wrong token.
//
// The blob cache is content-addressed: one copy of a file whatever repo it came through. So a
// cached blob is served for a repo only when it is known to be that repo's: it was fetched
// through it, or through a public repo (then it is public anyway). Otherwise the resolve handler
// first asks upstream for one byte of the file through the repo in question, with the client's
// access (a repo whose metadata names another, gated repo's sha256 must not get its bytes).
// Thread-safety: all methods are thread-safe.

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "base/mutex.h"
#include "proxy/doc_cache.h"

namespace ferry::proxy::hf {

class AccessTable final {
 public:
  AccessTable(DocCache& docs, std::chrono::seconds ttl) : docs_(docs), ttl_(ttl) {}

  // `authorization`: the client's Authorization header ("" when none).
  bool MayServeFromCache(std::string_view repo_key, std::string_view authorization, int64_t now_ms)
      EXCLUDES(mu_);
  // Upstream answered a request for the repo with success.
  void RecordSuccess(std::string_view repo_key, std::string_view authorization, int64_t now_ms)
      EXCLUDES(mu_);
  // True when the repo is not known to be public and was not probed within the TTL; marks it
  // probed. After a token's success the resolve handler then asks upstream once without the
  // token, so repos fetched with a token (ferry serve prewarm with HF_TOKEN) are still found to
  // be public.
  bool ShouldProbePublic(std::string_view repo_key, int64_t now_ms) EXCLUDES(mu_);

  // `blob`: a Digest's ToString(). True when the blob came through `repo_key` or through a
  // public repo.
  bool BlobKnownFor(const std::string& blob, std::string_view repo_key) EXCLUDES(mu_);
  // Upstream served (part of) the blob through `repo_key`.
  void RecordBlob(const std::string& blob, std::string_view repo_key, int64_t now_ms) EXCLUDES(mu_);
  bool IsPublic(std::string_view repo_key) EXCLUDES(mu_);

 private:
  DocCache& docs_;
  std::chrono::seconds ttl_;
  Mutex mu_;
  std::map<std::string, bool, std::less<>> public_ GUARDED_BY(mu_);
  // (sha256 of the Authorization value, repo) -> when upstream last accepted it.
  std::map<std::pair<std::string, std::string>, int64_t> accepted_ GUARDED_BY(mu_);
  std::map<std::string, int64_t, std::less<>> probed_ GUARDED_BY(mu_);
  Mutex blob_mu_;  // serializes RecordBlob's updates
  // (blob, repo) pairs known to be servable: a warm request reads no document.
  std::set<std::pair<std::string, std::string>> blob_known_ GUARDED_BY(mu_);
};

}  // namespace ferry::proxy::hf
