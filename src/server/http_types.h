#pragma once
// The plain values an HTTP handler sees: Request in, Response out (house style 8 and 26).
// Nothing here knows about sockets or the HTTP library; handlers are tested with these values.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/file_span.h"
#include "base/status.h"

namespace ferry::server {

// An ordered list of header fields with case-insensitive names. Duplicates are kept in order.
class Headers final {
 public:
  void Add(std::string name, std::string value);
  // Replaces every field called `name` by one with `value`.
  void Set(std::string_view name, std::string value);
  void Remove(std::string_view name);
  // The first value of `name`, or nullopt.
  std::optional<std::string_view> Get(std::string_view name) const;
  bool Has(std::string_view name) const { return Get(name).has_value(); }
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

// A request body the handler pulls, for routes added with Router::AddStreaming (uploads of any
// size: nothing buffers the whole body). Read() runs on the handler's worker thread and blocks
// until bytes arrive; each wait is bounded by ServerOptions::read_timeout. Not thread-safe:
// one reader (the handler's thread) at a time.
class BodyReader {
 public:
  virtual ~BodyReader() = default;
  // Copies up to `n` (> 0) bytes of the body into `buf`. Returns the count, 0 once the whole
  // body has arrived, or an error when it cannot arrive (the client closed the connection or
  // stalled past read_timeout, a malformed chunked encoding, server shutdown): the handler then
  // discards what it read. A handler that stops reading early makes the server close the
  // connection after its response.
  virtual Result<size_t> Read(char* buf, size_t n) = 0;
  // The Content-Length the client declared; nullopt for a chunked body.
  virtual std::optional<uint64_t> content_length() const = 0;
};

// A BodyReader over a string (handler tests).
std::shared_ptr<BodyReader> StringBodyReader(std::string data,
                                             std::optional<uint64_t> content_length = {});

// Who sent a request, as the server's admission decided (server/admission.h): no Ferry token
// (a server or area without tokens), a read-only token (or the UI's cookie), a read-write token.
enum class Principal { kAnonymous, kReader, kWriter };

// One request as the server received and validated it (server/path.h decides what a valid
// target is; the body is within ServerOptions::body_limit, or, for a route added with
// Router::AddStreaming, not read yet: see body_stream).
struct Request {
  std::string method;  // "GET", "HEAD", "POST", ... as sent (upper case by convention)
  // The percent-decoded path: starts with '/', no "." or ".." segment, no empty segment except
  // a trailing one, no NUL, backslash or control character, no '/' that was encoded.
  std::string path;
  std::string raw_query;                                    // after '?', undecoded; "" if none
  std::vector<std::pair<std::string, std::string>> query;   // decoded ('+' is a space)
  std::vector<std::pair<std::string, std::string>> params;  // from the route's {name}s
  // As sent, less the Ferry credential (server/admission.h): a Ferry token never reaches a
  // handler, so none can pass it on. An Authorization header still here is the client's own
  // (e.g. its Hugging Face token on a server or area that needs no Ferry token).
  Headers headers;
  Principal principal = Principal::kAnonymous;
  std::string body;  // empty for streaming routes
  // Streaming routes only: the body, pulled by the handler; null elsewhere.
  std::shared_ptr<BodyReader> body_stream;
  std::string peer;  // "127.0.0.1:53412"

  // The first query parameter / path parameter called `name`, or nullopt.
  std::optional<std::string_view> Query(std::string_view name) const;
  std::optional<std::string_view> Param(std::string_view name) const;
};

// A response body the server pulls from, chunk by chunk, so a blob of any size passes through a
// bounded buffer (house style 27). The server calls Read() on one of its worker threads, never
// on an I/O thread, one call at a time per source, and only after the previous chunk was
// written to the client; so Read() may block (waiting for a cache that is still being filled)
// without delaying other connections, and a slow client simply stops the pulls.
class BodySource {
 public:
  virtual ~BodySource() = default;
  // Copies up to `n` (> 0) bytes into `buf`; blocks until at least one byte is there or the
  // body ended. Returns the count, 0 at the end of the body, or an error (the server then
  // aborts the connection: the client sees a truncated body, never a wrong one).
  virtual Result<size_t> Read(char* buf, size_t n) = 0;
  // Called from another thread when the server gives up on the response (client gone, or the
  // shutdown deadline passed): a Read() blocked now or later should return an error promptly.
  // Must be thread-safe. Default: nothing (fine for sources that never block long).
  virtual void Cancel() {}

  // For sources whose bytes are in a file (a cached blob, a spool file being filled): blocks as
  // Read() does, then names where the next up to `n` (> 0) bytes are instead of copying them,
  // and the server sends them with sendfile(2), no copy through user space. `fd` stays open
  // until the source is destroyed; a span of length 0 ends the body. The server asks this first
  // for a response with a Content-Length; kUnimplemented there (the default) makes it use Read()
  // for the whole body. Other errors are Read()'s.
  virtual Result<FileSpan> NextFileSpan(size_t n) {
    (void)n;
    return Status(StatusCode::kUnimplemented, "no file behind this body");
  }
};

// What a handler returns. The body is either `body` (a string) or `stream` (pulled by the
// server); with a stream, `content_length` sets Content-Length, otherwise the body is sent
// chunked. Move-only.
struct Response {
  int status = 200;
  Headers headers;
  std::string body;
  std::unique_ptr<BodySource> stream;
  std::optional<uint64_t> content_length;  // only used with `stream`
  bool close = false;                      // close the connection after this response
};

// A body source over a string (tests, small generated bodies).
std::unique_ptr<BodySource> StringSource(std::string data);

Response TextResponse(int status, std::string text,
                      std::string content_type = "text/plain; charset=utf-8");
// `json` must already be serialized JSON.
Response JsonResponse(int status, std::string json);
// {"error": message} with `status`; the message is one line (newlines become spaces).
Response ErrorResponse(int status, std::string_view message);
// {"error": message, "error_code": code, "message": message}: the server's own errors that
// MLflow clients read too (401 UNAUTHENTICATED, 403 PERMISSION_DENIED).
Response ErrorResponse(int status, std::string_view message, std::string_view error_code);
// The HTTP status for a Status code (NotFound 404, InvalidArgument 400, Unauthenticated 401,
// PermissionDenied 403, Unavailable 503, DeadlineExceeded 504, ...; anything unknown is 500).
int HttpStatusFor(const Status& status);
// ErrorResponse(HttpStatusFor(status), status.message()).
Response ErrorResponse(const Status& status);
// "Not Found" for 404, and so on; "" for unknown codes.
std::string_view ReasonPhrase(int status);

}  // namespace ferry::server
