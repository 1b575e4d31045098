#pragma once
// Who may be served a cached file of a repo without asking upstream (the gated/private rule of
// docs/semantics/hf.md):
//  - anyone, once an anonymous request for the repo succeeded upstream (a public repo; kept in
//    the DocCache so it holds after a restart and offline);
//  - otherwise only a client whose token upstream accepted for that repo within the TTL. Only
//    the SHA-256 of a token is kept, in memory (never written anywhere).
// Everyone else is sent upstream, which answers 401/403 GatedRepo to the wrong token.
// Thread-safety: all methods are thread-safe.

#include <chrono>
#include <cstdint>
#include <map>
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

 private:
  bool IsPublic(std::string_view repo_key) EXCLUDES(mu_);

  DocCache& docs_;
  std::chrono::seconds ttl_;
  Mutex mu_;
  std::map<std::string, bool, std::less<>> public_ GUARDED_BY(mu_);
  // (sha256 of the Authorization value, repo) -> when upstream last accepted it.
  std::map<std::pair<std::string, std::string>, int64_t> accepted_ GUARDED_BY(mu_);
  std::map<std::string, int64_t, std::less<>> probed_ GUARDED_BY(mu_);
};

}  // namespace ferry::proxy::hf
