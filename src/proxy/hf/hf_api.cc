// The Hub's JSON API, passed through with a TTL cache: repo info (`api/{kind}/{repo}[/revision/
// {rev}]`), paged tree listings and POST paths-info. Answers for a commit id are kept for good,
// others for metadata_ttl; anonymous answers only (a token's view of a gated repo is its own and
// is always asked upstream). Stored answers survive restarts and serve --offline, and serve when
// upstream is down. The tree's `Link: <...>; rel="next"` is rewritten to the proxy's own URL so
// the next page comes through the proxy too; other Link relations (Xet's xet-auth) are dropped,
// and so are Xet fields of the JSON (hf_xet.h).

#include "base/hash.h"
#include "base/log.h"
#include "base/strings.h"
#include "proxy/hf/hf_paths.h"
#include "proxy/hf/hf_service.h"
#include "proxy/hf/hf_xet.h"
#include "proxy/service/blob_response.h"

namespace ferry::proxy::hf {

namespace {

constexpr std::string_view kApi = "hf-api";

// The `rel="next"` link of a Link header value, with the upstream base replaced by the proxy's;
// "" when there is none or it points elsewhere.
std::string RewriteNextLink(std::string_view link, const std::string& upstream,
                            const std::string& proxy_base) {
  size_t pos = 0;
  while (pos < link.size()) {
    size_t open = link.find('<', pos);
    if (open == std::string_view::npos) return "";
    size_t close = link.find('>', open);
    if (close == std::string_view::npos) return "";
    size_t next = link.find('<', close);
    std::string_view params = link.substr(
        close + 1, next == std::string_view::npos ? std::string_view::npos : next - close - 1);
    std::string_view url = link.substr(open + 1, close - open - 1);
    if (params.find("rel=\"next\"") != std::string_view::npos ||
        params.find("rel=next") != std::string_view::npos) {
      if (url.starts_with(upstream + "/api/")) {
        return "<" + proxy_base + "/hf" + std::string(url.substr(upstream.size())) +
               ">; rel=\"next\"";
      }
      if (url.starts_with("/api/"))
        return "<" + proxy_base + "/hf" + std::string(url) + ">; rel=\"next\"";
      return "";
    }
    pos = close + 1;
  }
  return "";
}

server::Response FromDoc(const Doc& doc, const HfService& hf, const server::Request& req) {
  server::Response r;
  r.status = 200;
  // Stored answers hold what upstream sent; the Xet fields go on the way out, so answers an
  // older version stored are served clean too.
  r.body = WithoutXetFields(doc.body);
  auto ct = doc.fields.find("content-type");
  r.headers.Set("Content-Type",
                ct != doc.fields.end() ? ct->second : std::string("application/json"));
  if (auto link = doc.fields.find("link"); link != doc.fields.end()) {
    std::string next = RewriteNextLink(link->second, hf.upstream, ExternalBase(req));
    if (!next.empty()) r.headers.Set("Link", next);
  }
  return r;
}

server::Response PassThrough(HfService& hf, const server::Request& req, const ApiPath& ap,
                             bool post) {
  std::string auth = UpstreamAuthorization(req, hf);
  std::string url = hf.upstream + "/api/" + ap.repo.ApiKind() + "/" + ap.repo.id;
  if (!ap.tail.empty()) url += "/" + PercentEncode(ap.tail, /*keep_slash=*/true);
  if (!req.raw_query.empty()) url += "?" + req.raw_query;
  std::string content_type(req.headers.Get("Content-Type").value_or(""));
  std::string key =
      std::string(post ? "POST " : "GET ") + ap.repo.Key() + "/" + ap.tail + "?" + req.raw_query;
  if (post) key += " " + content_type + " " + Sha256Hex(req.body);
  // Answers to a client's own token are its own; the server's token answers alike for all.
  bool cacheable = !req.headers.Has("Authorization");
  if (!auth.empty()) key += " (server token)";
  bool immutable = IsCommitId(ap.revision);
  int64_t now = hf.px.now_ms();
  std::optional<Doc> doc;
  if (cacheable) doc = hf.px.docs->Get(kApi, key);
  if (doc && (immutable || hf.px.options.offline || doc->Age(now) < hf.px.options.metadata_ttl)) {
    return FromDoc(*doc, hf, req);
  }
  if (hf.px.options.offline) {
    return HubError(504, "", "offline: " + ap.repo.Key() + " " + ap.tail + " is not cached");
  }
  UpstreamRequest up{.method = post ? "POST" : "GET", .url = url};
  if (!auth.empty()) up.headers.push_back({"Authorization", auth});
  up.headers.push_back({"Accept", "application/json"});
  if (post) {
    up.body = req.body;
    up.send_body = true;
    if (!content_type.empty()) up.headers.push_back({"Content-Type", content_type});
  }
  auto resp = hf.px.upstream->Send(up);
  bool failed = !resp.ok() || resp->status >= 500 || resp->status == 429;
  if (failed && doc) {
    Log(LogLevel::kWarn, "hf: upstream unavailable; answering {} from the cache", ap.tail);
    return FromDoc(*doc, hf, req);
  }
  if (!resp.ok()) return HubError(UpstreamStatusFor(resp.status()), "", resp.status().message());
  if (!resp->ok()) {
    Status s = UpstreamError(up.method, url, *resp);
    int code = resp->status >= 500 || resp->status == 429 || resp->status < 400
                   ? UpstreamStatusFor(s)
                   : static_cast<int>(resp->status);
    return HubError(code, s.detail().remote_code, s.message());
  }
  Doc fresh{.body = std::move(resp->body), .fields = {}, .fetched_ms = now};
  fresh.fields["content-type"] =
      std::string(resp->Header("content-type").value_or("application/json"));
  if (auto link = resp->Header("link")) fresh.fields["link"] = std::string(*link);
  // No AccessTable record here: the Hub answers a gated repo's API (its card, its file list)
  // to anyone; only a file download proves access (hf_resolve.cc).
  if (cacheable) {
    Status s = hf.px.docs->Put(kApi, key, fresh);
    if (!s.ok()) Log(LogLevel::kWarn, "hf: cannot cache {}: {}", ap.tail, s.message());
  }
  return FromDoc(fresh, hf, req);
}

}  // namespace

server::Response HandleApiGet(const server::Request& req, HfService& hf) {
  auto ap = ParseApiPath(req.Param("rest").value_or(""));
  if (!ap || ap->tail.starts_with("paths-info")) {
    return server::ErrorResponse(404, "not a Hub API URL this proxy serves: " + req.path);
  }
  if (IsXetTokenTail(ap->tail)) return XetTokenRefusal(ap->repo.Key());
  return PassThrough(hf, req, *ap, /*post=*/false);
}

server::Response HandleApiPost(const server::Request& req, HfService& hf) {
  auto ap = ParseApiPath(req.Param("rest").value_or(""));
  if (ap && IsXetTokenTail(ap->tail)) return XetTokenRefusal(ap->repo.Key());
  if (!ap || !ap->tail.starts_with("paths-info/")) {
    return server::ErrorResponse(404, "not a Hub API URL this proxy serves: " + req.path);
  }
  return PassThrough(hf, req, *ap, /*post=*/true);
}

}  // namespace ferry::proxy::hf
