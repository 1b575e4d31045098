#include "http/http_client.h"

#include <curl/curl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <span>
#include <unordered_map>

#include "base/log.h"
#include "base/mutex.h"
#include "base/strings.h"
#include "base/time_format.h"
#include "http/address_class.h"
#include "http/curl_error.h"
#include "http/stall_detector.h"

namespace ferry::http {

namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// State of one transfer, reached from curl's C callbacks. No exception may leave a callback.
struct Transfer {
  const Request* request = nullptr;
  const BodySink* sink = nullptr;
  const ResponseStart* on_start = nullptr;
  Response* response = nullptr;
  CURL* easy = nullptr;
  curl_socket_t sock = CURL_SOCKET_BAD;  // the connection's socket (for AckNow)
  // The body as pieces (Request::body_pieces, or Request::body as the one piece) and the upload
  // position within them.
  std::span<const std::string_view> pieces;
  size_t piece = 0, piece_offset = 0;
  size_t max_error_body = 0;
  Status sink_status;
  bool status_known = false;
  bool deliver = false;  // body goes to the sink

  // The minimum-progress rule, for data transfers only.
  std::optional<StallDetector> stall;
  std::chrono::steady_clock::time_point started;
  std::chrono::steady_clock::duration in_callbacks{0};  // time the caller's sink held us
  uint64_t moved = 0;                                   // bytes both ways, monotonic
  uint64_t last_dlnow = 0, last_ulnow = 0;
  bool stalled = false;
  const std::atomic<bool>* cancel = nullptr;
  bool cancelled = false;
  std::string refused_address;  // public_addresses_only: the address not connected to
};

// Measures the time spent in the caller's callbacks: a slow consumer (a full queue, --bwlimit,
// a slow disk) is not a stalled network.
class CallbackTimer final {
 public:
  explicit CallbackTimer(Transfer* t) : t_(t), start_(std::chrono::steady_clock::now()) {}
  ~CallbackTimer() { t_->in_callbacks += std::chrono::steady_clock::now() - start_; }
  CallbackTimer(const CallbackTimer&) = delete;
  CallbackTimer& operator=(const CallbackTimer&) = delete;

 private:
  Transfer* t_;
  std::chrono::steady_clock::time_point start_;
};

// curl's progress callback (at least once a second, and after each chunk). curl restarts its
// counters when it follows a redirect, so the bytes moved are summed here.
int OnProgress(void* user, curl_off_t, curl_off_t dlnow, curl_off_t, curl_off_t ulnow) {
  auto* t = static_cast<Transfer*>(user);
  if (t->cancel != nullptr && t->cancel->load()) {
    t->cancelled = true;
    return 1;  // aborts with CURLE_ABORTED_BY_CALLBACK
  }
  if (!t->stall) return 0;
  auto advance = [&](uint64_t& last, curl_off_t now) {
    uint64_t v = now > 0 ? static_cast<uint64_t>(now) : 0;
    t->moved += v >= last ? v - last : v;
    last = v;
  };
  advance(t->last_dlnow, dlnow);
  advance(t->last_ulnow, ulnow);
  auto active = std::chrono::steady_clock::now() - t->started - t->in_callbacks;
  if (t->stall->Update(std::chrono::duration_cast<std::chrono::milliseconds>(active), t->moved)) {
    t->stalled = true;
    return 1;  // aborts with CURLE_ABORTED_BY_CALLBACK
  }
  return 0;
}

// ACKs what the server sent so far at once. Servers that write a response's headers and body
// separately with Nagle on (Ceph RGW's beast frontend does) hold the body until the client ACKs
// the headers, and on a kept-alive connection Linux delays that ACK by up to 40 ms: measured
// +42 ms on every small GET. Setting TCP_QUICKACK sends the pending ACK now (Linux only).
void AckNow(curl_socket_t sock) {
#ifdef TCP_QUICKACK
  if (sock == CURL_SOCKET_BAD) return;
  int one = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
#else
  (void)sock;
#endif
}

// A new connection's socket (libcurl reports reused ones only after a transfer).
int OnSockopt(void* user, curl_socket_t sock, curlsocktype) {
  static_cast<Transfer*>(user)->sock = sock;
  return CURL_SOCKOPT_OK;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  std::string_view line(data, size * n);
  if (StartsWith(line, "HTTP/")) {  // a new status line (100-continue, redirect): reset
    t->response->headers.clear();
    return size * n;
  }
  if (line == "\r\n" || line == "\n") AckNow(t->sock);  // end of the headers
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    t->response->headers.push_back(
        {ToLower(Trim(line.substr(0, colon))), std::string(Trim(line.substr(colon + 1)))});
  }
  return size * n;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t len = size * n;
  if (!t->status_known) {
    curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &t->response->status);
    t->status_known = true;
    t->deliver = t->sink != nullptr && *t->sink && t->response->ok();
    if (t->deliver && t->on_start != nullptr && *t->on_start) {
      CallbackTimer timer(t);
      t->sink_status = (*t->on_start)(*t->response);
      if (!t->sink_status.ok()) return 0;
    }
  }
  if (t->deliver) {
    CallbackTimer timer(t);
    try {
      t->sink_status = (*t->sink)(std::string_view(data, len));
    } catch (...) {
      t->sink_status = Internal("exception in body sink");
    }
    return t->sink_status.ok() ? len : 0;  // 0 aborts with CURLE_WRITE_ERROR
  }
  std::string& body = t->response->body;
  bool is_error = !t->response->ok();
  size_t room =
      is_error ? (t->max_error_body > body.size() ? t->max_error_body - body.size() : 0) : len;
  body.append(data, std::min(len, room));
  return len;
}

