#include "server/session.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <limits>

#include "base/log.h"
#include "base/strings.h"
#include "server/browser_policy.h"
#include "server/path.h"

namespace ferry::server {

namespace {
// Beast reads at most 64 KiB per socket read into a flat_buffer.
constexpr size_t kBodyReadBuffer = 64 * 1024;

// The handler's error when the body cannot arrive (both ways of reading it say the same).
Status BodyReadFailed(std::string_view why) {
  return Unavailable("reading the request body failed: " + std::string(why));
}
std::string ClosedEarly(uint64_t left) {
  return "the client closed the connection " + std::to_string(left) + " bytes before its end";
}
}  // namespace

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

ServerCore::ServerCore(ServerOptions opts, const Router& r, std::shared_ptr<const AccessPolicy> p)
    : options(std::move(opts)),
      router(r),
      policy(std::move(p)),
      metrics(options.metrics ? options.metrics : std::make_shared<MetricsRegistry>()),
      workers(std::make_unique<WorkerPool>(options.max_workers)),
      open_connections(metrics->GetGauge("ferry_http_connections_open", "Open client connections")),
      active_streams(metrics->GetGauge("ferry_http_streams_active",
                                       "Responses whose body is being streamed now")),
      bytes_sent(metrics->GetCounter("ferry_http_response_body_bytes_total",
                                     "Response body bytes written to clients")) {}

Counter& ServerCore::RequestsWithStatus(int status) {
  return metrics->GetCounter("ferry_http_requests_total", "HTTP requests answered, by status",
                             {{"code", std::to_string(status)}});
}

void ServerCore::Register(const std::shared_ptr<Session>& s) {
  MutexLock lock(mu);
  sessions.emplace(s.get(), s);
}

void ServerCore::Unregister(Session* s) {
  MutexLock lock(mu);
  sessions.erase(s);
  if (sessions.empty()) cv.NotifyAll();
}

std::vector<std::shared_ptr<Session>> ServerCore::Sessions() {
  MutexLock lock(mu);
  std::vector<std::shared_ptr<Session>> out;
  for (auto& [p, w] : sessions) {
    if (auto s = w.lock()) out.push_back(std::move(s));
  }
  return out;
}

bool ServerCore::WaitNoSessions(std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(mu);
  auto left = deadline - std::chrono::steady_clock::now();
  if (left < std::chrono::steady_clock::duration::zero()) left = {};
  return cv.WaitFor(lock, left, [this]() REQUIRES(mu) { return sessions.empty(); });
}

Session::Session(tcp::socket socket, ServerCore& core)
    : stream_(std::move(socket)),
      buffer_(core.options.header_limit + kBodyReadBuffer),
      chunk_header_cb_([this](uint64_t size, beast::string_view ext, beast::error_code& ec) {
        OnChunkHeader(size, std::string_view(ext.data(), ext.size()), ec);
      }),
      core_(core),
      send_timer_(stream_.get_executor()) {
  beast::error_code ec;
  auto ep = stream_.socket().remote_endpoint(ec);
  peer_ = ec ? "?"
             : (ep.address().is_v6() ? "[" + ep.address().to_string() + "]"
                                     : ep.address().to_string()) +
                   ":" + std::to_string(ep.port());
  core_.open_connections.Add(1);
}

Session::~Session() {
  if (send_fd_ >= 0) ::close(send_fd_);
  core_.open_connections.Add(-1);
  core_.Unregister(this);
}

void Session::Start() {
  core_.Register(shared_from_this());
  asio::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->DoRead(); });
}

void Session::CloseIdle() {
  asio::post(stream_.get_executor(), [self = shared_from_this()] {
    // Between requests: nothing of a next request has arrived. A request partly received is
    // read, answered (with Connection: close) and then the connection ends.
    if (self->reading_ && self->buffer_.size() == 0 && self->header_parser_ &&
        !self->header_parser_->got_some()) {
      self->Close();
    }
  });
}

void Session::Abort() {
  asio::post(stream_.get_executor(), [self = shared_from_this()] { self->Close(); });
}

