// Streaming request bodies (Router::AddStreaming) with real sockets: the handler pulls the body
// in chunks, sees chunked bodies decoded, gets an error when the client goes away mid-body, and
// "Expect: 100-continue" is answered before the body is read.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "server/server.h"
#include "server/socket_test_util.h"

namespace ferry::server {
namespace {

using namespace std::chrono_literals;

char PatternByte(uint64_t i) { return static_cast<char>((i * 131 + (i >> 10)) & 0xff); }

using testing::Connect;
using testing::SendAll;

// Reads until `marker` has arrived (or EOF / timeout); returns everything read.
std::string ReadUntil(int fd, std::string_view marker) {
  std::string out;
  char tmp[4096];
  while (out.find(marker) == std::string::npos) {
    ssize_t n = recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) break;
    out.append(tmp, static_cast<size_t>(n));
  }
  return out;
}

class StreamingBodyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Reads the whole body 64 KiB at a time and answers "<bytes>:<pattern ok>".
    ASSERT_TRUE(router_
                    .AddStreaming("PUT", "/sink",
                                  [this](const Request& req) {
                                    std::vector<char> buf(64 * 1024);
                                    uint64_t total = 0;
                                    bool pattern = true;
                                    reads_ = 0;
                                    while (true) {
                                      Result<size_t> n =
                                          req.body_stream->Read(buf.data(), buf.size());
                                      if (!n.ok()) {
                                        Record(n.status());
                                        return ErrorResponse(n.status());
                                      }
                                      if (*n == 0) break;
                                      ++reads_;
                                      for (size_t i = 0; i < *n; ++i) {
                                        pattern &= buf[i] == PatternByte(total + i);
                                      }
                                      total += *n;
                                    }
                                    Record(Status());
                                    return TextResponse(200, std::to_string(total) + ":" +
                                                                 (pattern ? "ok" : "bad"));
                                  })
                    .ok());
    // Answers without reading the body.
    ASSERT_TRUE(
        router_
            .AddStreaming("PUT", "/reject", [](const Request&) { return ErrorResponse(403, "no"); })
            .ok());
    ASSERT_TRUE(
        router_.Add("PUT", "/small", [](const Request& r) { return TextResponse(200, r.body); })
            .ok());
    ServerOptions o;
    o.body_limit = 1024;  // streaming routes ignore it
    server_ = std::make_unique<Server>(std::move(o), router_);
    ASSERT_TRUE(server_->Start().ok());
    port_ = server_->port();
  }
  void TearDown() override { server_->Shutdown(1s); }

  void Record(Status s) {
    std::lock_guard lock(mu_);
    results_.push_back(std::move(s));
    cv_.notify_all();
  }
  Status WaitResult() {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, 10s, [this] { return !results_.empty(); });
    if (results_.empty()) return Internal("no result");
    return results_.front();
  }

  Router router_;
  std::unique_ptr<Server> server_;
  uint16_t port_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Status> results_;
  std::atomic<int> reads_{0};
};

std::string Pattern(uint64_t from, uint64_t n) {
  std::string s(n, '\0');
  for (uint64_t i = 0; i < n; ++i) s[i] = PatternByte(from + i);
  return s;
}

