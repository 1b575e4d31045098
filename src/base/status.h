#pragma once
// Errors as values: Status and Result<T>.
//
// A Status is a code from a small closed set plus a human message that names the operation and
// the thing it acted on. Transport details (HTTP status, S3 error code, request id) ride along
// as structured fields so callers never parse messages. Secrets are never put in a Status.

#include <chrono>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <utility>

namespace ferry {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,     // malformed URL, bad option, bad key: fix the input
  kNotFound,            // missing object, bucket, file
  kAlreadyExists,       // a conditional create found the target
  kPermissionDenied,    // authenticated but not allowed (403 AccessDenied, EACCES)
  kUnauthenticated,     // bad or missing credentials, signature mismatch
  kFailedPrecondition,  // conditional request failed, wrong state
  kUnavailable,         // transient: connection reset/refused, 5xx, throttling
  kDeadlineExceeded,    // a timeout
  kResourceExhausted,   // disk full, quota
  kDataLoss,            // checksum mismatch, truncated data
  kUnimplemented,       // the backend cannot do this operation
  kOutOfRange,          // a byte range past the end
  kCancelled,           // stopped by the user or a signal
  kInternal,            // a bug or an unexpected answer
};

std::string_view StatusCodeName(StatusCode code);

// Extra facts about a failed remote call. All optional.
struct ErrorDetail {
  int http_status = 0;      // 0 when no HTTP answer was received
  std::string remote_code;  // e.g. S3 "NoSuchKey", "SlowDown"
  std::string request_id;   // x-amz-request-id
  // The server asked us to slow down (HTTP 429, 503, S3 SlowDown and the like): retried under
  // RetryPolicy::throttle_budget rather than max_attempts. Set by the one error mapper per
  // protocol.
  bool throttled = false;
  std::chrono::milliseconds retry_after{0};  // the answer's Retry-After; 0 = none
  // A data transfer fell below the minimum-progress rule (http::ClientOptions::low_speed_limit).
  bool stalled = false;
};

class [[nodiscard]] Status final {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  Status(StatusCode code, std::string message, ErrorDetail detail)
      : code_(code), message_(std::move(message)), detail_(std::move(detail)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  const ErrorDetail& detail() const { return detail_; }

  // Returns a copy whose message is "context: message" (one layer adds context once).
  Status WithContext(std::string_view context) const;

  // "NOT_FOUND: message" style, for logs and tests.
  std::string ToString() const;

  void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  ErrorDetail detail_;
};

inline bool operator==(const Status& a, StatusCode c) { return a.code() == c; }

// True for the transient failures every retry loop in Ferry retries: connection problems,
// timeouts, 5xx and throttling. Everything else is final.
bool IsRetryable(const Status& status);

// True for a retryable failure that is the server throttling us (ErrorDetail::throttled).
bool IsThrottled(const Status& status);

Status InvalidArgument(std::string message);
Status NotFound(std::string message);
Status Unavailable(std::string message);
Status Internal(std::string message);
Status Unimplemented(std::string message);

// Result<T>: a T or a non-OK Status. Shaped like std::expected, with implicit construction
// from both so functions can `return value;` and `return status;`.
template <typename T>
class [[nodiscard]] Result final {
 public:
  Result(T value) : v_(std::move(value)) {}                        // NOLINT(runtime/explicit)
  Result(Status status) : v_(std::unexpect, std::move(status)) {}  // NOLINT
  template <typename U>
  requires std::is_constructible_v<T, U&&> &&
      (!std::is_same_v<std::decay_t<U>, Status>)&&(!std::is_same_v<std::decay_t<U>, Result<T>>)
          Result(U&& value)
      : v_(T(std::forward<U>(value))) {}  // NOLINT

  bool ok() const { return v_.has_value(); }
  const Status& status() const& {
    static const Status kOkStatus;
    return ok() ? kOkStatus : v_.error();
  }
  Status status() && { return ok() ? Status() : std::move(v_.error()); }

  T& value() & { return *v_; }
  const T& value() const& { return *v_; }
  T&& value() && { return std::move(*v_); }
  T& operator*() & { return *v_; }
  const T& operator*() const& { return *v_; }
  T&& operator*() && { return std::move(*v_); }
  T* operator->() { return &*v_; }
  const T* operator->() const { return &*v_; }

 private:
  std::expected<T, Status> v_;
};

}  // namespace ferry

#define FERRY_CONCAT_INNER_(a, b) a##b
#define FERRY_CONCAT_(a, b) FERRY_CONCAT_INNER_(a, b)

#define FERRY_RETURN_IF_ERROR(expr)                \
  do {                                             \
    ::ferry::Status ferry_status_ = (expr);        \
    if (!ferry_status_.ok()) return ferry_status_; \
  } while (0)

#define FERRY_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return std::move(tmp).status();     \
  lhs = std::move(tmp).value()

#define FERRY_ASSIGN_OR_RETURN(lhs, expr) \
  FERRY_ASSIGN_OR_RETURN_IMPL_(FERRY_CONCAT_(ferry_result_, __LINE__), lhs, expr)