void Session::DoRead() {
  if (closed_) return;
  if (core_.stopping) return Close();
  parser_.reset();
  stream_parser_.reset();
  header_parser_.emplace();
  header_parser_->header_limit(static_cast<uint32_t>(core_.options.header_limit));
  // The body limit depends on the route (streaming routes have none): checked in OnHeader.
  header_parser_->body_limit(std::numeric_limits<uint64_t>::max());
  reading_ = true;
  stream_.expires_after(core_.options.read_timeout);
  http::async_read_header(
      stream_, buffer_, *header_parser_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
}

bool Session::RespondToReadError(beast::error_code ec) {
  if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
    Respond(ErrorResponse(431, "request headers (or trailers, or a chunk header) exceed " +
                                   std::to_string(core_.options.header_limit) + " bytes"));
    return true;
  }
  if (ec == http::error::body_limit) {
    Respond(ErrorResponse(
        413, body_limit_ == 0 ? "this request takes no body"
                              : "request body exceeds " + std::to_string(body_limit_) + " bytes"));
    return true;
  }
  if (ec && ec.category() == http::make_error_code(http::error::bad_target).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message) {
    Respond(ErrorResponse(400, "malformed HTTP request: " + ec.message()));
    return true;
  }
  return false;
}

void Session::OnChunkHeader(uint64_t size, std::string_view ext, beast::error_code& ec) {
  if (size != 0) return;
  // The last chunk. Beast calls this once it holds the whole trailer (it found the blank line
  // that ends it) and parses the trailer's fields after it: they are what follows the
  // extensions' end in buffer_, up to the first CRLF CRLF. (Beast applies no limit of its own
  // there, and a field past 64 KiB made it throw.)
  auto data = buffer_.cdata();
  const char* begin = static_cast<const char*>(data.data());
  const char* end = begin + data.size();
  const char* p = ext.data() + ext.size();
  if (p < begin || p > end) return;  // not in our buffer: buffer_'s own bound still holds
  std::string_view rest(p, static_cast<size_t>(end - p));
  size_t trailer = std::min(rest.find("\r\n\r\n"), rest.size());
  if (trailer > core_.options.header_limit) ec = http::error::header_limit;
}

std::optional<Response> Session::AdmitHeader() {
  auto& h = header_parser_->get();
  method_ = std::string(h.method_string());
  head_ = h.method() == http::verb::head;
  // Framing: "chunked" is the only transfer coding (RFC 9112 6.1: 501 for one the server does
  // not understand). Beast would read "xchunked" as no body at all and the body as the next
  // request: the way requests are smuggled past a proxy that reads it otherwise.
  if (h.count(http::field::transfer_encoding) > 0) {
    auto te = h[http::field::transfer_encoding];
    if (h.count(http::field::transfer_encoding) > 1 ||
        !beast::iequals(Trim(std::string_view(te.data(), te.size())), "chunked")) {
      Response r = ErrorResponse(501, "Transfer-Encoding '" + std::string(te.substr(0, 100)) +
                                          "' is not supported: only chunked");
      r.close = true;
      return r;
    }
  }
  auto target = ParseTarget(h.target());
  if (!target.ok()) {
    path_ = "(invalid target)";
    Response r = ErrorResponse(400, target.status().message());
    r.close = true;
    return r;
  }
  path_ = target->path;
  auto req = std::make_shared<Request>();
  req->method = method_;
  req->path = std::move(target->path);
  req->raw_query = std::move(target->raw_query);
  req->query = std::move(target->query);
  for (const auto& f : h) req->headers.Add(std::string(f.name_string()), std::string(f.value()));
  req->peer = peer_;
  const Access access = core_.router.AccessFor(req->method, req->path);
  if (auto refused = Admit(*req, access, *core_.policy)) return refused;
  // How much body this request may send: none to a public route (nothing there takes one), a
  // little from a client without a token on a server with tokens.
  body_limit_ = core_.options.body_limit;
  if (access == Access::kPublic) {
    body_limit_ = 0;
  } else if (core_.policy->AuthRequired() && req->principal == Principal::kAnonymous) {
    body_limit_ = std::min(body_limit_, core_.options.anonymous_body_limit);
  }
  pending_ = std::move(req);
  return std::nullopt;
}

