// GET|HEAD /pypi/files/<project>/{sha256/<hex>|nohash}/<filename>[.metadata]:
//  1. ParseFilePath (404 for any other shape);
//  2. the project's page (stored, else fetched) and FindUpstreamFile in it; a stored page that
//     does not list the file is fetched again once (upstream may have added it since), not more
//     often than kMinRefreshInterval; still not listed: 404;
//  3. sha256 files (and .metadata with a core-metadata sha256): ServeBlob from the verified
//     cache. The size comes from the cache when the blob is there (so a warm or offline request
//     asks upstream nothing), else PEP 700's size on the page, else one HEAD upstream whose
//     Content-Length is remembered in the DocCache;
//     An uncached file's first 64 KiB are read before answering (Probe), so an upstream
//     failure at the start is a 502/504, not an aborted 200;
//  4. files without a sha256: streamed from upstream, not cached (StreamFromUpstream).

#include <algorithm>

#include "base/log.h"
#include "base/strings.h"
#include "proxy/pypi/proxy_urls.h"
#include "proxy/pypi_routes/handlers.h"
#include "proxy/pypi_routes/page_source.h"
#include "proxy/pypi_routes/upstream_stream.h"
#include "proxy/service/blob_response.h"
#include "proxy/upstream/http_fetcher.h"

namespace ferry::proxy::pypi {

namespace {

// Bytes of an uncached file read before the answer's status is sent: an upstream that is down
// or sends other bytes than the page's sha256 then gets the client a 502/504 instead of an
// aborted 200. 64 KiB covers whole .metadata files and small wheels (verified before the first
// byte leaves) and costs a big file only the time to its first 64 KiB.
constexpr size_t kProbeBytes = 64u << 10;

// The bytes already read, then the rest of the source.
class PrefixedBody final : public server::BodySource {
 public:
  PrefixedBody(std::string prefix, std::unique_ptr<server::BodySource> rest)
      : prefix_(std::move(prefix)), rest_(std::move(rest)) {}
  Result<size_t> Read(char* buf, size_t n) override {
    if (offset_ < prefix_.size()) {
      size_t k = std::min(n, prefix_.size() - offset_);
      std::copy_n(prefix_.data() + offset_, k, buf);
      offset_ += k;
      return k;
    }
    return rest_->Read(buf, n);
  }
  void Cancel() override { rest_->Cancel(); }

