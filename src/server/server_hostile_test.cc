// The server against hostile clients, over real sockets: the request path's limits (headers,
// trailers, chunk headers, transfer codings, bodies of clients without a token) and a fuzzer
// that throws mutated requests at a live server and checks after each batch that it still
// answers (issue 28: one chunked request with a 70,000-byte trailer aborted ferry serve).

#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "server/server.h"
#include "server/socket_test_util.h"

namespace ferry::server {
namespace {

using namespace std::chrono_literals;
using testing::Connect;
using testing::Exchange;
using testing::Get;
using testing::HttpResult;
using testing::SendAll;

class HostileClientTest : public ::testing::Test {
 protected:
  void StartServer(ServerOptions o = {}) {
    router_.Add("POST", "/echo", [](const Request& req) { return TextResponse(200, req.body); })
        .IgnoreError();
    router_
        .AddStreaming("PUT", "/sink",
                      [](const Request& req) {
                        char buf[65536];
                        uint64_t total = 0;
                        for (;;) {
                          auto n = req.body_stream->Read(buf, sizeof buf);
                          if (!n.ok()) return ErrorResponse(n.status());
                          if (*n == 0) break;
                          total += *n;
                        }
                        return TextResponse(200, std::to_string(total));
                      })
        .IgnoreError();
    o.read_timeout = 2s;
    server_ = std::make_unique<Server>(std::move(o), router_);
    ASSERT_TRUE(server_->Start().ok());
    port_ = server_->port();
  }
  void TearDown() override {
    if (server_) server_->Shutdown(1s);
  }
  bool Alive() { return Get(port_, "/healthz").status == 200; }

