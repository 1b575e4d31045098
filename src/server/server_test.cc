// The server with real sockets on 127.0.0.1 (house style 26: the server once with a socket).
// The client is plain POSIX sockets, so these tests do not trust Beast to check Beast.

#include "server/server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "base/strings.h"
#include "server/socket_test_util.h"

namespace ferry::server {
namespace {

using namespace std::chrono_literals;

char PatternByte(uint64_t i) { return static_cast<char>((i * 31 + (i >> 12)) & 0xff); }

// Produces `total` pattern bytes, at most `step` per Read, sleeping `delay` before each.
class PatternSource final : public BodySource {
 public:
  PatternSource(uint64_t total, size_t step, std::chrono::microseconds delay)
      : total_(total), step_(step), delay_(delay) {}
  Result<size_t> Read(char* buf, size_t n) override {
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    size_t k = static_cast<size_t>(std::min<uint64_t>({n, step_, total_ - pos_}));
    for (size_t i = 0; i < k; ++i) buf[i] = PatternByte(pos_ + i);
    pos_ += k;
    return k;
  }

 private:
  uint64_t total_, pos_ = 0;
  size_t step_;
  std::chrono::microseconds delay_;
};

// Blocks in Read() until Cancel(): a cache waiting for bytes that never come.
class BlockingSource final : public BodySource {
 public:
  explicit BlockingSource(std::atomic<int>* cancelled) : cancelled_(cancelled) {}
  Result<size_t> Read(char* buf, size_t) override {
    if (!first_) {
      first_ = true;
      buf[0] = 'x';
      return size_t{1};
    }
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] { return cancel_; });
    return Status(StatusCode::kCancelled, "cancelled");
  }
  void Cancel() override {
    {
      std::lock_guard lock(mu_);
      cancel_ = true;
    }
    cancelled_->fetch_add(1);
    cv_.notify_all();
  }

 private:
  std::atomic<int>* cancelled_;
  bool first_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  bool cancel_ = false;
};

// A body in a file: spans of at most `step` bytes (BodySource::NextFileSpan), or Read() when
// the server asks for it (a chunked response). `claimed` may pass the file's end.
class FileSource final : public BodySource {
 public:
  FileSource(const std::string& path, uint64_t claimed, size_t step)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), claimed_(claimed), step_(step) {}
  ~FileSource() override { ::close(fd_); }
  Result<size_t> Read(char* buf, size_t n) override {
    size_t k = static_cast<size_t>(std::min<uint64_t>({n, step_, claimed_ - pos_}));
    ssize_t got = ::pread(fd_, buf, k, static_cast<off_t>(pos_));
    if (got < 0) return Internal("pread failed");
    pos_ += static_cast<uint64_t>(got);
    return static_cast<size_t>(got);
  }
  Result<FileSpan> NextFileSpan(size_t n) override {
    size_t k = static_cast<size_t>(std::min<uint64_t>({n, step_, claimed_ - pos_}));
    FileSpan span{fd_, pos_, k};
    pos_ += k;
    return span;
  }

 private:
  int fd_;
  uint64_t claimed_, pos_ = 0;
  size_t step_;
};

constexpr uint64_t kFileSize = 24ull << 20;

using testing::Connect;
using testing::SendAll;

using testing::Exchange;
using testing::Get;
using testing::HttpResult;
using testing::Reader;

bool IsPattern(const std::string& body, uint64_t total) {
  if (body.size() != total) return false;
  for (uint64_t i = 0; i < total; ++i) {
    if (body[i] != PatternByte(i)) return false;
  }
  return true;
}

class ServerTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions o = {}) {
    router_
        .Add("GET", "/blob/{size}",
             [](const Request& req) {
               Response r;
               uint64_t n = *ParseUint64(*req.Param("size"));
               auto delay = std::chrono::microseconds(
                   std::atoi(std::string(req.Query("delay_us").value_or("0")).c_str()));
               r.stream = std::make_unique<PatternSource>(n, 256 * 1024, delay);
               if (!req.Query("chunked")) r.content_length = n;
               return r;
             })
        .IgnoreError();
    router_
        .Add("GET", "/block",
             [this](const Request&) {
               Response r;
               r.stream = std::make_unique<BlockingSource>(&cancelled_);
               return r;
             })
        .IgnoreError();
    router_
        .Add("GET", "/fail",
             [](const Request&) {
               // 10 bytes, then the source fails: a body declared as 1000 bytes must come out
               // truncated.
               class Failing final : public BodySource {
                public:
                 Result<size_t> Read(char* buf, size_t) override {
                   if (done_) return Status(StatusCode::kDataLoss, "upstream checksum mismatch");
                   done_ = true;
                   std::memset(buf, 'f', 10);
                   return size_t{10};
                 }
                 bool done_ = false;
               };
               Response r;
               r.stream = std::make_unique<Failing>();
               r.content_length = 1000;
               return r;
             })
        .IgnoreError();
    file_ = ::testing::TempDir() + "/ferry-server-file-" + std::to_string(::getpid());
    {
      std::string bytes(kFileSize, '\0');
      for (uint64_t i = 0; i < kFileSize; ++i) bytes[i] = PatternByte(i);
      int fd = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
      ::close(fd);
    }
    router_
        .Add("GET", "/file/{size}",
             [this](const Request& req) {
               Response r;
               uint64_t n = *ParseUint64(*req.Param("size"));
               r.stream = std::make_unique<FileSource>(file_, n, 3u << 20);
               if (!req.Query("chunked")) r.content_length = n;
               return r;
             })
        .IgnoreError();
    router_.Add("POST", "/echo", [](const Request& req) { return TextResponse(200, req.body); })
        .IgnoreError();
    router_
        .Add("GET", "/show/{rest...}",
             [](const Request& req) {
               return TextResponse(200, req.path + "|" + std::string(*req.Param("rest")));
             })
        .IgnoreError();
    server_ = std::make_unique<Server>(std::move(o), router_);
    Status s = server_->Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
    port_ = server_->port();
    ASSERT_NE(port_, 0);
  }
  void TearDown() override {
    if (server_) server_->Shutdown(1s);
    if (!file_.empty()) ::unlink(file_.c_str());
  }

  Router router_;
  std::string file_;  // kFileSize pattern bytes, served by /file/{size}
  std::unique_ptr<Server> server_;
  uint16_t port_ = 0;
  std::atomic<int> cancelled_{0};
};

TEST_F(ServerTest, ServesHealthzMetricsAndRoutes) {
  StartServer();
  EXPECT_EQ(server_->url(), "http://127.0.0.1:" + std::to_string(port_));
  HttpResult h = Get(port_, "/healthz");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.body, "ok\n");
  EXPECT_EQ(Get(port_, "/nope").status, 404);
  HttpResult m = Get(port_, "/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_NE(m.body.find("ferry_http_requests_total{code=\"404\"} 1"), std::string::npos) << m.body;
  EXPECT_NE(m.body.find("ferry_http_connections_open"), std::string::npos);
}

TEST_F(ServerTest, StreamsSixtyFourMiBIntactFromASlowSource) {
  StartServer();
  constexpr uint64_t kSize = 64ull << 20;
  HttpResult r = Get(port_, "/blob/" + std::to_string(kSize) + "?delay_us=500");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-length"], std::to_string(kSize));
  EXPECT_TRUE(IsPattern(r.body, kSize));
  HttpResult c = Get(port_, "/blob/3000000?chunked=1");
  EXPECT_EQ(c.headers["transfer-encoding"], "chunked");
  EXPECT_TRUE(c.complete);
  EXPECT_TRUE(IsPattern(c.body, 3000000));
}