void Session::OnHeader(beast::error_code ec) {
  if (closed_) return;
  method_ = "-";
  path_ = "-";
  head_ = false;
  keep_alive_ = false;
  pending_.reset();
  started_ = std::chrono::steady_clock::now();
  if (ec) {
    reading_ = false;
    if (!RespondToReadError(ec)) Close();  // peer closed, timeout, reset
    return;
  }
  if (auto refused = AdmitHeader()) {
    // Answered before the body is read (the connection then closes: see Respond()).
    reading_ = false;
    return Respond(std::move(*refused));
  }
  if (core_.router.StreamsBody(method_, pending_->path)) {
    reading_ = false;
    auto length = header_parser_->content_length();
    body_length_ = length ? std::optional<uint64_t>(*length) : std::nullopt;
    auto& h = header_parser_->get();
    auto expect = h[http::field::expect];
    expect_continue_ = beast::iequals(expect, "100-continue");
    raw_body_ = body_length_.has_value() && !header_parser_->chunked();
    body_left_ = raw_body_ ? *body_length_ : 0;
    stream_parser_.emplace(std::move(*header_parser_));
    header_parser_.reset();
    stream_parser_->body_limit(std::numeric_limits<uint64_t>::max());
    stream_parser_->on_chunk_header(chunk_header_cb_);
    // A chunked body's socket reads go through buffer_ and Beast sizes them by its free
    // capacity (512 bytes after a small header): make room for 64 KiB reads.
    if (!raw_body_) buffer_.reserve(kBodyReadBuffer);
    return Handle();
  }
  auto length = header_parser_->content_length();
  if (length && *length > body_limit_) {
    reading_ = false;
    RespondToReadError(http::error::body_limit);
    return;
  }
  parser_.emplace(std::move(*header_parser_));
  header_parser_.reset();
  parser_->body_limit(body_limit_);
  parser_->on_chunk_header(chunk_header_cb_);
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
}

void Session::OnRead(beast::error_code ec) {
  reading_ = false;
  if (closed_) return;
  if (ec) {
    if (!RespondToReadError(ec)) Close();  // peer closed, timeout (the stream is closed), reset
    return;
  }
  Handle();
}

void Session::BodyPull::Finish(Status s, size_t k) {
  MutexLock lock(mu);
  done = true;
  status = std::move(s);
  n = k;
  cv.NotifyAll();
}

int Session::DupForBody() {
  if (!raw_body_) return -1;
  return ::fcntl(stream_.socket().native_handle(), F_DUPFD_CLOEXEC, 0);
}

Result<size_t> Session::ReadRawDirect(char* buf, size_t n, int fd) {
  const size_t want = static_cast<size_t>(std::min<uint64_t>(n, body_left_));
  size_t filled = 0;
  while (filled < want) {
    ssize_t k = ::recv(fd, buf + filled, want - filled, MSG_DONTWAIT);
    if (k > 0) {
      filled += static_cast<size_t>(k);
      body_left_ -= static_cast<uint64_t>(k);
      continue;
    }
    if (k == 0) {
      return BodyReadFailed(ClosedEarly(body_left_));
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return BodyReadFailed(std::strerror(errno));
    }
    struct pollfd p = {.fd = fd, .events = POLLIN, .revents = 0};
    int r = ::poll(&p, 1, static_cast<int>(core_.options.read_timeout.count()));
    if (r == 0) return BodyReadFailed("timed out");
    if (r < 0 && errno != EINTR) {
      return BodyReadFailed(std::strerror(errno));
    }
  }
  return filled;
}

Result<size_t> Session::ReadBody(char* buf, size_t n, int direct_fd) {
  // The strand touches buffer_ and expect_continue_ only inside a read this thread posted and
  // waited for, so reading them here is ordered after it.
  if (direct_fd >= 0 && raw_body_ && !expect_continue_ && buffer_.size() == 0) {
    return ReadRawDirect(buf, n, direct_fd);
  }
  auto pull = std::make_shared<BodyPull>();
  asio::post(stream_.get_executor(),
             [self = shared_from_this(), buf, n, pull] { self->StartBodyRead(buf, n, 0, pull); });
  MutexLock lock(pull->mu);
  // The strand's read ends within read_timeout (write_timeout for a 100 Continue), unless the
  // server has stopped its I/O threads; then the posted read never runs (nor touches `buf`).
  auto limit = core_.options.read_timeout + core_.options.write_timeout + std::chrono::seconds(10);
  if (!pull->cv.WaitFor(lock, limit, [&]() REQUIRES(pull->mu) { return pull->done; })) {
    return Status(StatusCode::kDeadlineExceeded, "the server stopped while reading the body");
  }
  if (!pull->status.ok()) return pull->status;
  return pull->n;
}