  Router router_;
  std::unique_ptr<Server> server_;
  uint16_t port_ = 0;
};

std::string Chunked(std::string_view path, std::string_view trailer,
                    std::string_view method = "POST") {
  return std::string(method) + " " + std::string(path) +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
         "application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n" +
         std::string(trailer) + "\r\n";
}

TEST_F(HostileClientTest, TrailersAreHeldToTheHeaderLimitAndNeverKillTheServer) {
  StartServer();
  // The report: a 70,000-byte trailer field aborted the process (Beast threw length_error).
  for (int i = 0; i < 4; ++i) {
    HttpResult r = Exchange(port_, Chunked("/echo", "X: " + std::string(70000, 'a') + "\r\n"));
    EXPECT_EQ(r.status, 431);
    ASSERT_TRUE(Alive()) << "try " << i;
  }
  // 17 KB, over the 16 KiB header limit; also many small fields.
  EXPECT_EQ(Exchange(port_, Chunked("/echo", "X: " + std::string(17000, 'a') + "\r\n")).status,
            431);
  std::string many;
  for (int i = 0; i < 2000; ++i) many += "X-" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(Exchange(port_, Chunked("/echo", many)).status, 431);
  // A small trailer is fine, on buffered and streaming routes alike.
  HttpResult ok = Exchange(port_, Chunked("/echo", "X-Checksum: abc\r\n"));
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, "hello");
  EXPECT_EQ(Exchange(port_, Chunked("/sink", "X-Checksum: abc\r\n", "PUT")).body, "5");
  EXPECT_NE(
      Exchange(port_, Chunked("/sink", "X: " + std::string(70000, 'a') + "\r\n", "PUT")).status,
      200);
  EXPECT_TRUE(Alive());
}

TEST_F(HostileClientTest, OnlyChunkedIsATransferCodingAndNeverBesideALength) {
  StartServer();
  for (std::string te : {"xchunked", "chunked, gzip", "gzip", "identity",
                         "chunked\r\n"
                         "Transfer-Encoding: x"}) {
    HttpResult r = Exchange(port_,
                            "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                            "application/json\r\nTransfer-Encoding: " +
                                te + "\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
    EXPECT_TRUE(r.status == 501 || r.status == 400) << te << ": " << r.status;
  }
  HttpResult both = Exchange(port_,
                             "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                             "application/json\r\nContent-Length: 5\r\nTransfer-Encoding: "
                             "chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
  EXPECT_EQ(both.status, 400);
  // A chunk header past the limits (a size of 2^64, a long extension) is refused.
  for (const std::string& chunk : std::vector<std::string>{
           "10000000000000000\r\n", "5;" + std::string(100000, 'e') + "\r\n"}) {
    HttpResult r = Exchange(port_,
                            "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                            "application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                chunk + "hello\r\n0\r\n\r\n");
    EXPECT_GE(r.status, 400) << chunk.substr(0, 30);
  }
  EXPECT_TRUE(Alive());
}

TEST_F(HostileClientTest, ABodyWithoutATokenIsRefusedBeforeItIsRead) {
  ServerOptions o;
  o.tokens = {"writer"};
  StartServer(std::move(o));
  // The header alone: the 401 comes at once, while the client has sent none of its 16 MiB.
  int fd = Connect(port_);
  SendAll(fd,
          "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
          "Content-Length: 16777216\r\n\r\n");
  testing::Reader reader(fd);
  auto started = std::chrono::steady_clock::now();
  HttpResult r = reader.Read();
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.headers["connection"], "close");
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1s);
  close(fd);
  // 40 such clients at once leave the server's memory alone (each body is dropped unread).
  std::vector<int> fds;
  for (int i = 0; i < 40; ++i) {
    int c = Connect(port_);
    SendAll(c,
            "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Content-Length: 16777216\r\n\r\n" +
                std::string(256 * 1024, 'x'));
    fds.push_back(c);
  }
  for (int c : fds) {
    testing::Reader rd(c);
    EXPECT_EQ(rd.Read().status, 401);
    close(c);
  }
  EXPECT_TRUE(Alive());
  // With the token the body is read as before.
  HttpResult ok = Exchange(port_,
                           "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer writer"
                           "\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi");
  EXPECT_EQ(ok.body, "hi");
}

TEST_F(HostileClientTest, EveryAnswerCarriesTheBrowserDefences) {
  StartServer();
  HttpResult r = Get(port_, "/healthz");
  EXPECT_EQ(r.headers["x-content-type-options"], "nosniff");
  EXPECT_NE(r.headers["content-security-policy"].find("sandbox"), std::string::npos);
  EXPECT_EQ(r.headers["cross-origin-resource-policy"], "same-origin");
  EXPECT_EQ(Get(port_, "/nope").headers["x-content-type-options"], "nosniff");
}

// Mutations of valid requests: random bytes flipped, inserted or cut; random chunk sizes,
// extensions and trailers; odd lengths and codings; pipelined requests; abrupt closes. The
// server must answer /healthz after every batch. Seeded: a failure names the seed and the batch.
TEST_F(HostileClientTest, FuzzedRequestsNeverStopTheServer) {
  ServerOptions o;
  o.tokens = {"writer"};
  o.read_tokens = {"reader"};
  o.areas = {{.prefix = "/echo", .anonymous_read = true}};
  StartServer(std::move(o));
  const uint32_t seed = 20261204;
  std::mt19937 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const std::vector<std::string> seeds = {
      Chunked("/echo", "X-A: b\r\n"),
      Chunked("/echo", ""),
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
      "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer writer\r\nContent-Length: "
      "5\r\n\r\nhello",
      "PUT /sink HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic dTp3cml0ZXI=\r\n"
      "Transfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\n",
      "GET /echo?a=%zz&b=%00 HTTP/1.1\r\nHost: [::1]:1\r\nCookie: ferry_token=v1.00\r\n\r\n",
      "POST /api/ferry/signin HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer reader\r\n"
      "Origin: http://127.0.0.1:1\r\nContent-Length: 0\r\n\r\n",
  };
  const std::vector<std::string> pieces = {"\r\n",
                                           "\r\n\r\n",
                                           ":",
                                           " ",
                                           "\0",
                                           "\x80",
                                           "%",
                                           "../",
                                           "Transfer-Encoding: chunked\r\n",
                                           "Content-Length: 99999999999999999999\r\n",
                                           "Content-Length: -1\r\n",
                                           "0\r\n\r\n",
                                           "ffffffffffffffff\r\n",
                                           ";",
                                           "Host: evil\r\n",
                                           "Expect: 100-continue\r\n",
                                           "Authorization: Basic %%%\r\n",
                                           "X: " + std::string(20000, 'y') + "\r\n",
                                           std::string(70000, 'z'),
                                           "GET / HTTP/1.1\r\n\r\n",
                                           "HTTP/1.0",
                                           "\t"};
  constexpr int kBatches = 60, kPerBatch = 24;
  for (int batch = 0; batch < kBatches; ++batch) {
    std::vector<std::thread> clients;
    for (int c = 0; c < kPerBatch; ++c) {
      std::string req = seeds[pick(seeds.size())];
      int edits = 1 + static_cast<int>(pick(6));
      for (int e = 0; e < edits && !req.empty(); ++e) {
        size_t at = pick(req.size() + 1);
        switch (pick(4)) {
          case 0:
            if (at < req.size()) req[at] = static_cast<char>(rng());
            break;
          case 1:
            req.insert(at, pieces[pick(pieces.size())]);
            break;
          case 2:
            req.erase(at, pick(64));
            break;
          default:
            req += seeds[pick(seeds.size())];  // pipelined
        }
      }
      const bool close_early = pick(5) == 0;
      clients.emplace_back([this, req = std::move(req), close_early] {
        int fd = Connect(port_);
        if (fd < 0) return;
        SendAll(fd, close_early ? req.substr(0, req.size() / 2) : req);
        if (!close_early) {
          shutdown(fd, SHUT_WR);
          char buf[65536];
          pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
          while (poll(&p, 1, 3000) > 0 && recv(fd, buf, sizeof buf, 0) > 0) {
          }
        }
        close(fd);
      });
    }
    for (auto& t : clients) t.join();
    ASSERT_TRUE(Alive()) << "seed " << seed << ", batch " << batch;
  }
  // Nothing got as far as the exception barrier: every limit answered first.
  EXPECT_NE(server_->metrics().RenderPrometheus().find("ferry_http_connection_exceptions_total 0"),
            std::string::npos);
}

}  // namespace
}  // namespace ferry::server
