#pragma once
// Internal to src/server: one HTTP connection (Beast's session, house style 26) and the state
// it shares with its Server. Every member function of Session runs on the connection's strand,
// except Read() pulls and handlers, which run on the WorkerPool and post their results back.
//
// Per request: read the header (read_timeout, header_limit) -> validate the framing and the
// target and admit it (server/admission.h: tokens, Host, origin), all on the strand and before
// any body byte is read -> read the body (its limit set by the admission) -> handler on a
// worker -> post the Response to the strand -> write the header -> a string body in one write, or a
// BodySource pulled one chunk at a time: pull on a worker, post, async_write the chunk
// (write_timeout), then pull again. At most one chunk per connection is in memory, a blocked pull
// holds one worker thread and nothing else, and a slow client only delays its own next pull.
//
// Request bodies: the header is read first; a route added with Router::AddStreaming then gets
// the body through a BodyReader (the handler's worker posts each read to the strand and waits
// for it, read_timeout per socket read), every other route the whole body as a string, within
// body_limit. A streamed body with a Content-Length is read from the socket straight into the
// handler's buffer (after the bytes that arrived with the header), as large as that buffer and
// never past the body's end: once the strand holds none of it, by the worker itself (recv and
// poll on its duplicate of the socket, read_timeout per wait), so a multi-GiB upload crosses
// no threads per buffer; a chunked one goes through Beast's parser (64 KiB per read, one more
// copy).

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "server/admission.h"
#include "server/metrics.h"
#include "server/router.h"
#include "server/server.h"
#include "server/worker_pool.h"

namespace ferry::server {

class Session;

// What all connections of one Server share. Outlives every Session (the Server destroys its
// io_context, and so the last sessions, before this).
struct ServerCore {
  ServerCore(ServerOptions opts, const Router& r, std::shared_ptr<const AccessPolicy> p);

  const ServerOptions options;
  const Router& router;
  const std::shared_ptr<const AccessPolicy> policy;  // built from options (server.cc)
  std::shared_ptr<MetricsRegistry> metrics;
  std::unique_ptr<WorkerPool> workers;
  std::atomic<bool> stopping{false};
  Gauge& open_connections;
  Gauge& active_streams;
  Counter& bytes_sent;

  Counter& RequestsWithStatus(int status);
  void Register(const std::shared_ptr<Session>& s) EXCLUDES(mu);
  void Unregister(Session* s) EXCLUDES(mu);
  std::vector<std::shared_ptr<Session>> Sessions() EXCLUDES(mu);
  // Waits until no session is left or `deadline`; true when none is left.
  bool WaitNoSessions(std::chrono::steady_clock::time_point deadline) EXCLUDES(mu);

  Mutex mu;
  CondVar cv;
  std::map<Session*, std::weak_ptr<Session>> sessions GUARDED_BY(mu);
};

class Session final : public std::enable_shared_from_this<Session> {
 public:
  // `socket` must have been accepted on its own strand (asio::make_strand).
  Session(boost::asio::ip::tcp::socket socket, ServerCore& core);
  ~Session();

  // Streaming routes: reads the next bytes of the request body into `buf` (BodyReader::Read).
  // Called on a worker thread; blocks until the strand has read some bytes or failed.
  // `direct_fd`: the handler's own duplicate of the socket (DupForBody), or -1. With it, a body
  // of known length is read on the worker itself once the strand has nothing of it buffered
  // and no "100 Continue" to send: no hop to the strand and back for each buffer.
  Result<size_t> ReadBody(char* buf, size_t n, int direct_fd);
  // On the strand, for a streaming request with a Content-Length: a close-on-exec duplicate of
  // the socket, or -1. Close() shuts the socket down, which ends a wait on the duplicate too; a
  // duplicate (not the socket's own descriptor) cannot be closed and reused under the worker.
  int DupForBody();
  std::optional<uint64_t> body_length() const { return body_length_; }

  void Start();      // registers with the core and reads the first request
  void CloseIdle();  // shutdown: closes the connection if no request has begun on it
  void Abort();      // shutdown deadline: cancels the body source and closes

 private:
  using HeaderParser = boost::beast::http::request_parser<boost::beast::http::empty_body>;
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;
  using StreamParser = boost::beast::http::request_parser<boost::beast::http::buffer_body>;
  // One ReadBody() call: filled on the strand, waited for on the worker.
  struct BodyPull {
    Mutex mu;
    CondVar cv;
    bool done GUARDED_BY(mu) = false;
    Status status GUARDED_BY(mu);
    size_t n GUARDED_BY(mu) = 0;
    void Finish(Status s, size_t k) EXCLUDES(mu);
  };
  using StreamResponse = boost::beast::http::response<boost::beast::http::buffer_body>;
  using Serializer = boost::beast::http::response_serializer<boost::beast::http::buffer_body>;