size_t OnRead(char* buffer, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  size_t room = size * n, len = 0;
  while (room > 0 && t->piece < t->pieces.size()) {
    std::string_view p = t->pieces[t->piece].substr(t->piece_offset);
    size_t k = std::min(room, p.size());
    std::copy_n(p.data(), k, buffer + len);
    len += k;
    room -= k;
    t->piece_offset += k;
    if (t->piece_offset == t->pieces[t->piece].size()) {
      ++t->piece;
      t->piece_offset = 0;
    }
  }
  return len;
}

int OnSeek(void* user, curl_off_t offset, int origin) {
  auto* t = static_cast<Transfer*>(user);
  if (origin != SEEK_SET || offset < 0) return CURL_SEEKFUNC_CANTSEEK;
  // The piece holding that offset.
  size_t left = static_cast<size_t>(offset), piece = 0;
  while (piece < t->pieces.size() && left >= t->pieces[piece].size()) {
    left -= t->pieces[piece].size();
    ++piece;
  }
  if (piece == t->pieces.size() && left > 0) return CURL_SEEKFUNC_CANTSEEK;  // past the end
  t->piece = piece;
  t->piece_offset = left;
  return CURL_SEEKFUNC_OK;
}

// Creates each connection's socket, refusing an address that is not public when the request
// says so (curl then fails with CURLE_COULDNT_CONNECT, and Send() says why).
curl_socket_t OnOpenSocket(void* user, curlsocktype purpose, curl_sockaddr* address) {
  auto* t = static_cast<Transfer*>(user);
  if (purpose == CURLSOCKTYPE_IPCXN && t->request->public_addresses_only &&
      !IsPublicAddress(&address->addr)) {
    t->refused_address = AddressText(&address->addr);
    return CURL_SOCKET_BAD;
  }
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

int OnDebug(CURL*, curl_infotype type, char* data, size_t size, void*) {
  const char* prefix = nullptr;
  switch (type) {
    case CURLINFO_TEXT:
      prefix = "* ";
      break;
    case CURLINFO_HEADER_OUT:
      prefix = "> ";
      break;
    case CURLINFO_HEADER_IN:
      prefix = "< ";
      break;
    default:
      return 0;  // bodies are never traced
  }
  std::string_view text(data, size);
  for (auto line : Split(text, '\n')) {
    line = Trim(line);
    if (line.empty()) continue;
    if (type == CURLINFO_HEADER_OUT) {
      Log(LogLevel::kTrace, "http {}{}", prefix, RedactRequestLine(line));
    } else {
      Log(LogLevel::kTrace, "http {}{}", prefix, line);
    }
  }
  return 0;
}

}  // namespace

std::optional<std::string_view> Response::Header(std::string_view lower_name) const {
  for (const auto& h : headers) {
    if (h.name == lower_name) return std::string_view(h.value);
  }
  return std::nullopt;
}

struct Client::Pool {
  Mutex mu;
  std::vector<CURL*> idle GUARDED_BY(mu);
  // Each handle's connection socket, if kept alive.
  std::unordered_map<CURL*, curl_socket_t> last_socket GUARDED_BY(mu);