// On the strand: reads body bytes into buf[filled, n) (which stays valid: the handler's worker
// waits in ReadBody until `pull` is finished) until it is full or the body has ended, so a
// handler's pull crosses threads once per buffer, not once per socket read.
void Session::StartBodyRead(char* buf, size_t n, size_t filled, std::shared_ptr<BodyPull> pull) {
  if (closed_ || !stream_parser_) {
    return pull->Finish(Status(StatusCode::kCancelled, "the connection was closed"), 0);
  }
  if (BodyDone() || filled == n) return pull->Finish(Status(), filled);
  if (expect_continue_) {
    expect_continue_ = false;
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    stream_.expires_after(core_.options.write_timeout);
    return asio::async_write(
        stream_, asio::buffer(kContinue.data(), kContinue.size()),
        [self = shared_from_this(), buf, n, pull](beast::error_code ec, size_t) {
          if (ec) {
            self->Close();
            return pull->Finish(Unavailable("sending 100 Continue failed: " + ec.message()), 0);
          }
          self->StartBodyRead(buf, n, 0, pull);
        });
  }
  if (raw_body_) return ReadRawBody(buf, n, filled, pull);
  stream_parser_->get().body().data = buf + filled;
  stream_parser_->get().body().size = n - filled;
  stream_.expires_after(core_.options.read_timeout);
  http::async_read_some(stream_, buffer_, *stream_parser_,
                        [self = shared_from_this(), buf, n, pull](beast::error_code ec, size_t) {
                          if (ec == http::error::need_buffer) ec = {};
                          if (ec) {
                            return pull->Finish(BodyReadFailed(ec.message()), 0);
                          }
                          size_t now = n - self->stream_parser_->get().body().size;
                          self->StartBodyRead(buf, n, now, pull);
                        });
}

bool Session::BodyDone() const { return raw_body_ ? body_left_ == 0 : stream_parser_->is_done(); }

// A body of known length: first the bytes that came with the header (in buffer_), then socket
// reads into buf itself, each as large as what is left of buf and of the body.
void Session::ReadRawBody(char* buf, size_t n, size_t filled, std::shared_ptr<BodyPull> pull) {
  if (buffer_.size() > 0) {
    size_t k = static_cast<size_t>(
        std::min<uint64_t>({buffer_.size(), static_cast<uint64_t>(n - filled), body_left_}));
    std::memcpy(buf + filled, buffer_.data().data(), k);
    buffer_.consume(k);
    body_left_ -= k;
    return StartBodyRead(buf, n, filled + k, std::move(pull));
  }
  size_t want = static_cast<size_t>(std::min<uint64_t>(n - filled, body_left_));
  stream_.expires_after(core_.options.read_timeout);
  stream_.async_read_some(asio::buffer(buf + filled, want), [self = shared_from_this(), buf, n,
                                                             filled,
                                                             pull](beast::error_code ec, size_t k) {
    if (ec) {
      return pull->Finish(
          BodyReadFailed(ec == asio::error::eof ? ClosedEarly(self->body_left_) : ec.message()), 0);
    }
    self->body_left_ -= k;
    self->StartBodyRead(buf, n, filled + k, pull);
  });
}