TEST_F(StreamingBodyTest, HandlerPullsABodyFarAboveTheLimitThenTheConnectionIsReused) {
  constexpr uint64_t kSize = 8ull << 20;
  int fd = Connect(port_);
  SendAll(fd, "PUT /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(kSize) +
                  "\r\n\r\n");
  for (uint64_t off = 0; off < kSize; off += 1 << 20) SendAll(fd, Pattern(off, 1 << 20));
  std::string first = ReadUntil(fd, std::to_string(kSize) + ":ok");
  EXPECT_NE(first.find("HTTP/1.1 200"), std::string::npos) << first;
  EXPECT_NE(first.find(std::to_string(kSize) + ":ok"), std::string::npos) << first;
  // Each pull fills the handler's 64 KiB buffer (one hand-off per buffer, not per socket read).
  EXPECT_EQ(reads_.load(), static_cast<int>(kSize / (64 * 1024)));
  // Kept alive: the next request on the same connection is read normally.
  SendAll(fd, "PUT /small HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_NE(ReadUntil(fd, "hello").find("hello"), std::string::npos);
  close(fd);
}

TEST_F(StreamingBodyTest, BodyEndsAtContentLengthWhenTheNextRequestCameInTheSameSegment) {
  // The body (read from the socket, not by the parser) must stop exactly at Content-Length:
  // the pipelined request behind it, partly already buffered with the header, is read next.
  int fd = Connect(port_);
  SendAll(fd, "PUT /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3000\r\n\r\n" +
                  Pattern(0, 3000) +
                  "PUT /small HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello" +
                  "PUT /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n");
  std::string r = ReadUntil(fd, "\r\n\r\n0:ok");  // the last answer ("3000:ok" is not it)
  for (std::string_view want : {"3000:ok", "hello"}) {
    EXPECT_NE(r.find(want), std::string::npos) << r;
  }
  EXPECT_NE(r.rfind("\r\n\r\n0:ok"), std::string::npos) << r;
  close(fd);
}

TEST_F(StreamingBodyTest, ChunkedBodyArrivesDecoded) {
  int fd = Connect(port_);
  std::string body = Pattern(0, 3000);
  SendAll(fd, "PUT /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  SendAll(fd, "3e8\r\n" + body.substr(0, 1000) + "\r\n");
  std::this_thread::sleep_for(50ms);
  SendAll(fd, "7d0\r\n" + body.substr(1000) + "\r\n0\r\n\r\n");
  std::string r = ReadUntil(fd, "3000:");
  EXPECT_NE(r.find("3000:ok"), std::string::npos) << r;
  close(fd);
}

TEST_F(StreamingBodyTest, ClientGoneMidBodyIsAnErrorForTheHandler) {
  int fd = Connect(port_);
  SendAll(fd, "PUT /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n" +
                  Pattern(0, 5000));
  std::this_thread::sleep_for(100ms);
  close(fd);
  Status s = WaitResult();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("closed the connection 995000 bytes before its end"),
            std::string::npos)
      << s.message();
}

TEST_F(StreamingBodyTest, ExpectContinueIsAnsweredWhenTheHandlerReads) {
  int fd = Connect(port_);
  SendAll(fd,
          "PUT /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\nExpect: "
          "100-continue\r\n\r\n");
  std::string cont = ReadUntil(fd, "\r\n\r\n");
  EXPECT_EQ(cont.rfind("HTTP/1.1 100 Continue", 0), 0u) << cont;
  SendAll(fd, Pattern(0, 10));
  EXPECT_NE(ReadUntil(fd, "10:ok").find("10:ok"), std::string::npos);
  close(fd);
}

TEST_F(StreamingBodyTest, UnreadBodyClosesTheConnectionAfterTheAnswer) {
  int fd = Connect(port_);
  SendAll(fd, "PUT /reject HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\nabc");
  std::string r = ReadUntil(fd, "\"no\"");
  EXPECT_NE(r.find("HTTP/1.1 403"), std::string::npos) << r;
  EXPECT_NE(r.find("Connection: close"), std::string::npos) << r;
  close(fd);
  // Routes added with Add() keep their limit.
  fd = Connect(port_);
  SendAll(fd, "PUT /small HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5000\r\n\r\n");
  EXPECT_NE(ReadUntil(fd, "\r\n\r\n").find("HTTP/1.1 413"), std::string::npos);
  close(fd);
}

TEST_F(StreamingBodyTest, ExpectContinueThenAMultiMiBBodyArrivesWhole) {
  // The first pull goes through the strand (it sends "100 Continue"); the later ones read the
  // socket on the handler's own thread.
  constexpr uint64_t kSize = 3ull << 20;
  int fd = Connect(port_);
  SendAll(fd, "PUT /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + std::to_string(kSize) +
                  "\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(ReadUntil(fd, "\r\n\r\n").rfind("HTTP/1.1 100 Continue", 0), 0u);
  for (uint64_t off = 0; off < kSize; off += 1 << 20) SendAll(fd, Pattern(off, 1 << 20));
  EXPECT_NE(ReadUntil(fd, std::to_string(kSize) + ":").find(std::to_string(kSize) + ":ok"),
            std::string::npos);
  close(fd);
}

TEST_F(StreamingBodyTest, ShutdownEndsAHandlerWaitingForTheBody) {
  int fd = Connect(port_);
  SendAll(fd, "PUT /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000\r\n\r\n" +
                  Pattern(0, 5000));
  std::this_thread::sleep_for(100ms);  // the handler now waits for the rest
  auto t0 = std::chrono::steady_clock::now();
  server_->Shutdown(200ms);
  Status s = WaitResult();
  EXPECT_FALSE(s.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  close(fd);
}

TEST(StreamingBodyTimeoutTest, AClientThatStopsSendingTimesOut) {
  Router router;
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Status> result;
  ASSERT_TRUE(router
                  .AddStreaming("PUT", "/sink",
                                [&](const Request& req) {
                                  std::vector<char> buf(1 << 20);
                                  Status s;
                                  while (true) {
                                    auto n = req.body_stream->Read(buf.data(), buf.size());
                                    if (!n.ok()) s = n.status();
                                    if (!n.ok() || *n == 0) break;
                                  }
                                  std::lock_guard lock(mu);
                                  result = s;
                                  cv.notify_all();
                                  return ErrorResponse(s);
                                })
                  .ok());
  ServerOptions o;
  o.read_timeout = 300ms;
  Server server(std::move(o), router);
  ASSERT_TRUE(server.Start().ok());
  int fd = Connect(server.port());
  SendAll(fd, "PUT /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n");
  std::this_thread::sleep_for(100ms);
  SendAll(fd, Pattern(0, 1000));  // then nothing more
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, 5s, [&] { return result.has_value(); }));
  EXPECT_NE(result->message().find("timed out"), std::string::npos) << result->message();
  lock.unlock();
  close(fd);
  server.Shutdown(1s);
}

}  // namespace
}  // namespace ferry::server