 private:
  std::string prefix_;
  size_t offset_ = 0;
  std::unique_ptr<server::BodySource> rest_;
};

// Reads up to kProbeBytes of `r`'s body; an error there becomes the answer.
server::Response Probe(server::Response r) {
  if (!r.stream || (r.status != 200 && r.status != 206)) return r;
  std::string prefix(kProbeBytes, '\0');
  size_t got = 0;
  while (got < prefix.size()) {
    auto n = r.stream->Read(prefix.data() + got, prefix.size() - got);
    if (!n.ok()) {
      Log(LogLevel::kWarn, "pypi: {}", n.status().message());
      return server::ErrorResponse(UpstreamStatusFor(n.status()), n.status().message());
    }
    if (*n == 0) break;
    got += *n;
  }
  prefix.resize(got);
  r.stream = std::make_unique<PrefixedBody>(std::move(prefix), std::move(r.stream));
  return r;
}

// A stored page younger than this is not fetched again for a file it does not list: a client
// asking for files that do not exist must not turn each request into an upstream fetch.
constexpr int64_t kMinRefreshIntervalMs = 10'000;

// The upstream size of `url` by HEAD (redirects followed); remembered under `digest`.
Result<uint64_t> UpstreamSize(PypiDeps& deps, const Digest& digest, const std::string& url) {
  const std::string key = digest.ToString();
  if (auto doc = deps.px->docs->Get(kSizeNamespace, key)) {
    if (auto size = ParseUint64(doc->body)) return *size;
  }
  UpstreamRequest req;
  req.method = "HEAD";
  req.url = url;
  FERRY_ASSIGN_OR_RETURN(http::Response resp, deps.px->upstream->Send(req));
  if (!resp.ok()) return UpstreamError("HEAD", url, resp);
  std::optional<uint64_t> size;
  if (auto len = resp.Header("content-length")) size = ParseUint64(*len);
  if (!size) {
    return Unavailable("HEAD '" + http::DisplayUrl(url) + "': upstream gave no Content-Length");
  }
  Status put = deps.px->docs->Put(kSizeNamespace, key, Doc{std::to_string(*size), {}, 0});
  if (!put.ok()) Log(LogLevel::kWarn, "pypi: cannot store the size of {}: {}", key, put.message());
  return *size;
}

server::Response ServeVerified(PypiDeps& deps, const UpstreamFile& up,
                               const server::Request& request) {
  auto digest = Digest::Parse(DigestAlgorithm::kSha256, up.expected_sha256);
  if (!digest.ok()) return server::ErrorResponse(502, digest.status().message());
  ProxyContext& px = *deps.px;
  std::optional<uint64_t> size;
  if (auto cached = px.cache->blobs().Stat(*digest); cached.ok()) size = *cached;
  const bool was_cached = size.has_value();
  if (!size && px.options.offline) {
    return server::ErrorResponse(504, "offline (--offline): '" + up.file->filename +
                                          (up.metadata ? ".metadata" : "") + "' is not cached");
  }
  if (!size && !up.metadata && up.file->size) size = *up.file->size;
  if (!size) {
    auto got = UpstreamSize(deps, *digest, up.url);
    if (!got.ok()) {
      Log(LogLevel::kWarn, "pypi: {}", got.status().message());
      return server::ErrorResponse(UpstreamStatusFor(got.status()), got.status().message());
    }
    size = *got;
  }
  server::Headers headers;
  headers.Set("Content-Type", "application/octet-stream");
  headers.Set("ETag", "\"" + digest->hex + "\"");
  headers.Set("Cache-Control", "max-age=31536000, immutable");
  auto fetcher = std::make_shared<HttpFetcher>(px.upstream, up.url);
  server::Response r =
      ServeBlob(*px.cache, *digest, *size, std::move(fetcher), request, std::move(headers));
  return was_cached || request.method == "HEAD" ? std::move(r) : Probe(std::move(r));
}

}  // namespace

server::Response HandleFile(const server::Request& request, PypiDeps& deps) {
  // The server decoded the path (and refused encoded '/'); ParseFilePath takes it encoded.
  std::string rest = PercentEncode(request.Param("rest").value_or(""), /*keep_slash=*/true);
  auto req = ParseFilePath(rest);
  if (!req) {
    return server::ErrorResponse(404, "not a file URL of this proxy: '" + request.path + "'");
  }
  auto got = GetProjectPage(deps, req->project);
  if (!got.ok()) return PageErrorResponse(got.status(), deps);
  auto up = FindUpstreamFile(got->page, *req);
  if (!up && got->origin == PageOrigin::kFresh && !deps.px->options.offline &&
      deps.px->now_ms() - got->fetched_ms >= kMinRefreshIntervalMs) {
    got = GetProjectPage(deps, req->project, /*refresh=*/true);
    if (!got.ok()) return PageErrorResponse(got.status(), deps);
    up = FindUpstreamFile(got->page, *req);
  }
  if (!up) {
    return server::ErrorResponse(
        404, "'" + req->filename + "' is not listed on the index page of '" + req->project + "'");
  }
  if (!up->expected_sha256.empty()) return ServeVerified(deps, *up, request);
  if (deps.px->options.offline) {
    return server::ErrorResponse(
        504, "offline (--offline): '" + req->filename + "' has no sha256 and is never cached");
  }
  server::Headers headers;
  headers.Set("Content-Type", "application/octet-stream");
  return StreamFromUpstream(deps.px->upstream, up->url, request.method, std::move(headers));
}

}  // namespace ferry::proxy::pypi
