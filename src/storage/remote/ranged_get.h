#pragma once
// The resumable ranged GET shared by the stores that read over HTTP (s3, http(s)), so both
// behave the same:
//  - a transfer that breaks is retried (RetryPolicy) from the first byte not yet delivered
//    (Range: bytes=FROM-), never delivering a byte twice;
//  - every retry is pinned to the version the read started with: the caller's
//    ReadOptions::if_match, else the first answer's ETag, sent as If-Match. An answer with
//    another ETag (a server that ignores If-Match) or a 412 fails with kFailedPrecondition
//    ("object was replaced while reading") instead of splicing two versions. Weak ETags
//    (W/"...") cannot be sent in If-Match (it compares strongly, RFC 9110 13.1.1); they are only
//    compared with the answers';
//  - a server that answers 200 (the whole object) to a ranged request has the bytes before the
//    wanted offset skipped, and any answer is cut at the end of the wanted range;
//  - a range starting exactly at the end of the object is an empty read even where the server
//    answers 416; starting past the end stays kOutOfRange;
//  - ReadOptions::info is filled from the first answer's headers: size (Content-Range's total,
//    else Content-Length), ETag, Last-Modified, and what the backend adds (S3 metadata).
// ETags are kept without their quotes (ObjectInfo::etag), as S3 lists them.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "base/retry.h"
#include "base/status.h"
#include "http/http_client.h"
#include "storage/store.h"

namespace ferry::storage::remote {

// One GET attempt: sends the request with `headers` added (Range and If-Match as this attempt
// needs them), streams a 2xx body into `sink` after `on_start`, and maps an error answer to a
// Status by its protocol's rules (412 must be kFailedPrecondition, 416 kOutOfRange). Transport
// failures are returned as they are (retryable ones are retried).
using GetAttempt = std::function<Result<http::Response>(
    const http::Headers& headers, const http::BodySink& sink, const http::ResponseStart& on_start)>;

struct RangedGet {
  std::string op;   // for messages: "GetObject", "GET"
  std::string url;  // the object's URL as messages show it
  std::string key;  // ObjectInfo::key
  GetAttempt attempt;
  // Adds what the backend knows beyond size, ETag and Last-Modified (S3: x-amz-meta-*). Optional.
  std::function<void(const http::Response&, ObjectInfo&)> more_info;
  // The object's size now, asked only when a read is answered 416 before any byte arrived.
  std::function<Result<uint64_t>()> current_size;
  RetryPolicy retry;
  // Told about each retry: why, the delay, and where it resumes ("from byte 5"). Optional.
  std::function<void(const Status& why, std::chrono::milliseconds delay, const std::string& resume)>
      on_retry;
};

// Reads `options.range` of the object into `sink` (see above).
Status ReadRanged(const RangedGet& get, const ReadOptions& options, const ByteSink& sink);

// An ETag header value as ObjectInfo keeps it: "\"abc\"" -> "abc"; weak tags stay as they are
// (W/"abc"), so they never compare equal to a strong one.
std::string EtagFromHeader(std::string_view value);

// Size (Content-Length), ETag and Last-Modified of an answer.
ObjectInfo InfoFromHeaders(std::string key, const http::Response& response);

// Logs one retry the way every HTTP-speaking store does: an info line each ("retrying OP in N ms:
// why"; `op` may be empty); a stall also as a warning saying where the retry continues
// (`resume`: "from byte 123", "the request"); throttling as a few warnings per store through
// `reporter`.
void LogRetry(ThrottleReporter& reporter, std::chrono::milliseconds throttle_budget,
              std::string_view op, const Status& why, std::chrono::milliseconds delay,
              std::string_view resume);

}  // namespace ferry::storage::remote