  CURL* Acquire() {
    {
      MutexLock lock(mu);
      if (!idle.empty()) {
        CURL* e = idle.back();
        idle.pop_back();
        curl_easy_reset(e);  // keeps live connections and DNS cache
        return e;
      }
    }
    return curl_easy_init();
  }
  void Release(CURL* e, curl_socket_t sock) {
    MutexLock lock(mu);
    idle.push_back(e);
    last_socket[e] = sock;
  }
  curl_socket_t LastSocket(CURL* e) {
    MutexLock lock(mu);
    auto it = last_socket.find(e);
    return it == last_socket.end() ? CURL_SOCKET_BAD : it->second;
  }
  ~Pool() {
    MutexLock lock(mu);
    for (CURL* e : idle) curl_easy_cleanup(e);
  }
};

Client::Client(ClientOptions options) : options_(std::move(options)), pool_(new Pool) {
  GlobalInit();
}

Client::~Client() = default;

Result<Response> Client::Send(const Request& request, const BodySink& sink,
                              const ResponseStart& on_start) {
  CURL* easy = pool_->Acquire();
  if (easy == nullptr) return Internal("curl_easy_init failed");
  Response response;
  Transfer t{.request = &request,
             .sink = &sink,
             .on_start = &on_start,
             .response = &response,
             .easy = easy,
             .max_error_body = static_cast<size_t>(options_.max_error_body)};
  if (request.body_pieces.empty()) {
    t.pieces = std::span(&request.body, 1);
  } else {
    t.pieces = request.body_pieces;
  }
  size_t body_size = 0;
  for (std::string_view p : t.pieces) body_size += p.size();
  char errbuf[CURL_ERROR_SIZE] = {0};

  curl_easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_PATH_AS_IS, 1L);  // keys may contain "//", "./", "../"
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME,
                   static_cast<long>(options_.low_speed_time.count()));
  bool watch_stall = request.data_transfer && options_.low_speed_limit > 0;
  if (watch_stall) {
    t.stall.emplace(options_.low_speed_limit, options_.low_speed_time);
    t.started = std::chrono::steady_clock::now();
  }
  t.cancel = options_.cancel;
  if (watch_stall || t.cancel != nullptr) {
    curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, OnProgress);
    curl_easy_setopt(easy, CURLOPT_XFERINFODATA, &t);
    curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
  } else {
    curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 1L);
  }
  auto total = options_.total_timeout;
  if (request.timeout.count() > 0 && (total.count() == 0 || request.timeout < total)) {
    total = request.timeout;
  }
  if (total.count() > 0)
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, static_cast<long>(total.count()));
  // Larger buffers cut per-chunk overhead on multi-hundred-MB/s transfers.
  curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, 256L * 1024);
  curl_easy_setopt(easy, CURLOPT_UPLOAD_BUFFERSIZE, 1024L * 1024);
  curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
  t.sock = pool_->LastSocket(easy);
  curl_easy_setopt(easy, CURLOPT_SOCKOPTFUNCTION, OnSockopt);
  curl_easy_setopt(easy, CURLOPT_SOCKOPTDATA, &t);
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, OnOpenSocket);
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, &t);
  if (!options_.ca_bundle.empty())
    curl_easy_setopt(easy, CURLOPT_CAINFO, options_.ca_bundle.c_str());
  if (options_.follow_redirects) {
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 5L);
  }
  if (options_.trace && LogEnabled(LogLevel::kTrace)) {
    curl_easy_setopt(easy, CURLOPT_DEBUGFUNCTION, OnDebug);
    curl_easy_setopt(easy, CURLOPT_VERBOSE, 1L);
  }
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &t);

  if (request.method == "HEAD") {
    curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
  } else if (request.send_body) {
    curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(easy, CURLOPT_READFUNCTION, OnRead);
    curl_easy_setopt(easy, CURLOPT_READDATA, &t);
    curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION, OnSeek);
    curl_easy_setopt(easy, CURLOPT_SEEKDATA, &t);
    curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body_size));
    if (request.method != "PUT")
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  } else if (request.method != "GET") {
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }

  curl_slist* headers = nullptr;
  for (const auto& h : request.headers) {
    std::string line = h.name + ": " + h.value;
    headers = curl_slist_append(headers, line.c_str());
  }
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);

  CURLcode rc = curl_easy_perform(easy);
  if (response.status == 0) curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &response.status);
  curl_slist_free_all(headers);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, nullptr);
  curl_socket_t sock = CURL_SOCKET_BAD;
  if (curl_easy_getinfo(easy, CURLINFO_ACTIVESOCKET, &sock) != CURLE_OK) sock = CURL_SOCKET_BAD;
  pool_->Release(easy, sock);

  if (!t.sink_status.ok()) return t.sink_status;
  if (t.cancelled) return Status(StatusCode::kCancelled, "interrupted");
  if (rc != CURLE_OK && !t.refused_address.empty()) {
    return Status(StatusCode::kPermissionDenied,
                  "refused to connect to " + t.refused_address +
                      ": not a public address, and the host was named by an upstream answer, "
                      "not by the operator");
  }
  if (t.stalled) {
    return Status(StatusCode::kDeadlineExceeded,
                  "stalled (under " + FormatSpeed(options_.low_speed_limit) + " for " +
                      std::to_string(options_.low_speed_time.count()) + " s)",
                  ErrorDetail{.stalled = true});
  }
  if (rc != CURLE_OK) return CurlError(rc, errbuf);
  // An empty 2xx body never reached OnBody: the caller still gets its headers once.
  if (!t.status_known && response.ok() && sink && on_start) {
    FERRY_RETURN_IF_ERROR(on_start(response));
  }
  return response;
}

