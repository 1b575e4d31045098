#include "proxy/hf/hf_access.h"

#include "base/hash.h"

namespace ferry::proxy::hf {

namespace {
constexpr std::string_view kNamespace = "hf-repo";
constexpr std::string_view kBlobRepos = "hf-blob-repos";  // blob -> {repo key: "1"}
}  // namespace

bool AccessTable::BlobKnownFor(const std::string& blob, std::string_view repo_key) {
  std::pair<std::string, std::string> pair(blob, repo_key);
  {
    MutexLock lock(mu_);
    if (blob_known_.contains(pair)) return true;
  }
  auto doc = docs_.Get(kBlobRepos, blob);
  if (!doc) return false;
  bool known = doc->fields.contains(pair.second);
  for (auto it = doc->fields.begin(); !known && it != doc->fields.end(); ++it) {
    known = IsPublic(it->first);
  }
  if (known) {
    MutexLock lock(mu_);
    blob_known_.insert(std::move(pair));
  }
  return known;
}

void AccessTable::RecordBlob(const std::string& blob, std::string_view repo_key, int64_t now_ms) {
  std::pair<std::string, std::string> pair(blob, repo_key);
  {
    MutexLock lock(mu_);
    if (blob_known_.contains(pair)) return;  // recorded before: no document to touch
  }
  MutexLock lock(blob_mu_);  // read-modify-write of one document
  auto doc = docs_.Get(kBlobRepos, blob);
  Doc d = doc ? *doc : Doc{.body = "", .fields = {}, .fetched_ms = now_ms};
  if (!d.fields.contains(std::string(repo_key))) {
    // emplace, not `[key] = "1"`: GCC 12 at -O2 takes that assignment for an overlapping
    // memcpy (-Werror=restrict, GCC bug 105329) and the release build stops.
    d.fields.emplace(std::string(repo_key), std::string("1"));
    d.fetched_ms = now_ms;
    if (!docs_.Put(kBlobRepos, blob, d).ok()) return;  // recorded next time
  }
  MutexLock known(mu_);
  blob_known_.insert(std::move(pair));
}

bool AccessTable::IsPublic(std::string_view repo_key) {
  {
    MutexLock lock(mu_);
    if (auto it = public_.find(repo_key); it != public_.end()) return it->second;
  }
  // Looked up in the store once per repo: a gated repo's requests must not each read it.
  auto doc = docs_.Get(kNamespace, repo_key);
  bool pub = doc && doc->fields.contains("public") && doc->fields.at("public") == "1";
  MutexLock lock(mu_);
  public_.emplace(std::string(repo_key), pub);  // keeps a true another thread recorded
  return public_.find(repo_key)->second;
}

bool AccessTable::MayServeFromCache(std::string_view repo_key, std::string_view authorization,
                                    int64_t now_ms) {
  if (IsPublic(repo_key)) return true;
  if (authorization.empty()) return false;
  MutexLock lock(mu_);
  auto it = accepted_.find({Sha256Hex(authorization), std::string(repo_key)});
  return it != accepted_.end() &&
         now_ms - it->second < std::chrono::duration_cast<std::chrono::milliseconds>(ttl_).count();
}

void AccessTable::RecordSuccess(std::string_view repo_key, std::string_view authorization,
                                int64_t now_ms) {
  if (authorization.empty()) {
    {
      MutexLock lock(mu_);
      bool& known = public_[std::string(repo_key)];
      if (known) return;  // already recorded
      known = true;
    }
    docs_
        .Put(kNamespace, repo_key,
             Doc{.body = "", .fields = {{"public", "1"}}, .fetched_ms = now_ms})
        .IgnoreError();
    return;
  }
  MutexLock lock(mu_);
  accepted_[{Sha256Hex(authorization), std::string(repo_key)}] = now_ms;
}

bool AccessTable::ShouldProbePublic(std::string_view repo_key, int64_t now_ms) {
  if (IsPublic(repo_key)) return false;
  MutexLock lock(mu_);
  int64_t ttl_ms = std::chrono::duration_cast<std::chrono::milliseconds>(ttl_).count();
  auto it = probed_.find(repo_key);
  if (it != probed_.end() && now_ms - it->second < ttl_ms) return false;
  probed_[std::string(repo_key)] = now_ms;
  return true;
}

}  // namespace ferry::proxy::hf
