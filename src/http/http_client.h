#pragma once
// A small HTTP/1.1 client over libcurl (the only file set that includes curl).
//
// Thread-safety: Client is safe to share; each Send() borrows an easy handle from a pool, so
// connections stay alive across requests (keep-alive reuse) without a global lock during
// transfers. Errors: a transport failure (refused, reset, timeout, TLS) is a Status from
// CurlError(); any HTTP answer, 4xx/5xx included, is a Response: interpreting status codes is
// the caller's job (S3 errors carry XML bodies, plain HTTP does not).
//
// Stalls: every request is aborted as a timeout when it moves less than 1 byte/s for
// low_speed_time (curl's low-speed check). Requests marked `data_transfer` (object bodies up or
// down) are also held to a minimum average speed over that window (StallDetector), so a server
// trickling a byte every 0.4 s cannot hold a transfer forever; they fail with kDeadlineExceeded,
// ErrorDetail::stalled and the message "stalled (under 1 KiB/s for 30 s)".

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::http {

struct Header {
  std::string name;
  std::string value;
};
using Headers = std::vector<Header>;

struct Request {
  std::string method = "GET";
  std::string url;  // fully encoded
  Headers headers;
  std::string_view body;  // request body, not owned; sent with Content-Length
  // When not empty, the body is these pieces one after another (not owned; `body` is ignored):
  // a framed body (aws-chunked) sent without first copying it into one buffer.
  std::vector<std::string_view> body_pieces;
  bool send_body = false;  // PUT/POST with `body` (may be empty)
  // An object body moves up or down: hold it to ClientOptions::low_speed_limit. Leave it false
  // where the server may legitimately think for long and answer in a trickle (CopyObject and
  // CompleteMultipartUpload send keep-alive whitespace while they work).
  bool data_transfer = false;
  // Connect only to public addresses (http/address_class.h): for a host the caller did not
  // choose itself (a redirect's or a page's link). Another address fails the request with
  // kPermissionDenied before any byte is sent.
  bool public_addresses_only = false;
  // Overall limit for this request, when shorter than ClientOptions::total_timeout (or that is
  // 0); 0 = the client's.
  std::chrono::milliseconds timeout{0};
};

struct Response;
// Called once with the status and headers of a 2xx answer before its body reaches the sink.
using ResponseStart = std::function<Status(const Response&)>;

struct Response {
  long status = 0;
  Headers headers;   // names lower-cased
  std::string body;  // the body when no sink consumed it (errors, small answers)

  std::optional<std::string_view> Header(std::string_view lower_name) const;
  bool ok() const { return status >= 200 && status < 300; }
};

// Receives the body of a 2xx answer in order. A non-OK return aborts the transfer and becomes
// Send()'s result.
using BodySink = std::function<Status(std::string_view chunk)>;

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{5000};
  // Any request slower than 1 byte/s for this long is aborted as a timeout; it is also the
  // window of low_speed_limit.
  std::chrono::seconds low_speed_time{30};
  // Minimum average speed, in bytes per second over low_speed_time, of a request marked
  // data_transfer (both directions counted, time spent in the caller's sink not counted); 0 =
  // off. 1 KiB/s catches a trickling server (the reported one sent 2.5 bytes/s) yet is a hundred
  // times below a slow but working 100 KB/s link, and still 6 times below it when 16 transfers
  // share that link.
  uint64_t low_speed_limit = 1024;
  // Overall limit per request; 0 = none (large objects).
  std::chrono::milliseconds total_timeout{0};
  std::string ca_bundle;  // PEM bundle path; empty = system default
  bool follow_redirects = false;
  bool trace = false;  // log redacted request/response headers at trace level
  int max_error_body = 64 * 1024;
  // Set (by the CLI on SIGINT/SIGTERM) to abort transfers in flight within about a second
  // (curl's progress callback), with kCancelled. Not owned; null = never.
  const std::atomic<bool>* cancel = nullptr;
};

class Client final {
 public:
  explicit Client(ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Performs one request. With a sink, a 2xx body streams into it; otherwise the body is
  // returned in Response::body. Never retries: retry policy belongs to the caller.
  Result<Response> Send(const Request& request, const BodySink& sink = nullptr,
                        const ResponseStart& on_start = nullptr);

  const ClientOptions& options() const { return options_; }

 private:
  struct Pool;
  ClientOptions options_;
  std::unique_ptr<Pool> pool_;
};

// "bytes=FROM-" or "bytes=FROM-LAST" (LAST inclusive), the Range header value for reading from
// `from` up to `end` (exclusive; nullopt = to the end of the resource).
std::string RangeHeaderValue(uint64_t from, std::optional<uint64_t> end);

// A traced request line ("GET /k?a=1&sig=x HTTP/1.1") with the value of every query parameter
// replaced by [REDACTED], except the S3 API's own (uploadId, partNumber, list-type, ...).
std::string RedactRequestLine(std::string_view line);

// The delay a 429/503 answer asks for in its Retry-After header (delta-seconds or an HTTP date,
// relative to `now`); nullopt when absent or malformed.
std::optional<std::chrono::milliseconds> RetryAfter(
    const Response& response,
    std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

// "1 KiB/s", "500 B/s": a speed as the stall messages show it.
std::string FormatSpeed(uint64_t bytes_per_second);

// Text of a URL safe to show a user: query strings are dropped (they may hold presigned
// credentials) and userinfo is removed.
std::string DisplayUrl(std::string_view url);

}  // namespace ferry::http