void Session::Handle() {
  const bool streaming = stream_parser_.has_value();
  keep_alive_ = streaming ? stream_parser_->keep_alive() : parser_->keep_alive();
  std::shared_ptr<Request> req = std::move(pending_);
  if (streaming) {
    // Holds the session: only while the handler runs (the Request is dropped after it).
    class Reader final : public BodyReader {
     public:
      explicit Reader(std::shared_ptr<Session> s) : s_(std::move(s)), fd_(s_->DupForBody()) {}
      ~Reader() override {
        if (fd_ >= 0) ::close(fd_);
      }
      Result<size_t> Read(char* buf, size_t n) override { return s_->ReadBody(buf, n, fd_); }
      std::optional<uint64_t> content_length() const override { return s_->body_length(); }

     private:
      std::shared_ptr<Session> s_;
      int fd_;  // DupForBody()
    };
    req->body_stream = std::make_shared<Reader>(shared_from_this());
  } else {
    req->body = std::move(parser_->get().body());
    parser_.reset();
  }
  core_.workers->Submit([self = shared_from_this(), req] {
    Response r;
    try {
      r = self->core_.router.Dispatch(std::move(*req));
    } catch (const std::exception& e) {
      Log(LogLevel::kError, "serve: handler for {} {} failed: {}", self->method_, self->path_,
          e.what());
      r = ErrorResponse(500, "internal error in the handler");
    }
    asio::post(self->stream_.get_executor(),
               [self, r = std::move(r)]() mutable { self->Respond(std::move(r)); });
  });
}

// Error messages name what failed; some layers name it by its place on the server's disk.
void Session::ScrubPrivatePaths(Response& r) const {
  for (const std::string& p : core_.options.private_paths) {
    if (p.size() < 2) continue;  // "/" would mangle every message
    auto scrub = [&](std::string& text) {
      for (size_t at = text.find(p); at != std::string::npos; at = text.find(p, at)) {
        text.replace(at, p.size(), "<data>");
        at += 6;
      }
    };
    scrub(r.body);
    if (auto m = r.headers.Get("X-Error-Message")) {
      std::string v(*m);
      scrub(v);
      r.headers.Set("X-Error-Message", std::move(v));
    }
  }
}

void Session::Respond(Response r) {
  if (closed_) return;
  responding_ = true;
  status_ = r.status;
  core_.RequestsWithStatus(status_).Add(1);
  sent_ = 0;
  // A streaming body the handler did not read to its end cannot be skipped reliably.
  const bool unread_body = stream_parser_ && !BodyDone();
  stream_parser_.reset();
  raw_body_ = false;
  body_left_ = 0;
  if (core_.stopping || r.close || unread_body || status_ == 400 || status_ == 413 ||
      status_ == 431) {
    keep_alive_ = false;  // after a bad request the rest of the stream cannot be trusted
  }
  for (const char* h : {"Content-Length", "Transfer-Encoding", "Connection"}) r.headers.Remove(h);
  AddSecurityHeaders(r.headers);
  if (status_ >= 400) ScrubPrivatePaths(r);
  res_.emplace();
  res_->version(11);
  res_->result(static_cast<unsigned>(status_));
  for (const auto& [k, v] : r.headers.fields()) res_->insert(k, v);
  res_->set(http::field::server, "ferry");
  res_->keep_alive(keep_alive_);
  length_.reset();
  file_send_ = FileSend::kNo;
  if (r.stream) {
    source_ = std::move(r.stream);
    length_ = r.content_length;
    // A body of known length may go out by sendfile (chunked framing needs the serializer).
    if (length_ && !head_) file_send_ = FileSend::kUntried;
    if (length_) {
      res_->content_length(*length_);
    } else if (!head_) {
      res_->chunked(true);
    }
  } else {
    body_ = std::move(r.body);
    length_ = body_.size();
    // 204 and 304 carry no body and (204) must not carry Content-Length (RFC 9110 8.6).
    if (!(body_.empty() && (status_ == 204 || status_ == 304))) {
      res_->content_length(body_.size());
    }
  }
  res_->body().data = nullptr;
  res_->body().more = true;
  sr_.emplace(*res_);
  stream_.expires_after(core_.options.write_timeout);
  http::async_write_header(
      stream_, *sr_,
      [self = shared_from_this()](beast::error_code ec, size_t) { self->OnHeaderWritten(ec); });
}

void Session::OnHeaderWritten(beast::error_code ec) {
  if (ec) return Close();
  if (head_) return Finish();
  if (source_) {
    streaming_ = true;
    core_.active_streams.Add(1);
    return PullNext();
  }
  res_->body().data = body_.empty() ? nullptr : body_.data();
  res_->body().size = body_.size();
  res_->body().more = false;
  sent_ = body_.size();
  http::async_write(stream_, *sr_, [self = shared_from_this()](beast::error_code ec, size_t) {
    self->OnLastWritten(ec);
  });
}

