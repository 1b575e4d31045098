// HandleResolve: one file of a repo, HEAD or GET (ranges too), from the verified cache.
//
// 1. What the file is (commit, ETag, size, content address) comes from the DocCache when it is
//    known and fresh: a commit id's files forever, a branch or tag's commit for metadata_ttl,
//    and only for clients the AccessTable lets through (public repo, or a token upstream
//    accepted). Otherwise one HEAD upstream, following relative redirects only (a renamed repo)
//    and reading the 302 to the CDN without following it, as huggingface_hub does.
// 2. The bytes come from the BlobCache by content address; on a miss an HttpFetcher GETs the
//    file at its commit, following every redirect (the signed CDN URL is used once, never
//    stored or shown).
// Upstream down: a known file is served from what was cached (stale branch resolution is
// better than no answer); an unknown one is 502/504, never 404 EntryNotFound.

#include "base/hash.h"
#include "base/log.h"
#include "base/strings.h"
#include "proxy/hf/hf_meta.h"
#include "proxy/hf/hf_paths.h"
#include "proxy/hf/hf_service.h"
#include "proxy/service/blob_response.h"
#include "proxy/upstream/http_fetcher.h"

namespace ferry::proxy::hf {

namespace {

// How long a request waits for another one's metadata HEAD of the same file before asking
// upstream itself (a HEAD normally takes well under a second).
constexpr std::chrono::milliseconds kMetadataWait{30'000};
constexpr std::string_view kRefs = "hf-ref";    // "{repo key}@{rev}" -> commit
constexpr std::string_view kFiles = "hf-file";  // "{repo key}@{commit}:{path}" -> FileMeta

std::string FileKey(const ResolvePath& rp, std::string_view commit) {
  return rp.repo.Key() + "@" + std::string(commit) + ":" + rp.path;
}

std::string ResolveUrl(const HfService& hf, const ResolvePath& rp, std::string_view rev) {
  return hf.upstream + "/" + rp.repo.ResolvePrefix() + rp.repo.id + "/resolve/" +
         PercentEncode(rev) + "/" + PercentEncode(rp.path, /*keep_slash=*/true);
}

http::Headers UpstreamHeaders(std::string_view authorization) {
  http::Headers h;
  if (!authorization.empty()) h.push_back({"Authorization", std::string(authorization)});
  return h;
}

struct Known {
  std::optional<FileMeta> meta;
  bool fresh = false;
};

Known Lookup(HfService& hf, const ResolvePath& rp, int64_t now) {
  Known k;
  std::string commit;
  if (IsCommitId(rp.revision)) {
    commit = rp.revision;
    k.fresh = true;
  } else if (auto ref = hf.px.docs->Get(kRefs, rp.repo.Key() + "@" + rp.revision)) {
    commit = ref->fields["commit"];
    k.fresh = hf.px.options.offline || ref->Age(now) < hf.px.options.metadata_ttl;
  }
  if (commit.empty()) return k;
  if (auto doc = hf.px.docs->Get(kFiles, FileKey(rp, commit))) k.meta = MetaFromFields(doc->fields);
  return k;
}

void Remember(HfService& hf, const ResolvePath& rp, const FileMeta& meta, int64_t now) {
  Status s = hf.px.docs->Put(kFiles, FileKey(rp, meta.commit),
                             Doc{.body = "", .fields = MetaToFields(meta), .fetched_ms = now});
  if (s.ok() && !IsCommitId(rp.revision)) {
    s = hf.px.docs->Put(kRefs, rp.repo.Key() + "@" + rp.revision,
                        Doc{.body = "", .fields = {{"commit", meta.commit}}, .fetched_ms = now});
  }
  if (!s.ok()) Log(LogLevel::kWarn, "hf: cannot remember {}: {}", rp.path, s.message());
}

// The repo's file through upstream (hf_access.h): records in the AccessTable that upstream
// served the blob through this repo as soon as its first bytes arrive, and lets the cache serve
// its bytes for this repo only when they are known to be this repo's or come from a fill
// through this same repo.
class RepoFetcher final : public Fetcher {
 public:
  RepoFetcher(std::shared_ptr<HttpFetcher> http, HfService& hf, std::string blob, std::string repo,
              bool known)
      : http_(std::move(http)),
        hf_(hf),
        blob_(std::move(blob)),
        repo_(std::move(repo)),
        known_(known) {}
  Status Fetch(const storage::ByteRange& range, const storage::ByteSink& sink) override {
    bool recorded = false;
    return http_->Fetch(range, [&](std::string_view chunk) {
      if (!recorded) {
        hf_.access.RecordBlob(blob_, repo_, hf_.px.now_ms());
        recorded = true;
      }
      return sink(chunk);
    });
  }
  std::string Describe() const override { return http_->Describe(); }
  bool MayServe(const Fetcher* filling) const override {
    if (known_) return true;
    auto* same = dynamic_cast<const RepoFetcher*>(filling);
    return same && same->repo_ == repo_ && same->blob_ == blob_;
  }
  void Proven() { known_ = true; }

 private:
  std::shared_ptr<HttpFetcher> http_;
  HfService& hf_;
  std::string blob_, repo_;
  bool known_;  // the blob came through this repo or a public one
};

server::Response Serve(HfService& hf, const ResolvePath& rp, const FileMeta& meta,
                       std::string_view authorization, const server::Request& req) {
  auto http = std::make_shared<HttpFetcher>(hf.px.upstream, ResolveUrl(hf, rp, meta.commit),
                                            UpstreamHeaders(authorization));
  const std::string blob = meta.digest.ToString();
  const std::string repo = rp.repo.Key();
  auto fetcher =
      std::make_shared<RepoFetcher>(http, hf, blob, repo, hf.access.BlobKnownFor(blob, repo));
  if (meta.size > 0 && !hf.px.cache->WouldServe(meta.digest, *fetcher)) {
    // The bytes came (or are coming) through another repo that is not public: before serving
    // them for this one, upstream must serve one byte of this repo's file to this client.
    if (hf.px.options.offline) {
      return HubError(504, "",
                      "offline: " + repo + "/" + rp.path +
                          " is cached only through another repo, which cannot be "
                          "checked offline");
    }
    Status probe =
        fetcher->Fetch({.offset = 0, .length = 1}, [](std::string_view) { return Status(); });
    if (!probe.ok()) {
      const int code = probe.detail().http_status;
      return HubError(code >= 400 && code < 500 ? code : UpstreamStatusFor(probe),
                      probe.detail().remote_code, probe.message());
    }
    fetcher->Proven();
  }
  return ServeBlob(*hf.px.cache, meta.digest, meta.size, std::move(fetcher), req,
                   ClientHeaders(meta));
}

// Upstream's error answer as the client should see it: 4xx with the Hub's error code kept;
// anything else 502.
server::Response PassError(const http::Response& resp, const std::string& url) {
  Status s = UpstreamError("HEAD", url, resp);
  if (resp.status >= 400 && resp.status < 500 && resp.status != 429) {
    return HubError(static_cast<int>(resp.status), s.detail().remote_code, s.message());
  }
  return HubError(UpstreamStatusFor(s), "", s.message());
}

}  // namespace

server::Response HandleResolve(const server::Request& req, HfService& hf) {
  auto rp = ParseResolvePath(req.Param("rest").value_or(""));
  if (!rp) return server::ErrorResponse(404, "not a Hugging Face resolve URL: " + req.path);
  std::string auth = UpstreamAuthorization(req, hf);
  int64_t now = hf.px.now_ms();
  Known known = Lookup(hf, *rp, now);
  bool allowed = hf.access.MayServeFromCache(rp->repo.Key(), auth, now);
  if (known.meta && allowed && (known.fresh || hf.px.options.offline)) {
    return Serve(hf, *rp, *known.meta, auth, req);
  }
  if (hf.px.options.offline) {
    std::string why = !known.meta ? "is not cached" : "is in a repo whose token cannot be checked";
    return HubError(504, "",
                    "offline: " + rp->repo.Key() + "/" + rp->path + "@" + rp->revision + " " + why);
  }
  // One HEAD upstream for many concurrent cold requests: followers wait for the leader, then
  // find its answer in the DocCache (a failed leader leaves them to ask themselves).
  std::string flight_key = rp->repo.Key() + "@" + rp->revision + ":" + rp->path;
  if (!auth.empty()) flight_key += "|" + Sha256Hex(auth);
  // Looked up again by the leader too: a flight that ended between the first lookup and Join()
  // left its answer in the DocCache.
  auto ticket = hf.metadata_flights.Join(flight_key, kMetadataWait);
  known = Lookup(hf, *rp, now);
  allowed = hf.access.MayServeFromCache(rp->repo.Key(), auth, now);
  if (known.meta && allowed && known.fresh) return Serve(hf, *rp, *known.meta, auth, req);
  std::string url = ResolveUrl(hf, *rp, rp->revision);
  http::Headers headers = UpstreamHeaders(auth);
  headers.push_back({"Accept-Encoding", "identity"});
  auto resp = hf.px.upstream->Send(
      {.method = "HEAD", .url = url, .headers = headers, .redirects = Redirects::kRelative});
  bool upstream_failed = !resp.ok() || resp->status >= 500 || resp->status == 429;
  if (upstream_failed && known.meta && allowed) {
    Log(LogLevel::kWarn, "hf: upstream unavailable ({}); serving {} as cached",
        resp.ok() ? "HTTP " + std::to_string(resp->status) : resp.status().message(), rp->path);
    return Serve(hf, *rp, *known.meta, auth, req);
  }
  if (!resp.ok()) return HubError(UpstreamStatusFor(resp.status()), "", resp.status().message());
  if (resp->status >= 400) return PassError(*resp, url);
  auto meta = MetaFromResolveAnswer(*resp, url);
  if (!meta.ok()) return HubError(502, "", meta.status().message());
  hf.access.RecordSuccess(rp->repo.Key(), auth, now);
  if (!auth.empty() && hf.access.ShouldProbePublic(rp->repo.Key(), now)) {
    auto anon = hf.px.upstream->Send({.method = "HEAD",
                                      .url = url,
                                      .headers = {{"Accept-Encoding", "identity"}},
                                      .redirects = Redirects::kRelative});
    if (anon.ok() && anon->status < 400) hf.access.RecordSuccess(rp->repo.Key(), "", now);
  }
  Remember(hf, *rp, *meta, now);
  return Serve(hf, *rp, *meta, auth, req);
}

}  // namespace ferry::proxy::hf
