#include "proxy/hf/hf_access.h"

#include "base/hash.h"

namespace ferry::proxy::hf {

namespace {
constexpr std::string_view kNamespace = "hf-repo";
constexpr std::string_view kBlobRepos = "hf-blob-repos";  // blob -> {repo key: "1"}
}  // namespace

bool AccessTable::BlobKnownFor(const std::string& blob, std::string_view repo_key) {
  auto doc = docs_.Get(kBlobRepos, blob);
  if (!doc) return false;
  if (doc->fields.contains(std::string(repo_key))) return true;
  for (const auto& [repo, unused] : doc->fields) {
    if (IsPublic(repo)) return true;
  }
  return false;
}

void AccessTable::RecordBlob(const std::string& blob, std::string_view repo_key, int64_t now_ms) {
  MutexLock lock(blob_mu_);  // read-modify-write of one document
  auto doc = docs_.Get(kBlobRepos, blob);
  Doc d = doc ? *doc : Doc{.body = "", .fields = {}, .fetched_ms = now_ms};
  if (d.fields.contains(std::string(repo_key))) return;
  d.fields[std::string(repo_key)] = "1";
  d.fetched_ms = now_ms;
  docs_.Put(kBlobRepos, blob, d).IgnoreError();
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
