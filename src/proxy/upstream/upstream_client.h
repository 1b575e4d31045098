#pragma once
// UpstreamClient: how `ferry serve`'s proxies talk to the services they cache (the Hugging Face
// Hub and its CDN, a PyPI index and its file host). A thin layer over http::Client (the only
// place the proxy sees the HTTP client) that adds what every proxy handler needs:
//  - redirects followed by policy, never by curl: kAll (a file body: the Hub's 302 to a signed
//    CDN URL is used once and never shown to the client or stored), kRelative (huggingface_hub's
//    rule for metadata HEADs: a renamed repo's relative 307 is followed, the 302 to the CDN is
//    not, because its headers carry the file's metadata), kNone;
//  - the Authorization header is dropped when a redirect leaves the origin (scheme, host, port),
//    as browsers and requests do, so a user's Hub token never reaches a CDN or another host;
//  - one mapping of error answers to Status (UpstreamError), keeping the HTTP status and the
//    Hub's X-Error-Code as ErrorDetail;
//  - every URL, the first and each redirect's, held to UpstreamOptions::destinations (no SSRF:
//    destinations.h).
// Thread-safety: Send() may be called from many threads at once.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "http/http_client.h"
#include "proxy/upstream/destinations.h"

namespace ferry::proxy {

enum class Redirects { kNone, kRelative, kAll };

struct UpstreamRequest {
  std::string method = "GET";
  std::string url;  // absolute, encoded
  http::Headers headers;
  std::string body;  // sent when send_body (POST paths-info)
  bool send_body = false;
  bool data_transfer = false;  // a file body: held to the client's minimum-speed rule
  Redirects redirects = Redirects::kAll;
};

struct UpstreamOptions {
  http::ClientOptions client;
  int max_redirects = 5;
  std::string user_agent = "ferry-serve";
  // Every URL requested, the first and each redirect's, is checked against this
  // (destinations.h); nullopt: none is (tests of the client alone).
  std::optional<DestinationPolicy> destinations;
};

class UpstreamClient final {
 public:
  explicit UpstreamClient(UpstreamOptions options);

  // Sends `request`, following redirects as its policy says. With a sink, a 2xx body streams
  // into it (`on_start` first sees the final answer's headers); a 3xx answer that is not
  // followed, and every 4xx/5xx, is returned with its body in Response::body. `final_url`, when
  // given, receives the URL that produced the answer. Transport failures are Status values
  // (kUnavailable, kDeadlineExceeded, ...), as http::Client gives them, with the URL (query
  // dropped) as context. A redirect without a usable Location, or too many, is kUnavailable
  // (a misbehaving upstream, retryable by the next request).
  Result<http::Response> Send(const UpstreamRequest& request, const http::BodySink& sink = nullptr,
                              const http::ResponseStart& on_start = nullptr,
                              std::string* final_url = nullptr);

 private:
  UpstreamOptions options_;
  std::unique_ptr<http::Client> client_;
};

// True for 301, 302, 303, 307, 308.
bool IsRedirect(long status);
// The absolute URL a redirect's Location names, resolved against `from`; nullopt when it is not
// http(s). `relative` is set when the Location was not an absolute URL (no scheme).
std::optional<std::string> RedirectTarget(std::string_view from, std::string_view location,
                                          bool* relative);
// "http://host:port" of an absolute URL (lower-cased scheme and host; the default port made
// explicit), for same-origin checks; "" when it is not http(s).
std::string OriginOf(std::string_view url);

// The Status for an upstream error answer to `op` on `url` (query dropped in the message):
// 404/410 kNotFound, 401 kUnauthenticated, 403 kPermissionDenied, 416 kOutOfRange, 429 and 5xx
// kUnavailable (throttled, with Retry-After), other 4xx kInvalidArgument. ErrorDetail keeps the
// HTTP status and X-Error-Code; X-Error-Message (or a short text body) joins the message.
Status UpstreamError(std::string_view op, std::string_view url, const http::Response& response);

}  // namespace ferry::proxy