namespace {
// At most this much of a file per sendfile pull: one hop to a worker and back per span.
constexpr size_t kFileSpanMax = 8u << 20;

// sendfile(2) has no MSG_NOSIGNAL: a peer that closed raises SIGPIPE in the sending thread. The
// workers block it (ferry's main ignores it too), so the send fails with EPIPE instead.
void BlockSigpipeInThisThread() {
  thread_local bool blocked = false;
  if (blocked) return;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  blocked = true;
}
}  // namespace

Result<size_t> Session::SendFileSpan(size_t want) {
  auto failed = [&](std::string_view why) {
    return Status(StatusCode::kUnavailable, "sending the body failed: " + std::string(why));
  };
  send_blocked_ = false;
  if (span_.length == 0) {
    FERRY_ASSIGN_OR_RETURN(span_, source_->NextFileSpan(want));
    if (span_.length == 0) return size_t{0};
    if (span_.length > want) {
      span_ = {};
      return Internal("body source returned a longer span than asked for");
    }
  }
  if (send_fd_ < 0) {
    // The strand has nothing in flight on the socket while a pull runs (see PullNext). A
    // duplicate, so a Close() on the strand cannot hand the number to another file meanwhile.
    send_fd_ = ::fcntl(stream_.socket().native_handle(), F_DUPFD_CLOEXEC, 0);
    if (send_fd_ < 0) return failed(std::strerror(errno));
  }
  BlockSigpipeInThisThread();
  size_t sent = 0;
  while (span_.length > 0) {
    off_t offset = static_cast<off_t>(span_.offset);
    // Non-blocking (the socket's mode): a full socket buffer hands the wait to the strand,
    // so a slow client holds no worker.
    ssize_t k = ::sendfile(send_fd_, span_.fd, &offset, span_.length);
    if (k > 0) {
      span_.offset += static_cast<uint64_t>(k);
      span_.length -= static_cast<size_t>(k);
      sent += static_cast<size_t>(k);
      continue;
    }
    if (k == 0) return Status(StatusCode::kDataLoss, "the body's file ended before its length");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      send_blocked_ = true;
      break;
    }
    return failed(std::strerror(errno));
  }
  return sent;
}

// On the strand: the socket buffer is full; the next span pull once it takes more, or the
// connection closed after write_timeout.
void Session::WaitWritable() {
  send_timer_.expires_after(core_.options.write_timeout);
  send_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec) self->Close();  // timed out; a cancelled timer is ec == operation_aborted
  });
  stream_.socket().async_wait(tcp::socket::wait_write,
                              [self = shared_from_this()](beast::error_code ec) {
                                self->send_timer_.cancel();
                                if (ec || self->closed_) return self->Close();
                                self->PullNext();
                              });
}

void Session::PullNext() {
  if (file_send_ != FileSend::kNo) {
    size_t want = static_cast<size_t>(
        std::min<uint64_t>(std::max(kFileSpanMax, core_.options.stream_chunk), *length_ - sent_));
    if (want == 0) return OnPulled(size_t{0});
    return core_.workers->Submit([self = shared_from_this(), want] {
      Result<size_t> n = Internal("body source threw");
      try {
        n = self->SendFileSpan(want);
      } catch (const std::exception& e) {
        n = Internal(std::string("body source threw: ") + e.what());
      }
      if (!n.ok() && n.status().code() == StatusCode::kUnimplemented &&
          self->file_send_ == FileSend::kUntried) {
        self->file_send_ = FileSend::kNo;  // no file behind it: Read() from now on
        return asio::post(self->stream_.get_executor(), [self] { self->PullNext(); });
      }
      self->file_send_ = FileSend::kYes;
      asio::post(self->stream_.get_executor(),
                 [self, n = std::move(n)]() mutable { self->OnSent(std::move(n)); });
    });
  }
  size_t want = core_.options.stream_chunk;
  if (length_) {
    if (sent_ >= *length_) return OnPulled(size_t{0});
    want = static_cast<size_t>(std::min<uint64_t>(want, *length_ - sent_));
  }
  if (chunk_.size() < want) chunk_.resize(core_.options.stream_chunk);
  core_.workers->Submit([self = shared_from_this(), want] {
    Result<size_t> n = Internal("body source threw");
    try {
      n = self->source_->Read(self->chunk_.data(), want);
    } catch (const std::exception& e) {
      n = Internal(std::string("body source threw: ") + e.what());
    }
    if (n.ok() && *n > want) n = Internal("body source returned more bytes than asked for");
    asio::post(self->stream_.get_executor(),
               [self, n = std::move(n)]() mutable { self->OnPulled(std::move(n)); });
  });
}

