#pragma once
// Internal to the S3 backend: builds, signs and sends one S3 REST call, maps failures to Status
// and retries transient ones. The store and writer files express operations through it.

#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/hash.h"
#include "base/retry.h"
#include "http/http_client.h"
#include "storage/s3/s3_store.h"

namespace ferry::storage::s3 {

struct S3Call {
  std::string op;  // S3 operation name, for messages: "GetObject"
  std::string method = "GET";
  std::string key;  // unencoded object key
  bool bucket_level = false;
  std::vector<std::pair<std::string, std::string>> query;  // unencoded
  http::Headers headers;
  std::string_view body;
  bool send_body = false;
  bool sign_body = false;  // hash the body into the signature (small XML bodies)
  // An uploaded object body: the server must verify it (S3StoreOptions::body_check says how).
  bool verify_body = false;
  // The body may go in aws-chunked encoding (UploadPart: a part has no Content-Encoding of its
  // own to keep, unlike PutObject's object).
  bool chunked_ok = false;
  // The body's SHA-256 when the caller computed it already (several parts hashed at once:
  // base/sha256_lanes.h); used where the body is sent with its SHA-256 in the signature.
  std::optional<Sha256Digest> body_sha256;
  // An object body moves (GetObject, PutObject, UploadPart): held to the HTTP client's
  // minimum-progress rule (http::Request::data_transfer).
  bool data_transfer = false;
};

class S3Client final {
 public:
  explicit S3Client(S3StoreOptions options) : opt_(std::move(options)) {}

  // One attempt. HTTP error answers become a Status naming op, URL, status, code, request id.
  // With a sink, a 2xx body streams into it.
  Result<http::Response> Once(const S3Call& call, const http::BodySink& sink = nullptr,
                              const http::ResponseStart& on_start = nullptr);
  // Retries retryable failures with backoff (no sink: the whole answer is buffered).
  Result<http::Response> Call(const S3Call& call);

  std::string UrlFor(std::string_view key) const;
  const S3StoreOptions& options() const { return opt_; }
  uint64_t retries() const { return retries_.load(); }
  // Whether an uploaded part goes with its whole SHA-256 in the signature (not Content-MD5, not
  // aws-chunked), so a caller may pass it in S3Call::body_sha256. Anonymous requests still use
  // Content-MD5 (the passed digest is then unused). Fixed for the client's life: chunked parts
  // that a server refuses fall back to a SHA-256 computed per part, so one copy run never mixes
  // the copy engine's two ways of sending parts.
  bool SignsPartSha256() const {
    return Sha256Body() && opt_.body_check != S3StoreOptions::BodyCheck::kChunked;
  }
  // Counts and logs one retry: an info line each; a stall also as a warning (`resume` says
  // where the retry continues, e.g. "from byte 123"); throttling as a few warnings for the
  // whole store (ThrottleReporter). Thread-safe.
  void CountRetry(const S3Call& call, const Status& why, std::chrono::milliseconds delay,
                  std::string_view resume = "");

 private:
  // Whether verified bodies go as a signed SHA-256 payload (else Content-MD5).
  bool Sha256Body() const {
    using B = S3StoreOptions::BodyCheck;
    static const bool fast = Sha256IsHardwareAccelerated();
    return opt_.body_check == B::kSha256 || opt_.body_check == B::kChunked ||
           (opt_.body_check == B::kAuto && fast);
  }
  // Whether a verified body of a call that allows it goes in signed chunks.
  bool ChunkedBody(const S3Call& call) const;
  S3StoreOptions opt_;
  std::atomic<uint64_t> retries_{0};
  std::atomic<bool> chunked_refused_{false};  // the server answered a chunked body with a refusal
  ThrottleReporter throttle_reporter_;
};

// S3 error codes that mean "slow down" (the AWS SDKs' throttling list; S3 itself answers 503
// SlowDown, other S3-compatible servers and AWS services use the rest).
bool IsThrottlingErrorCode(std::string_view code);

// Maps an HTTP error answer of an S3 call to a Status. Throttling (HTTP 429, 503, a throttling
// code) is kUnavailable with ErrorDetail::throttled and the answer's Retry-After.
Status S3ErrorToStatus(const S3Call& call, const std::string& url, const http::Response& resp);

}  // namespace ferry::storage::s3
