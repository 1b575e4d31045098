#pragma once
// HttpFetcher: the Fetcher (proxy/fetcher.h) of one upstream file URL. Each Fetch() is one
// ranged GET that follows every redirect (the Hub's 307 to resolve-cache, its 302 to a signed
// CDN URL), so a signed URL is used for one request and re-resolved by the next: nothing
// signed is ever stored. The cache resumes retryable failures by calling Fetch() again.
// A 200 answer to a ranged request has its leading bytes skipped; any answer is cut at the end
// of the range; a 206 starting elsewhere than asked is kUnavailable (retried).
// Thread-safety: Fetch() may run concurrently (the fill and direct ranges).

#include <memory>
#include <string>

#include "http/http_client.h"
#include "proxy/fetcher.h"
#include "proxy/upstream/upstream_client.h"

namespace ferry::proxy {

class HttpFetcher final : public Fetcher {
 public:
  // `headers` go with every request (the client's Authorization for a gated repo: dropped by
  // UpstreamClient when a redirect leaves the origin).
  HttpFetcher(std::shared_ptr<UpstreamClient> client, std::string url, http::Headers headers = {})
      : client_(std::move(client)), url_(std::move(url)), headers_(std::move(headers)) {}

  Status Fetch(const storage::ByteRange& range, const storage::ByteSink& sink) override;
  std::string Describe() const override { return http::DisplayUrl(url_); }

 private:
  std::shared_ptr<UpstreamClient> client_;
  std::string url_;
  http::Headers headers_;
};

// The first byte of a "bytes FIRST-LAST/TOTAL" Content-Range; nullopt when malformed.
std::optional<uint64_t> ContentRangeStart(std::string_view value);

}  // namespace ferry::proxy