  void DoRead();
  void OnHeader(boost::beast::error_code ec);
  // The answer for a failed read of a request (header or body); false: none, just close.
  bool RespondToReadError(boost::beast::error_code ec);
  // Builds pending_ from the header just read and admits it (server/admission.h); or returns
  // the answer refusing it (a bad target, framing the server does not support, no token, a
  // foreign origin), sent before any of the body is read.
  std::optional<Response> AdmitHeader();
  // Parser callback at each chunk header: refuses a trailer (after the last chunk) longer
  // than header_limit before Beast parses its fields.
  void OnChunkHeader(uint64_t size, std::string_view extensions, boost::beast::error_code& ec);
  void OnRead(boost::beast::error_code ec);
  void StartBodyRead(char* buf, size_t n, size_t filled, std::shared_ptr<BodyPull> pull);
  void ReadRawBody(char* buf, size_t n, size_t filled, std::shared_ptr<BodyPull> pull);
  // ReadBody's worker-side read: recv + poll on `fd` until `buf` is full or the body has ended.
  Result<size_t> ReadRawDirect(char* buf, size_t n, int fd);
  bool BodyDone() const;
  void Handle();
  void Respond(Response r);
  void ScrubPrivatePaths(Response& r) const;
  void OnHeaderWritten(boost::beast::error_code ec);
  void PullNext();
  // On the pulling worker: sends the body's file (BodySource::NextFileSpan) with sendfile(2) on
  // a duplicate of the socket, until the span is out or the socket buffer is full
  // (send_blocked_: the strand then waits for it, WaitWritable); the bytes sent, 0 at the end,
  // or kUnimplemented on the first call when the source has no file.
  Result<size_t> SendFileSpan(size_t want);
  void WaitWritable();
  void OnPulled(Result<size_t> n);
  void OnSent(Result<size_t> n);
  void OnChunkWritten(boost::beast::error_code ec, size_t n);
  void OnLastWritten(boost::beast::error_code ec);
  void Finish();
  void DrainAndClose();
  void Close();
  void LogAccess(bool complete);

  boost::beast::tcp_stream stream_;
  // Unparsed bytes only (a header, a chunk header, a trailer, the start of a body): bounded
  // (header_limit + one 64 KiB read) so no client can make it grow.
  boost::beast::flat_buffer buffer_;
  std::function<void(uint64_t, boost::beast::string_view, boost::beast::error_code&)>
      chunk_header_cb_;  // OnChunkHeader, stored: Beast's parsers keep a reference to it
  std::shared_ptr<Request> pending_;  // admitted, waiting for its body (or for Handle())
  size_t body_limit_ = 0;             // the body limit of the request being read
  ServerCore& core_;
  std::string peer_;
  std::optional<HeaderParser> header_parser_;
  std::optional<Parser> parser_;
  std::optional<StreamParser> stream_parser_;  // a streaming route's request
  std::optional<uint64_t> body_length_;        // its Content-Length
  bool raw_body_ = false;                      // read from the socket, not through the parser
  uint64_t body_left_ = 0;                     // raw_body_: bytes not read yet
  bool expect_continue_ = false;               // its client waits for "100 Continue"
  bool reading_ = false;                       // waiting for or reading a request
  bool closed_ = false;
  // The exchange in progress.
  std::string method_, path_;
  bool head_ = false, keep_alive_ = false, responding_ = false, streaming_ = false;
  std::chrono::steady_clock::time_point started_;
  int status_ = 0;
  uint64_t sent_ = 0;
  std::optional<uint64_t> length_;
  std::string body_;
  std::shared_ptr<BodySource> source_;  // shared: Abort() cancels it while a worker reads
  std::vector<char> chunk_;             // written by the pulling worker, then by the strand
  // Whether the body goes out by sendfile(2): decided by the first pull (NextFileSpan), then
  // used by the pulling worker and the strand in turn, like chunk_. send_fd_: the worker's
  // duplicate of the socket for it (-1 until the first span), closed with the response.
  enum class FileSend : uint8_t { kUntried, kYes, kNo };
  FileSend file_send_ = FileSend::kNo;
  int send_fd_ = -1;
  FileSpan span_;                         // what is left of the span being sent
  bool send_blocked_ = false;             // the last SendFileSpan stopped at a full socket buffer
  boost::asio::steady_timer send_timer_;  // write_timeout while WaitWritable waits
  std::optional<StreamResponse> res_;
  std::optional<Serializer> sr_;
  std::vector<char> drain_;
  size_t drained_ = 0;
};

}  // namespace ferry::server