TEST_F(ServerTest, SlowClientAndBlockedSourceDoNotStallOthers) {
  ServerOptions o;
  o.io_threads = 1;  // the worst case: one I/O thread for everyone
  StartServer(std::move(o));
  int slow = Connect(port_);  // asks for 64 MiB and reads nothing
  SendAll(slow, "GET /blob/67108864 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  int blocked = Connect(port_);  // its source never produces a second byte
  SendAll(blocked, "GET /block HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::this_thread::sleep_for(300ms);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Get(port_, "/healthz").status, 200);
  EXPECT_TRUE(IsPattern(Get(port_, "/blob/1000000").body, 1000000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  close(slow);
  close(blocked);
}

TEST_F(ServerTest, SixteenConcurrentStreamsAreEachIntact) {
  StartServer();
  constexpr uint64_t kSize = 4ull << 20;
  std::atomic<int> good{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < 16; ++i) {
    clients.emplace_back([&] {
      HttpResult r = Get(port_, "/blob/" + std::to_string(kSize) + "?delay_us=2000");
      if (r.status == 200 && IsPattern(r.body, kSize)) good.fetch_add(1);
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(good.load(), 16);
}

TEST_F(ServerTest, KeepAliveAndHead) {
  StartServer();
  int fd = Connect(port_);
  Reader reader(fd);
  SendAll(fd, "HEAD /blob/5000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  HttpResult h = reader.Read(/*head=*/true);
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.headers["content-length"], "5000");
  SendAll(fd, "HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  HttpResult h2 = reader.Read(true);
  EXPECT_EQ(h2.headers["content-length"], "3");
  // The HEADs sent no body: the next response on the same connection parses cleanly.
  SendAll(fd, "GET /blob/5000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  HttpResult g = reader.Read();
  EXPECT_EQ(g.status, 200);
  EXPECT_TRUE(IsPattern(g.body, 5000));
  close(fd);
}

TEST_F(ServerTest, FileBodiesGoOutBySendfileIntactOnAKeptAliveConnection) {
  StartServer();
  int fd = Connect(port_);
  Reader reader(fd);
  for (uint64_t size : {kFileSize, uint64_t{1}, uint64_t{5000000}}) {
    SendAll(fd, "GET /file/" + std::to_string(size) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    HttpResult g = reader.Read();
    EXPECT_EQ(g.status, 200);
    EXPECT_TRUE(g.complete);
    EXPECT_TRUE(IsPattern(g.body, size)) << size;
  }
  SendAll(fd, "HEAD /file/5000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(reader.Read(/*head=*/true).headers["content-length"], "5000");
  close(fd);
  // Chunked framing needs the serializer: the same source is read with Read().
  HttpResult c = Get(port_, "/file/7000000?chunked=1");
  EXPECT_EQ(c.headers["transfer-encoding"], "chunked");
  EXPECT_TRUE(c.complete);
  EXPECT_TRUE(IsPattern(c.body, 7000000));
  HttpResult m = Get(port_, "/metrics");
  EXPECT_NE(m.body.find("ferry_http_response_body_bytes_total"), std::string::npos) << m.body;
}

TEST_F(ServerTest, AFileBodyThatEndsEarlyIsTruncatedAndAClientThatLeavesCostsNothing) {
  StartServer();
  HttpResult r = Get(port_, "/file/" + std::to_string(kFileSize + 1000));
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.body.size(), kFileSize);
  // A client that reads a little and closes: sendfile meets a closed peer (EPIPE, SIGPIPE
  // blocked in the workers), the stream ends, the server goes on.
  for (int i = 0; i < 4; ++i) {
    int fd = Connect(port_);
    SendAll(fd, "GET /file/" + std::to_string(kFileSize) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    char buf[4096];
    EXPECT_GT(recv(fd, buf, sizeof buf, 0), 0);
    close(fd);
  }
  bool dropped = false;
  for (int i = 0; i < 50 && !dropped; ++i) {
    std::this_thread::sleep_for(100ms);
    dropped = server_->metrics().GetGauge("ferry_http_streams_active", "").value() == 0;
  }
  EXPECT_TRUE(dropped);
  EXPECT_TRUE(IsPattern(Get(port_, "/file/100000").body, 100000));
}

TEST_F(ServerTest, ClientsThatStopReadingAFileBodyHoldNoWorker) {
  // The wait for a full socket buffer is the strand's, not a worker's: eight stuck clients on a
  // server with four workers leave it answering.
  ServerOptions o;
  o.max_workers = 4;
  StartServer(std::move(o));
  std::vector<int> stuck;
  for (int i = 0; i < 8; ++i) {
    stuck.push_back(Connect(port_));
    SendAll(stuck.back(),
            "GET /file/" + std::to_string(kFileSize) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  }
  std::this_thread::sleep_for(300ms);
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Get(port_, "/healthz").status, 200);
  EXPECT_TRUE(IsPattern(Get(port_, "/file/3000000").body, 3000000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  for (int fd : stuck) close(fd);
}

TEST_F(ServerTest, HeaderAndBodyLimits) {
  ServerOptions o;
  o.body_limit = 1 << 20;
  StartServer(std::move(o));
  HttpResult big_header = Exchange(port_, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " +
                                              std::string(20000, 'a') + "\r\n\r\n");
  EXPECT_EQ(big_header.status, 431);
  EXPECT_NE(big_header.body.find("exceed 16384 bytes"), std::string::npos);
  HttpResult big_body =
      Exchange(port_,
               "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               "Content-Length: 2000000\r\n\r\n" +
                   std::string(1000, 'b'));
  EXPECT_EQ(big_body.status, 413);
  EXPECT_EQ(big_body.headers["connection"], "close");
  HttpResult ok =
      Exchange(port_,
               "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: "
               "application/json\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(ok.body, "hello");
  EXPECT_EQ(Exchange(port_, "NOT HTTP AT ALL\r\n\r\n").status, 400);
}

TEST_F(ServerTest, RejectsTraversalInEveryEncoding) {
  StartServer();
  for (const char* t :
       {"/show/../etc/passwd", "/show/%2e%2e/x", "/show/%2E%2e/x", "/show/a%2fb",
        "/show/a%5c..%5cb", "/show//x", "http://evil/show/x", "/show/a%00b", "/show/.%2e/x"}) {
    HttpResult r = Get(port_, t);
    EXPECT_EQ(r.status, 400) << t;
    EXPECT_NE(r.body.find("\"error\""), std::string::npos) << t;
  }
  EXPECT_EQ(Get(port_, "/show/a%20b/c.d?q=1").body, "/show/a b/c.d|a b/c.d");
}

TEST_F(ServerTest, BearerTokens) {
  ServerOptions o;
  o.tokens = {"s3cret-one", "s3cret-two"};
  StartServer(std::move(o));
  HttpResult none = Get(port_, "/metrics");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.headers["www-authenticate"], "Bearer realm=\"ferry\"");
  HttpResult wrong = Get(port_, "/metrics", "Authorization: Bearer s3cret-on\r\n");
  EXPECT_EQ(wrong.status, 401);
  EXPECT_NE(wrong.headers["www-authenticate"].find("invalid_token"), std::string::npos);
  EXPECT_EQ(wrong.body.find("s3cret"), std::string::npos);
  EXPECT_EQ(Get(port_, "/metrics", "Authorization: Bearer s3cret-two\r\n").status, 200);
  EXPECT_EQ(Get(port_, "/healthz").status, 200);
}

TEST_F(ServerTest, ReadTokensCallOnlyReadRoutes) {
  router_
      .Add("POST", "/search", Access::kRead, [](const Request&) { return TextResponse(200, "r"); })
      .IgnoreError();
  ServerOptions o;
  o.tokens = {"writer-secret"};
  o.read_tokens = {"reader-secret"};
  StartServer(std::move(o));
  const std::string reader = "Authorization: Bearer reader-secret\r\n";
  const std::string writer = "Authorization: Bearer writer-secret\r\n";
  auto post = [&](const std::string& target, const std::string& auth) {
    return Exchange(
        port_, "POST " + target +
                   " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 2\r\n" +
                   auth + "\r\nhi");
  };
  EXPECT_EQ(Get(port_, "/show/a", reader).status, 200);
  EXPECT_EQ(post("/search", reader).status, 200);  // a POST registered as a read
  HttpResult denied = post("/echo", reader);       // a POST that writes
  EXPECT_EQ(denied.status, 403);
  EXPECT_NE(denied.body.find("\"error_code\":\"PERMISSION_DENIED\""), std::string::npos);
  EXPECT_EQ(denied.body.find("reader-secret"), std::string::npos);
  EXPECT_EQ(post("/echo", writer).status, 200);
  EXPECT_EQ(post("/echo", "").status, 401);
  EXPECT_EQ(Get(port_, "/nothing-here", reader).status, 404);
}

TEST_F(ServerTest, ShutdownLetsAStreamInFlightFinish) {
  StartServer();
  constexpr uint64_t kSize = 16ull << 20;  // 64 chunks x 10 ms: ~0.7 s
  int fd = Connect(port_);
  SendAll(fd, "GET /blob/" + std::to_string(kSize) +
                  "?delay_us=10000 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  int idle = Connect(port_);  // kept alive, between requests: closed at once
  std::this_thread::sleep_for(100ms);
  auto start = std::chrono::steady_clock::now();
  std::thread stopper([&] { server_->Shutdown(20s); });
  Reader reader(fd);
  HttpResult r = reader.Read();
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_TRUE(IsPattern(r.body, kSize));
  char c;
  EXPECT_EQ(recv(fd, &c, 1, 0), 0);    // closed after the response (its header said keep-alive)
  EXPECT_EQ(recv(idle, &c, 1, 0), 0);  // closed by the server
  EXPECT_LT(Connect(port_), 0);        // no longer accepting
  close(fd);
  close(idle);
}

TEST_F(ServerTest, ShutdownAnswersARequestThatHadBegun) {
  StartServer();
  int fd = Connect(port_);
  SendAll(fd, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n");  // the blank line is still missing
  std::this_thread::sleep_for(100ms);
  std::thread stopper([&] { server_->Shutdown(10s); });
  std::this_thread::sleep_for(200ms);
  SendAll(fd, "\r\n");
  HttpResult r = Reader(fd).Read();
  stopper.join();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok\n");
  EXPECT_EQ(r.headers["connection"], "close");
  close(fd);
}

TEST_F(ServerTest, ShutdownDeadlineAbortsAndCancelsBlockedSources) {
  StartServer();
  int fd = Connect(port_);
  SendAll(fd, "GET /block HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::this_thread::sleep_for(200ms);
  auto start = std::chrono::steady_clock::now();
  server_->Shutdown(200ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(cancelled_.load(), 1);
  HttpResult r = Reader(fd).Read();
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);  // truncated: no last chunk
  close(fd);
}

TEST_F(ServerTest, FailingSourceTruncatesTheBody) {
  StartServer();
  HttpResult r = Get(port_, "/fail");
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.body, std::string(10, 'f'));
  EXPECT_EQ(Get(port_, "/healthz").status, 200);
}

TEST_F(ServerTest, ReadAndWriteTimeoutsCloseTheConnection) {
  ServerOptions o;
  o.read_timeout = 300ms;
  o.write_timeout = 300ms;
  StartServer(std::move(o));
  int silent = Connect(port_);  // sends nothing
  int stuck = Connect(port_);   // asks for 64 MiB and never reads
  SendAll(stuck, "GET /blob/67108864 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  int stuck_file = Connect(port_);  // the same for a body sent by sendfile
  SendAll(stuck_file,
          "GET /file/" + std::to_string(kFileSize) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  auto start = std::chrono::steady_clock::now();
  char c;
  EXPECT_EQ(recv(silent, &c, 1, 0), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  // The stuck stream's writes time out: the server drops the stream.
  bool dropped = false;
  for (int i = 0; i < 50 && !dropped; ++i) {
    std::this_thread::sleep_for(100ms);
    dropped = server_->metrics().GetGauge("ferry_http_streams_active", "").value() == 0;
  }
  EXPECT_TRUE(dropped);
  close(silent);
  close(stuck);
  close(stuck_file);
}

TEST(ServerStartTest, RefusesNonLoopbackUnlessAllowedAndBadHosts) {
  Router router;
  ServerOptions o;
  o.host = "0.0.0.0";
  Server s(o, router);
  Status st = s.Start();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("--allow-remote"), std::string::npos);
  // Remote without any token: refused unless anonymous access is asked for.
  ServerOptions open;
  open.host = "0.0.0.0";
  open.allow_remote = true;
  Router router3;
  Status anon = Server(open, router3).Start();
  EXPECT_EQ(anon.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(anon.message().find("--allow-anonymous"), std::string::npos);
  open.allow_anonymous = true;
  Router router4;
  Server allowed(open, router4);
  EXPECT_TRUE(allowed.Start().ok());
  allowed.Shutdown(std::chrono::milliseconds(0));
  open.allow_anonymous = false;
  open.read_tokens = {"r"};
  Router router5;
  Server with_token(open, router5);
  EXPECT_TRUE(with_token.Start().ok());
  with_token.Shutdown(std::chrono::milliseconds(0));
  ServerOptions bad;
  bad.host = "not-an-ip";
  Router router2;
  EXPECT_EQ(Server(bad, router2).Start().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ferry::server