void Session::OnPulled(Result<size_t> n) {
  if (closed_) return;
  if (!n.ok()) {
    Log(LogLevel::kWarn, "serve: {} {}: response body failed after {} bytes: {}", method_, path_,
        sent_, n.status().message());
    return Close();  // the client sees a truncated body, never a wrong one
  }
  if (*n == 0) {
    if (length_ && sent_ < *length_) {
      Log(LogLevel::kWarn, "serve: {} {}: response body ended after {} of {} bytes", method_, path_,
          sent_, *length_);
      return Close();
    }
    res_->body().data = nullptr;
    res_->body().size = 0;
    res_->body().more = false;
    stream_.expires_after(core_.options.write_timeout);
    return http::async_write(
        stream_, *sr_,
        [self = shared_from_this()](beast::error_code ec, size_t) { self->OnLastWritten(ec); });
  }
  res_->body().data = chunk_.data();
  res_->body().size = *n;
  res_->body().more = true;
  stream_.expires_after(core_.options.write_timeout);
  http::async_write(stream_, *sr_,
                    [self = shared_from_this(), k = *n](beast::error_code ec, size_t) {
                      self->OnChunkWritten(ec, k);
                    });
}

// After a span went out by sendfile: the next one, or the end as OnPulled() ends any body.
void Session::OnSent(Result<size_t> n) {
  if (closed_) return;
  if (n.ok() && send_blocked_) {
    sent_ += *n;
    core_.bytes_sent.Add(*n);
    return WaitWritable();
  }
  if (!n.ok() || *n == 0) return OnPulled(std::move(n));
  sent_ += *n;
  core_.bytes_sent.Add(*n);
  PullNext();
}

void Session::OnChunkWritten(beast::error_code ec, size_t n) {
  if (ec == http::error::need_buffer) ec = {};
  if (ec) return Close();
  sent_ += n;
  core_.bytes_sent.Add(n);
  PullNext();
}

void Session::OnLastWritten(beast::error_code ec) {
  if (ec) return Close();
  if (!streaming_) core_.bytes_sent.Add(sent_);
  Finish();
}

void Session::Finish() {
  LogAccess(true);
  responding_ = false;
  if (streaming_) {
    streaming_ = false;
    core_.active_streams.Add(-1);
  }
  source_.reset();  // no worker holds it now: the last pull has returned
  if (send_fd_ >= 0) ::close(send_fd_);
  send_fd_ = -1;
  span_ = {};
  sr_.reset();
  res_.reset();
  body_.clear();
  if (!keep_alive_) return DrainAndClose();
  DoRead();
}

// Closing a socket with unread input makes the kernel send a reset, which can destroy the
// response the client has not read yet (a 413 for a body still being sent). So: send FIN, read
// and drop what still arrives for a moment, then close.
void Session::DrainAndClose() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  drain_.resize(16 * 1024);
  stream_.expires_after(std::chrono::seconds(2));
  stream_.async_read_some(asio::buffer(drain_),
                          [self = shared_from_this()](beast::error_code ec, size_t n) {
                            if (ec || self->drained_ + n > 4 * 1024 * 1024) return self->Close();
                            self->drained_ += n;
                            self->DrainAndClose();
                          });
}

void Session::Close() {
  if (closed_) return;
  closed_ = true;
  if (responding_) {
    LogAccess(false);
    responding_ = false;
  }
  if (streaming_) {
    streaming_ = false;
    core_.active_streams.Add(-1);
  }
  if (source_) source_->Cancel();
  send_timer_.cancel();
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.close();
}

void Session::LogAccess(bool complete) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  started_)
                .count();
  // Never the query string nor any header: both may carry secrets.
  Log(LogLevel::kInfo, "serve: {} {} {} {} {}B {}ms{}", peer_, method_, path_, status_, sent_, ms,
      complete ? "" : " (aborted)");
}

}  // namespace ferry::server