std::optional<std::chrono::milliseconds> RetryAfter(const Response& response,
                                                    std::chrono::system_clock::time_point now) {
  auto v = response.Header("retry-after");
  if (!v) return std::nullopt;
  std::string_view value = Trim(*v);
  if (auto secs = ParseUint64(value)) {
    return std::chrono::milliseconds(std::chrono::seconds(std::min<uint64_t>(*secs, 86400)));
  }
  if (auto when = ParseHttpDate(value)) {
    auto d = std::chrono::duration_cast<std::chrono::milliseconds>(*when - now);
    return std::max(d, std::chrono::milliseconds(0));
  }
  return std::nullopt;
}

std::string FormatSpeed(uint64_t bytes_per_second) {
  if (bytes_per_second >= (1u << 20) && bytes_per_second % (1u << 20) == 0) {
    return std::to_string(bytes_per_second >> 20) + " MiB/s";
  }
  if (bytes_per_second >= 1024 && bytes_per_second % 1024 == 0) {
    return std::to_string(bytes_per_second >> 10) + " KiB/s";
  }
  return std::to_string(bytes_per_second) + " B/s";
}

std::string RangeHeaderValue(uint64_t from, std::optional<uint64_t> end) {
  std::string v = "bytes=" + std::to_string(from) + "-";
  if (end) v += std::to_string(*end - 1);
  return v;
}

std::string RedactRequestLine(std::string_view line) {
  // S3 API parameters Ferry itself sends; they say what a request does and hold no secret.
  static constexpr std::string_view kShown[] = {
      "uploadId",  "partNumber", "uploads",           "list-type",          "prefix",
      "delimiter", "max-keys",   "start-after",       "encoding-type",      "fetch-owner",
      "delete",    "tagging",    "versionId",         "part-number-marker", "max-parts",
      "location",  "versioning", "continuation-token"};
  size_t q = line.find('?');
  size_t sp = line.find(' ');
  if (q == std::string_view::npos || sp == std::string_view::npos || q < sp) {
    return std::string(line);
  }
  size_t end = line.find(' ', q);
  if (end == std::string_view::npos) end = line.size();
  std::string out(line.substr(0, q + 1));
  bool first = true;
  for (auto pair : Split(line.substr(q + 1, end - q - 1), '&')) {
    if (!first) out.push_back('&');
    first = false;
    std::string_view name = pair.substr(0, pair.find('='));
    bool shown = std::find(std::begin(kShown), std::end(kShown), name) != std::end(kShown);
    if (shown || name.size() == pair.size()) {
      out.append(pair);
    } else {
      out.append(name).append("=[REDACTED]");
    }
  }
  out.append(line.substr(end));
  return out;
}

std::string DisplayUrl(std::string_view url) {
  std::string_view u = url.substr(0, url.find('?'));
  size_t scheme = u.find("://");
  if (scheme != std::string_view::npos) {
    size_t host_start = scheme + 3;
    size_t path = u.find('/', host_start);
    size_t at = u.find('@', host_start);
    if (at != std::string_view::npos && (path == std::string_view::npos || at < path)) {
      return std::string(u.substr(0, host_start)) + std::string(u.substr(at + 1));
    }
  }
  return std::string(u);
}

}  // namespace ferry::http
