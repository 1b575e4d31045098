#include "proxy/upstream/upstream_client.h"

#include <algorithm>

#include "base/strings.h"
#include "proxy/pypi/url.h"

namespace ferry::proxy {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool HasScheme(std::string_view ref) {
  size_t colon = ref.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  for (size_t i = 0; i < colon; ++i) {
    char c = ref[i];
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return ref.find_first_of("/?#") > colon;
}

void RemoveHeader(http::Headers& headers, std::string_view name) {
  std::string lower = Lower(name);
  std::erase_if(headers, [&](const http::Header& h) { return Lower(h.name) == lower; });
}

}  // namespace

bool IsRedirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

std::optional<std::string> RedirectTarget(std::string_view from, std::string_view location,
                                          bool* relative) {
  std::string_view loc = Trim(location);
  if (relative) *relative = !HasScheme(loc) && !loc.starts_with("//");
  auto resolved = pypi::ResolveUrl(from, loc);
  if (!resolved) return std::nullopt;
  // A fragment never goes on the wire.
  if (size_t hash = resolved->find('#'); hash != std::string::npos) resolved->resize(hash);
  return resolved;
}

std::string OriginOf(std::string_view url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return "";
  std::string scheme = Lower(url.substr(0, scheme_end));
  if (scheme != "http" && scheme != "https") return "";
  std::string_view rest = url.substr(scheme_end + 3);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
  if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority = authority.substr(at + 1);
  }
  std::string host = Lower(authority);
  bool has_port = false;
  if (size_t colon = host.rfind(':');
      colon != std::string::npos && host.find(']', colon) == std::string::npos) {
    has_port = true;
    if (colon + 1 == host.size()) host.pop_back(), has_port = false;
  }
  if (!has_port) host += scheme == "https" ? ":443" : ":80";
  return scheme + "://" + host;
}

Status UpstreamError(std::string_view op, std::string_view url, const http::Response& response) {
  long st = response.status;
  std::string msg =
      std::string(op) + " '" + http::DisplayUrl(url) + "' failed: HTTP " + std::to_string(st);
  ErrorDetail d{.http_status = static_cast<int>(st)};
  if (auto code = response.Header("x-error-code")) {
    d.remote_code = std::string(*code);
    msg += " " + d.remote_code;
  }
  if (auto text = response.Header("x-error-message")) {
    msg += ": " + std::string(text->substr(0, 300));
  } else if (!response.body.empty() && response.body.size() <= 300 &&
             response.body.find('<') == std::string::npos) {
    std::string body(Trim(response.body));
    std::replace(body.begin(), body.end(), '\n', ' ');
    if (!body.empty()) msg += ": " + body;
  }
  if (st == 429 || st == 503) {
    d.throttled = true;
    d.retry_after = http::RetryAfter(response).value_or(std::chrono::milliseconds(0));
  }
  if (st == 404 || st == 410) return Status(StatusCode::kNotFound, msg, d);
  if (st == 401) return Status(StatusCode::kUnauthenticated, msg, d);
  if (st == 403) return Status(StatusCode::kPermissionDenied, msg, d);
  if (st == 416) return Status(StatusCode::kOutOfRange, msg, d);
  if (st == 429 || st >= 500) return Status(StatusCode::kUnavailable, msg, d);
  return Status(StatusCode::kInvalidArgument, msg, d);
}

UpstreamClient::UpstreamClient(UpstreamOptions options)
    : options_(std::move(options)), client_(std::make_unique<http::Client>([&] {
        http::ClientOptions c = options_.client;
        c.follow_redirects = false;  // redirects are ours to follow (see the header)
        return c;
      }())) {}

Result<http::Response> UpstreamClient::Send(const UpstreamRequest& request,
                                            const http::BodySink& sink,
                                            const http::ResponseStart& on_start,
                                            std::string* final_url) {
  std::string url = request.url;
  std::string method = request.method;
  http::Headers headers = request.headers;
  if (!options_.user_agent.empty()) {
    RemoveHeader(headers, "user-agent");
    headers.push_back({"User-Agent", options_.user_agent});
  }
  bool send_body = request.send_body;
  for (int hop = 0;; ++hop) {
    bool public_only = false;
    if (options_.destinations) {
      FERRY_RETURN_IF_ERROR(CheckDestination(url, *options_.destinations, &public_only));
    }
    http::Request req{.method = method,
                      .url = url,
                      .headers = headers,
                      .body = request.body,
                      .send_body = send_body,
                      .data_transfer = request.data_transfer,
                      .public_addresses_only = public_only};
    auto resp = client_->Send(req, sink, on_start);
    if (!resp.ok()) {
      return resp.status().WithContext(method + " '" + http::DisplayUrl(url) + "'");
    }
    if (final_url) *final_url = url;
    if (!IsRedirect(resp->status) || request.redirects == Redirects::kNone) return resp;
    auto location = resp->Header("location");
    bool relative = false;
    std::optional<std::string> next;
    if (location) next = RedirectTarget(url, *location, &relative);
    if (request.redirects == Redirects::kRelative && !relative) return resp;
    if (!next) {
      return Status(StatusCode::kUnavailable,
                    method + " '" + http::DisplayUrl(url) + "': HTTP " +
                        std::to_string(resp->status) + " without a usable Location",
                    ErrorDetail{.http_status = static_cast<int>(resp->status)});
    }
    if (hop + 1 > options_.max_redirects) {
      return Status(StatusCode::kUnavailable,
                    method + " '" + http::DisplayUrl(request.url) + "': more than " +
                        std::to_string(options_.max_redirects) + " redirects");
    }
    if (OriginOf(*next) != OriginOf(url)) RemoveHeader(headers, "authorization");
    // 303 turns any method into GET; 301/302 turn POST into GET (what clients do).
    if (resp->status == 303 || ((resp->status == 301 || resp->status == 302) && method == "POST")) {
      if (method != "HEAD") method = "GET";
      send_body = false;
    }
    url = std::move(*next);
  }
}

}  // namespace ferry::proxy
